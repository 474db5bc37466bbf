-- oncehook schema, version 5: the outbox (side effects after the commit).
--
-- An action inserts (topic, payload); the row commits with the event, so
-- a side effect is scheduled exactly when its effect happened.  The rest
-- is oncehook's: the row's stable id (the webhook-id a receiver
-- deduplicates on: random, so a database made again never reuses one),
-- (96 bits: none repeats), the endpoint and key of the event whose actions wrote it, the time,
-- and the delivery's state, written by "oncehook deliver" only.
-- oncehook_event() is a function oncehook's own connection defines: it
-- names the event whose actions are running, and is NULL otherwise, so
-- a row can be written by an action only (the sqlite3 shell has no such
-- function: it may read the outbox, not write it).
CREATE TABLE outbox (
	seq		INTEGER PRIMARY KEY,	-- the order they were written
	id		TEXT NOT NULL
			DEFAULT ('ob_' || lower(hex(randomblob(12)))),
	topic		TEXT NOT NULL
			CHECK (length(topic) BETWEEN 1 AND 128),
	payload		TEXT NOT NULL,
	endpoint	TEXT NOT NULL DEFAULT (oncehook_event('endpoint')),
	key		TEXT NOT NULL DEFAULT (oncehook_event('key')),
	created_at	INTEGER NOT NULL DEFAULT (oncehook_event('time')),
	status		TEXT NOT NULL DEFAULT 'pending'
			CHECK (status IN ('pending', 'delivered', 'dead')),
	attempts	INTEGER NOT NULL DEFAULT 0,
	-- due at; while an attempt is under way, the end of its lease
	next_at		INTEGER NOT NULL DEFAULT (oncehook_event('time')),
	delivered_at	INTEGER,
	last_error	TEXT
);
-- What is due, oldest first.  (No other index: each row an action writes
-- costs its table page and this index's; list and show by id or event
-- read the table through, as prune does.)
CREATE INDEX outbox_due ON outbox (next_at) WHERE status = 'pending';

-- An action writes the topic and the payload, nothing else: a row that
-- names another event, or that says it was delivered, is refused (and
-- with it the event's whole transaction).
CREATE TRIGGER outbox_insert BEFORE INSERT ON outbox
WHEN oncehook_event('endpoint') IS NULL
    OR NEW.endpoint IS NOT oncehook_event('endpoint')
    OR NEW.key IS NOT oncehook_event('key')
    OR NEW.created_at IS NOT oncehook_event('time')
    OR NEW.next_at IS NOT NEW.created_at
    OR NEW.status IS NOT 'pending' OR NEW.attempts IS NOT 0
    OR NEW.delivered_at IS NOT NULL OR NEW.last_error IS NOT NULL
    OR NEW.id NOT LIKE 'ob\_%' ESCAPE '\' OR length(NEW.id) <> 27
BEGIN
	SELECT RAISE(ABORT, 'outbox: an action writes topic and payload only, from an event''s actions');
END;
