-- SPDX-License-Identifier: MIT
-- oncehook schema, version 7: the outbox's status CHECK without a
-- temporary table.
--
-- As version 6 did for events: version 5's CHECK (status IN (three
-- values)) made SQLite build a temporary b-tree on every row an action
-- writes to the outbox.  The same rule as a chain of comparisons builds
-- none.  The table is made again, every row kept as it was (seq and id
-- too), then its index and oncehook's two triggers, as version 5 made
-- them.
CREATE TABLE outbox_v7 (
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
			CHECK (status = 'pending' OR status = 'delivered'
			    OR status = 'dead'),
	attempts	INTEGER NOT NULL DEFAULT 0,
	-- due at; while an attempt is under way, the end of its lease
	next_at		INTEGER NOT NULL DEFAULT (oncehook_event('time')),
	delivered_at	INTEGER,
	last_error	TEXT,
	lease		INTEGER		-- the attempt under way: a random token
);
INSERT INTO outbox_v7 (seq, id, topic, payload, endpoint, key,
    created_at, status, attempts, next_at, delivered_at, last_error, lease)
    SELECT seq, id, topic, payload, endpoint, key, created_at, status,
    attempts, next_at, delivered_at, last_error, lease
    FROM outbox;
DROP TABLE outbox;
ALTER TABLE outbox_v7 RENAME TO outbox;
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
