-- SPDX-License-Identifier: MIT
-- oncehook tests: the actions of every endpoint of tests/schemes.sh
-- (tests/e2e/schemes.py).  Each event, whatever its type, leaves one
-- row here when it is applied: no uniqueness, so an event applied twice
-- shows as two rows.
CREATE TABLE IF NOT EXISTS scheme_effects (
	id		INTEGER PRIMARY KEY,
	endpoint	TEXT NOT NULL,
	key		TEXT NOT NULL,
	type		TEXT
);

-- on: *
INSERT INTO scheme_effects (endpoint, key, type)
VALUES (:endpoint, :key, :type);
