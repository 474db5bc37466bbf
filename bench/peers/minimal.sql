-- SPDX-License-Identifier: MIT
-- The minimal peers' own table (bench/peers/php/minimal.php,
-- bench/peers/node/minimal.js), as a site owner would write it: the ids
-- of the events handled.  The orders table is the shipped one, made by
-- "oncehook init" in the same database.
CREATE TABLE IF NOT EXISTS processed_events (
	event_id	TEXT PRIMARY KEY,
	type		TEXT NOT NULL,
	received_at	INTEGER NOT NULL
);
