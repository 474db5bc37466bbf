-- oncehook e2e: additions to the orders domain for the lighttpd runs
-- (tests/e2e/lighttpd.sh, LT_ACTIONS_EXTRA).  The test's copy of
-- sql/actions/orders.sql is this file's setup part, then orders.sql as
-- shipped, then this file's sections: orders.sql itself is unchanged.

CREATE TABLE IF NOT EXISTS e2e_gitlab_pushes (
	key		TEXT PRIMARY KEY NOT NULL,
	type		TEXT NOT NULL,
	ref		TEXT,
	project		TEXT
);

-- GitLab's event types hold a space: each is written in quotes.
-- on: "Push Hook", "Tag Push Hook"
INSERT OR IGNORE INTO e2e_gitlab_pushes (key, type, ref, project)
VALUES (:key, :type, json_extract(:payload, '$.ref'),
    json_extract(:payload, '$.project.path_with_namespace'));
