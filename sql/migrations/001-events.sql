-- SPDX-License-Identifier: MIT
-- oncehook schema, version 1: the event record.
--
-- One row per (endpoint, key): the UNIQUE constraint is the claim.  A row
-- exists only if the event's actions committed with it, in one
-- transaction.  Times are Unix seconds (datetime(x, 'unixepoch') shows
-- them).  Applied by "oncehook init" inside one transaction, which then
-- sets PRAGMA user_version to this file's number.

CREATE TABLE events (
	id		INTEGER PRIMARY KEY,
	endpoint	TEXT NOT NULL,		-- endpoint name ("default" if unnamed)
	key		TEXT NOT NULL,		-- idempotency key
	type		TEXT,			-- event type; NULL if the body had none
	payload_hash	TEXT NOT NULL,		-- SHA-256 hex of the canonical JSON
	payload		TEXT NOT NULL,		-- the body as received
	status		TEXT NOT NULL DEFAULT 'processed'
			CHECK (status IN ('processed')),
	received_at	INTEGER NOT NULL,
	processed_at	INTEGER NOT NULL,
	expires_at	INTEGER,		-- NULL: kept forever
	UNIQUE (endpoint, key)
);

CREATE INDEX events_expires_at ON events (expires_at)
	WHERE expires_at IS NOT NULL;
CREATE INDEX events_received_at ON events (received_at);

-- A known key that arrived with another payload: answered 422, never
-- processed, kept here for the operator.
CREATE TABLE conflicts (
	id		INTEGER PRIMARY KEY,
	endpoint	TEXT NOT NULL,
	key		TEXT NOT NULL,
	payload_hash	TEXT NOT NULL,		-- the rejected payload's hash
	received_at	INTEGER NOT NULL
);

CREATE INDEX conflicts_endpoint_key ON conflicts (endpoint, key);
