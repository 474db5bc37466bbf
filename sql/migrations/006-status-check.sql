-- SPDX-License-Identifier: MIT
-- oncehook schema, version 6: the status CHECK without a temporary table.
--
-- SQLite codes "x IN (list)" of more than two constants as a temporary
-- b-tree that it builds again each time the statement runs: version 4's
-- CHECK (status IN (four values)) built one on every insert of an event
-- and every update of its status.  The same rule as a chain of
-- comparisons builds nothing.  SQLite cannot change a CHECK constraint
-- in place: the table is made again, every row kept as it was.
CREATE TABLE events_v6 (
	id		INTEGER PRIMARY KEY,
	endpoint	TEXT NOT NULL,
	key		TEXT NOT NULL,
	type		TEXT,
	payload_hash	TEXT NOT NULL,
	payload		TEXT NOT NULL,
	status		TEXT NOT NULL DEFAULT 'processed'
			CHECK (status = 'received' OR status = 'processed'
			    OR status = 'failed' OR status = 'dead'),
	received_at	INTEGER NOT NULL,
	processed_at	INTEGER,		-- NULL until processed
	expires_at	INTEGER,		-- NULL: kept forever
	attempts	INTEGER NOT NULL DEFAULT 1,
	last_error	TEXT,
	next_at		INTEGER,
	UNIQUE (endpoint, key)
);
INSERT INTO events_v6 (id, endpoint, key, type, payload_hash, payload,
    status, received_at, processed_at, expires_at, attempts, last_error,
    next_at)
    SELECT id, endpoint, key, type, payload_hash, payload, status,
    received_at, processed_at, expires_at, attempts, last_error, next_at
    FROM events;
DROP TABLE events;
ALTER TABLE events_v6 RENAME TO events;
CREATE INDEX events_expires_at ON events (expires_at)
	WHERE expires_at IS NOT NULL;
CREATE INDEX events_endpoint_payload ON events (endpoint, payload_hash);
CREATE INDEX events_pending ON events (status, next_at)
	WHERE status <> 'processed';
