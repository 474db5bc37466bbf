-- SPDX-License-Identifier: MIT
-- oncehook schema, version 4: events that failed, and events to come.
--
-- An event's status: received (claimed, its actions not run yet: the
-- deferred mode), processed, failed (its actions failed; parked after
-- ONCEHOOK_<NAME>_PARK_AFTER attempts, kept with its payload for
-- "oncehook replay"), dead (given up after the most attempts).  attempts
-- counts the runs of its actions, last_error says why the last one
-- failed, next_at is when it may be run again.  SQLite cannot change a
-- CHECK constraint in place: the table is made again, every row kept
-- (the existing ones are processed, after one attempt).
CREATE TABLE events_v4 (
	id		INTEGER PRIMARY KEY,
	endpoint	TEXT NOT NULL,
	key		TEXT NOT NULL,
	type		TEXT,
	payload_hash	TEXT NOT NULL,
	payload		TEXT NOT NULL,
	status		TEXT NOT NULL DEFAULT 'processed'
			CHECK (status IN ('received', 'processed', 'failed',
			    'dead')),
	received_at	INTEGER NOT NULL,
	processed_at	INTEGER,		-- NULL until processed
	expires_at	INTEGER,		-- NULL: kept forever
	attempts	INTEGER NOT NULL DEFAULT 1,
	last_error	TEXT,
	next_at		INTEGER,
	UNIQUE (endpoint, key)
);
INSERT INTO events_v4 (id, endpoint, key, type, payload_hash, payload,
    status, received_at, processed_at, expires_at, attempts)
    SELECT id, endpoint, key, type, payload_hash, payload, status,
    received_at, processed_at, expires_at, 1 FROM events;
DROP TABLE events;
ALTER TABLE events_v4 RENAME TO events;
CREATE INDEX events_expires_at ON events (expires_at)
	WHERE expires_at IS NOT NULL;
CREATE INDEX events_endpoint_payload ON events (endpoint, payload_hash);
-- The events not processed, for replay, work, list --status and stats.
CREATE INDEX events_pending ON events (status, next_at)
	WHERE status <> 'processed';

-- Consecutive failed attempts of a key not yet recorded: written only
-- after an action failed (never on the way to success), deleted when
-- the event is parked.
CREATE TABLE IF NOT EXISTS failures (
	endpoint	TEXT NOT NULL,
	key		TEXT NOT NULL,
	attempts	INTEGER NOT NULL,
	last_error	TEXT,
	first_at	INTEGER NOT NULL,
	last_at		INTEGER NOT NULL,
	PRIMARY KEY (endpoint, key)
) WITHOUT ROWID;
