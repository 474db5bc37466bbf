-- SPDX-License-Identifier: MIT
-- oncehook schema, version 5: the outbox (side effects after the commit).
--
-- An action inserts (topic, payload); the row commits with the event, so
-- a side effect is scheduled exactly when its effect happened.  The rest
-- is oncehook's: the row's stable id (the webhook-id a receiver
-- deduplicates on), the endpoint and key of the event whose actions
-- wrote it, the time, and the delivery's state, written by "oncehook
-- deliver" only.  The id is ob_ and 24 random hex digits (96 bits: none
-- repeats), written by oncehook's own trigger after the insert, so no
-- action can choose one; stored, so it stays the row's through every
-- retry, a restore from a backup or a copy (no index: nothing looks a
-- row up by it in a hurry).
-- oncehook_event() is a function oncehook's own connection defines: it
-- names the event whose actions are running, and is NULL otherwise, so
-- a row can be written by an action only (the sqlite3 shell has no such
-- function: it may read the outbox, not write it).
CREATE TABLE outbox (
	seq		INTEGER PRIMARY KEY,	-- the order they were written
	id		TEXT,		-- set by outbox_id, below
	-- what a variable can name (ONCEHOOK_OUTBOX_<TOPIC>_URL)
	topic		TEXT NOT NULL CHECK (length(topic) BETWEEN 1 AND 128)
			CHECK (topic NOT GLOB '*[^A-Za-z0-9._-]*'),
	payload		TEXT NOT NULL CHECK (typeof(payload) = 'text'),
	endpoint	TEXT NOT NULL DEFAULT (oncehook_event('endpoint')),
	key		TEXT NOT NULL DEFAULT (oncehook_event('key')),
	created_at	INTEGER NOT NULL DEFAULT (oncehook_event('time')),
	status		TEXT NOT NULL DEFAULT 'pending'
			CHECK (status IN ('pending', 'delivered', 'dead')),
	attempts	INTEGER NOT NULL DEFAULT 0,
	-- due at; while an attempt is under way, the end of its lease
	next_at		INTEGER NOT NULL DEFAULT (oncehook_event('time')),
	delivered_at	INTEGER,
	last_error	TEXT,
	lease		INTEGER		-- the attempt under way: a random token
);
-- What is due, oldest first.  (No other index: each row an action writes
-- costs its table page and this index's; show by id or by event reads
-- the table through, as prune does.)
CREATE INDEX outbox_due ON outbox (next_at) WHERE status = 'pending';

-- An action writes the topic and the payload, nothing else: a row that
-- names another event, says it was delivered, chooses its id or its
-- number (NEW.seq is -1 when SQLite picks it), or would take another
-- row's place (INSERT OR REPLACE) is refused, and with it the event's
-- whole transaction.  (The guard keeps
-- actions from dropping this trigger, and from updating or deleting
-- rows: action.c.)
CREATE TRIGGER outbox_insert BEFORE INSERT ON outbox
WHEN oncehook_event('endpoint') IS NULL
    OR NEW.endpoint IS NOT oncehook_event('endpoint')
    OR NEW.key IS NOT oncehook_event('key')
    OR NEW.created_at IS NOT oncehook_event('time')
    OR NEW.next_at IS NOT NEW.created_at
    OR NEW.status IS NOT 'pending' OR NEW.attempts IS NOT 0
    OR NEW.delivered_at IS NOT NULL OR NEW.last_error IS NOT NULL
    OR NEW.lease IS NOT NULL OR NEW.id IS NOT NULL
    OR NEW.seq IS NOT -1
BEGIN
	SELECT RAISE(ABORT, 'outbox: an action writes topic and payload only, from an event''s actions');
END;

-- The row's id, drawn once.  The guard lets this trigger, and nothing
-- else an action runs, update the outbox (action.c).
CREATE TRIGGER outbox_id AFTER INSERT ON outbox
BEGIN
	UPDATE outbox SET id = 'ob_' || lower(hex(randomblob(12)))
	    WHERE seq = NEW.seq;
END;
