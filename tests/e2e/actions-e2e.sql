-- SPDX-License-Identifier: MIT
-- oncehook e2e: additions to the orders domain for the lighttpd runs
-- (tests/servers/lighttpd.sh, LT_ACTIONS_EXTRA).  The test's copy of
-- sql/actions/orders.sql is this file's setup part, then orders.sql as
-- shipped, then this file's sections: orders.sql itself is unchanged.

-- Parking and replay (statuscheck.py park): an event of type
-- e2e.flagged fails while a row is in e2e_flag (NOT NULL refused), and
-- takes effect once it is gone.
CREATE TABLE IF NOT EXISTS e2e_flag (why TEXT);
CREATE TABLE IF NOT EXISTS e2e_flagged (key TEXT NOT NULL);

-- on: e2e.flagged
INSERT INTO e2e_flagged (key)
SELECT CASE WHEN EXISTS (SELECT 1 FROM e2e_flag) THEN NULL ELSE :key END;
