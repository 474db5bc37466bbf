-- SPDX-License-Identifier: MIT
-- oncehook's tables in a MariaDB or MySQL database (the MariaDB/MySQL
-- store; SPEC section 6).  `oncehook init` runs this once, with every
-- {prefix} replaced by ONCEHOOK_DB_PREFIX (default oncehook_), and
-- records it in `{prefix}schema`.  InnoDB (transactions, row locks),
-- utf8mb4, binary collation: keys compare byte for byte, as in SQLite.
-- No trigger, procedure or function: on a server with binary logging
-- (MySQL 8's default), creating those asks for more than the database's
-- own privileges.

-- One row per event: its claim.  UNIQUE (endpoint, event_key) decides
-- who runs an event's actions (an INSERT ... ON DUPLICATE KEY in the
-- claim's transaction).
CREATE TABLE IF NOT EXISTS `{prefix}events` (
	id		BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
	endpoint	VARCHAR(64) NOT NULL,
	event_key	VARBINARY(512) NOT NULL,	-- the idempotency key
	type		VARBINARY(255) NULL,		-- as received, any bytes
	payload_hash	CHAR(64) CHARACTER SET ascii NOT NULL,
	payload		LONGBLOB NOT NULL,		-- the body, as received
	status		ENUM('received', 'processed', 'failed', 'dead')
			NOT NULL DEFAULT 'processed',
	received_at	BIGINT NOT NULL,
	processed_at	BIGINT NULL,
	expires_at	BIGINT NULL,			-- NULL: kept forever
	attempts	INT NOT NULL DEFAULT 1,
	last_error	TEXT NULL,
	next_at		BIGINT NULL,
	UNIQUE KEY endpoint_key (endpoint, event_key),
	KEY endpoint_payload (endpoint, payload_hash),
	KEY expires (expires_at),
	KEY pending (status, next_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- The replay guard of the endpoints whose scheme signs no timestamp: one
-- row per (endpoint, payload, type) recorded, inserted in the claim's
-- transaction.  Its primary key makes two keys carrying one captured
-- payload at the same moment one effect: the second insert waits for
-- the first transaction, then finds the row.
CREATE TABLE IF NOT EXISTS `{prefix}payloads` (
	endpoint	VARCHAR(64) NOT NULL,
	payload_hash	CHAR(64) CHARACTER SET ascii NOT NULL,
	type		VARBINARY(255) NOT NULL,	-- '' for none
	event_key	VARBINARY(512) NOT NULL,	-- whose it is
	PRIMARY KEY (endpoint, payload_hash, type),
	KEY event (endpoint, event_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- A known key seen with another payload (422).
CREATE TABLE IF NOT EXISTS `{prefix}conflicts` (
	id		BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
	endpoint	VARCHAR(64) NOT NULL,
	event_key	VARBINARY(512) NOT NULL,
	payload_hash	CHAR(64) CHARACTER SET ascii NOT NULL,
	received_at	BIGINT NOT NULL,
	KEY endpoint_key (endpoint, event_key),
	KEY received (received_at)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- Failed attempts of keys not (yet) parked.
CREATE TABLE IF NOT EXISTS `{prefix}failures` (
	endpoint	VARCHAR(64) NOT NULL,
	event_key	VARBINARY(512) NOT NULL,
	attempts	INT NOT NULL,
	last_error	TEXT NULL,
	first_at	BIGINT NOT NULL,
	last_at		BIGINT NOT NULL,
	PRIMARY KEY (endpoint, event_key)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;

-- The outbox (SPEC section 13).  An action writes
--	INSERT INTO outbox (topic, payload) VALUES (...) | SELECT ...
-- and oncehook, when it loads the file, names this table and adds the
-- event's endpoint, key and time to the row (nothing else may be set:
-- the actions file is refused).  id is drawn by the server for each
-- row, never reused: the webhook-id of every attempt.
CREATE TABLE IF NOT EXISTS `{prefix}outbox` (
	seq		BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
	id		CHAR(27) CHARACTER SET ascii NOT NULL DEFAULT
			(concat('ob_', left(sha2(concat(uuid(), rand()), 256),
			24))),
	topic		VARCHAR(128) CHARACTER SET ascii NOT NULL,
	payload		LONGTEXT NOT NULL,
	endpoint	VARCHAR(64) NOT NULL,
	event_key	VARBINARY(512) NOT NULL,
	created_at	BIGINT NOT NULL,
	status		ENUM('pending', 'delivered', 'dead')
			NOT NULL DEFAULT 'pending',
	attempts	INT NOT NULL DEFAULT 0,
	-- due at; while an attempt is under way, the end of its lease
	next_at		BIGINT NOT NULL DEFAULT 0,
	delivered_at	BIGINT NULL,
	last_error	TEXT NULL,
	lease		BIGINT NULL,	-- the attempt under way: a random token
	UNIQUE KEY id (id),
	KEY due (status, next_at),
	KEY event (endpoint, event_key),
	CONSTRAINT `{prefix}outbox_topic`
	    CHECK (topic REGEXP '^[A-Za-z0-9._-]{1,128}$')
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
