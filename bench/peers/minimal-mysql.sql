-- SPDX-License-Identifier: MIT
-- The minimal MariaDB peer's own table (bench/peers/php/minimal-mysql.php),
-- as a site owner would write it: the ids of the events handled, the
-- claim's UNIQUE key its primary key.  The orders table is the shipped
-- one (sql/actions/mysql/orders.sql), made by "oncehook init" in the
-- same database.
CREATE TABLE IF NOT EXISTS processed_events (
	event_id	VARCHAR(255) NOT NULL PRIMARY KEY,
	type		VARCHAR(255) NOT NULL,
	received_at	BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
