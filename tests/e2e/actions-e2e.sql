-- SPDX-License-Identifier: MIT
-- oncehook e2e: additions to the orders domain for the lighttpd runs
-- (tests/servers/lighttpd.sh, LT_ACTIONS_EXTRA).  The test's copy of
-- sql/actions/orders.sql is this file's setup part, then orders.sql as
-- shipped, then this file's sections: orders.sql itself is unchanged.

CREATE TABLE IF NOT EXISTS e2e_gitlab_pushes (
	key		TEXT PRIMARY KEY NOT NULL,
	type		TEXT NOT NULL,
	ref		TEXT,
	project		TEXT
);

-- Parking and replay (statuscheck.py park): an event of type
-- e2e.flagged fails while a row is in e2e_flag (NOT NULL refused), and
-- takes effect once it is gone.
CREATE TABLE IF NOT EXISTS e2e_flag (why TEXT);
CREATE TABLE IF NOT EXISTS e2e_flagged (key TEXT NOT NULL);

-- GitLab's event types hold a space: each is written in quotes.
-- on: "Push Hook", "Tag Push Hook"
INSERT OR IGNORE INTO e2e_gitlab_pushes (key, type, ref, project)
VALUES (:key, :type, json_extract(:payload, '$.ref'),
    json_extract(:payload, '$.project.path_with_namespace'));

-- on: e2e.flagged
INSERT INTO e2e_flagged (key)
SELECT CASE WHEN EXISTS (SELECT 1 FROM e2e_flag) THEN NULL ELSE :key END;
