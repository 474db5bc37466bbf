-- SPDX-License-Identifier: MIT
-- oncehook actions: the orders domain, for the MariaDB/MySQL store.
-- The port of sql/actions/orders.sql (SQLite): the same table (and two
-- columns more, paid_by and refunded_by, below), the same events, the
-- same outcome whatever order they arrive in.
--
-- The setup part (everything before the first "-- on:" line) is run by
-- "oncehook init"; it must be safe to run again, hence IF NOT EXISTS.
-- Each "-- on: TYPE ..." section runs inside the claim transaction for
-- events of those types, with the event bound as :endpoint, :key, :type,
-- :payload (the JSON text, a string), :payload_hash and :received_at
-- (Unix seconds, an integer).  oncehook sends each statement to the
-- server as a prepared statement, every named parameter a bound ?.  If
-- a statement fails, the event and all its effects roll back, the
-- provider gets a 500 and its retry runs the section again.
--
-- Out of order, in SQL alone.  An order's status is never written by an
-- action: actions record facts (paid_at, refunded_at, cancelled_at), each
-- at most once (COALESCE keeps the first), and the status is derived
-- from the facts (a generated column):
--
--   paid and refunded      -> refunded   (a late payment never undoes it)
--   paid                   -> paid       (a payment beats a cancellation)
--   cancelled, not paid    -> cancelled
--   otherwise              -> pending    (a refund before its payment is
--                                         kept and applied when it lands)
--
-- The facts commute, so whatever order the events arrive in, the same
-- final state results.  Details (amount, currency, e-mail, payment id)
-- are likewise kept from the first event that carries them.  An order
-- id is a JSON string or integer (42 and "42" are one order).  An event
-- that names no order, or names it with anything else, is recorded and
-- acknowledged, and touches no order (a Stripe account sends payment
-- events for payments this site did not start).  So is an id longer
-- than the column's 191 characters: with oncehook's sql_mode
-- (STRICT_ALL_TABLES) it would fail the event on every retry, and
-- without it be cut short into another order's id.
--
-- The outbox (docs/operations.md): what the site's own code is told, after
-- the commit, by "oncehook deliver".  The first event that records an
-- order paid writes an order.paid row, the first that records it
-- refunded an order.refunded row, in the same transaction as the order:
-- each once, whatever the retries, and none if the event rolls back.
-- Their payload: {"type" (the topic), "order_id" (a string), "amount",
-- "currency", "customer_email", "payment_id" (order.paid), "event_type",
-- "event_key"}, from the event (the amount as the event wrote it: a
-- JSON number stays a number).
--
-- How this differs from the SQLite file, and why:
--
-- - The row is locked before it is read.  SQLite runs one writer at a
--   time; InnoDB runs claims side by side, and two events of one order
--   (a payment_intent.succeeded and a checkout.session.completed) may
--   be in two transactions at once.  So a payment section first upserts
--   the order's details and paid_at (which creates the row, or locks the
--   one there: the other transaction waits here until this one ends),
--   naming in paid_by the event that recorded paid_at (its
--   :received_at, :endpoint and :key; kept with paid_at, first kept),
--   then writes the outbox row if paid_by names this event (a refund
--   section likewise, with refunded_at and refunded_by).  In the SQLite
--   order (outbox first), the check could read without a lock (MySQL's
--   INSERT ... SELECT does, under READ COMMITTED) and two events write
--   order.paid, or, under REPEATABLE READ, both take a shared lock and
--   one die of the deadlock (and be retried).  Two statements a payment,
--   not three (a statement is most of what an event costs the server:
--   docs/design/021-mariadb-round-trips.md).  paid_by is assigned before
--   paid_at in ON DUPLICATE KEY UPDATE, so it reads the old paid_at
--   (oncehook's sql_mode has no SIMULTANEOUS_ASSIGNMENT, and either
--   reading gives the same here).  An order paid before these columns
--   existed keeps paid_by NULL, so no later event writes its order.paid.
-- - ON CONFLICT (id) DO UPDATE SET x = COALESCE(x, excluded.x) is
--   ON DUPLICATE KEY UPDATE x = COALESCE(x, VALUES(x)).  VALUES() works
--   on every MariaDB and MySQL; MySQL 8.0.20 and later deprecate it (a
--   warning, 1287, per statement; still accepted) in favour of row
--   aliases, which MariaDB does not have and which INSERT ... SELECT
--   cannot use.  The values are a SELECT of expressions (the order id
--   named v_id, kept by HAVING v_id IS NOT NULL), so that no name in ON
--   DUPLICATE KEY UPDATE is ambiguous between the table and the SELECT.
-- - The event is read once per statement: JSON_TABLE(:payload, '$'
--   COLUMNS (j_x JSON PATH '$.a.x', ...)) AS p, one row, each value the
--   statement needs a column of it (named j_*, no orders column's name).
--   It is the SELECT's row source, joined to the order's row by its
--   primary key (the outbox), or a scalar subquery in the WHERE of an
--   UPDATE (WHERE id = (SELECT ... FROM JSON_TABLE(...) AS p)): an
--   UPDATE joined to a JSON_TABLE makes a temporary table, on disk, for
--   every event, and so does a derived table (FROM (SELECT ...) AS p);
--   tests/mariadb-counters.sh fails on any temporary table a section
--   makes.  JSON_EXTRACT(:payload, ...) at each use would parse the
--   whole body again each time, and bind it each time (docs/actions.md).
--   JSON_TABLE needs MariaDB 10.6 or MySQL 8.0.4: on MariaDB 10.5
--   oncehook check fails on this file's first section, naming its line.
--   It fails a statement, where JSON_EXTRACT() returned NULL, on a body
--   the server's JSON parser refuses: oncehook refuses those before the
--   claim (nesting beyond MariaDB's 32 levels, a lone surrogate, \u0000).
-- - A JSON PATH column holds the value as JSON (a string quoted), as
--   JSON_EXTRACT() returns it: a scalar is read as JSON_UNQUOTE(p.j_x),
--   its kind as JSON_TYPE(p.j_x) ('STRING', 'INTEGER', ...; the same
--   names on MariaDB and MySQL), a value put in a JSON_OBJECT() as
--   JSON_EXTRACT(p.j_x, '$') (else MariaDB writes it as a string).
--   JSON_VALUE() is not used: MySQL has it from 8.0.21 only.  MariaDB
--   calls a number written with an exponent and no point (1e3) an
--   INTEGER; an integer id must also be written as one (digits only),
--   as SQLite and MySQL require.
-- - The amount is DECIMAL(65,4) (SQLite's NUMERIC kept what came):
--   Stripe's amounts are integers in the smallest unit, the generic
--   format's may carry decimals.  An amount that is a JSON number or a
--   string of one, plain decimal notation, at most 61 digits before the
--   point, is kept (rounded to 4 places); anything else is kept as NULL
--   rather than failing the event under STRICT_ALL_TABLES.
-- - A JSON null detail is SQL NULL, as in SQLite (JSON_UNQUOTE would
--   make it the string 'null').
-- - No regular expression here holds a ? or a colon, nor a backslash
--   (NO_BACKSLASH_ESCAPES): [.] and {0,1} instead.

CREATE TABLE IF NOT EXISTS orders (
	id		VARCHAR(191) NOT NULL PRIMARY KEY,
	-- The status is a function of the facts; no action writes it.
	-- (GENERATED ALWAYS AS ... VIRTUAL: MariaDB 10.2 and MySQL 5.7
	-- both take this spelling.)
	status		VARCHAR(16) GENERATED ALWAYS AS (
	    CASE
		WHEN paid_at IS NOT NULL AND refunded_at IS NOT NULL
		    THEN 'refunded'
		WHEN paid_at IS NOT NULL THEN 'paid'
		WHEN cancelled_at IS NOT NULL THEN 'cancelled'
		ELSE 'pending'
	    END) VIRTUAL,
	amount		DECIMAL(65,4) NULL,
	currency	TEXT NULL,
	customer_email	TEXT NULL,
	payment_id	TEXT NULL,
	paid_at		BIGINT NULL,	-- when the payment event arrived
	-- The event that recorded paid_at: its arrival, endpoint and key
	-- (how the section tells that this event is the one to write
	-- order.paid).  Bytes, as oncehook's keys are: compared byte for
	-- byte (a text column would pad "k" and "k " equal), and any key
	-- stored (not only UTF-8); 20 + 1 + 64 + 1 + 512 at most.
	paid_by		VARBINARY(600) NULL,
	refunded_at	BIGINT NULL,	-- when the refund event arrived
	refunded_by	VARBINARY(600) NULL,	-- the event that recorded it
	cancelled_at	BIGINT NULL,	-- when the cancellation arrived
	created_at	BIGINT NOT NULL,
	updated_at	BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
-- (utf8mb4_bin: ids compare byte for byte, as in SQLite, "A1" and "a1"
-- two orders.  VARCHAR(191): 764 bytes, within the 767-byte index key
-- of the oldest InnoDB row formats.  InnoDB clusters the row on its
-- primary key, as SQLite's WITHOUT ROWID did; the status is computed
-- when read, so no trigger rewrites the row just written.)

-- A table made before paid_by and refunded_by gains them (its orders
-- already paid or refunded keep them NULL).  MySQL has no ADD COLUMN IF
-- NOT EXISTS: the statement is chosen by what the table has.
SET @oncehook_orders = (SELECT IF(COUNT(*) = 2, 'DO 0',
    'ALTER TABLE orders ADD COLUMN paid_by VARBINARY(600) NULL AFTER paid_at, ADD COLUMN refunded_by VARBINARY(600) NULL AFTER refunded_at')
    FROM information_schema.COLUMNS WHERE TABLE_SCHEMA = DATABASE()
    AND TABLE_NAME = 'orders' AND COLUMN_NAME IN ('paid_by', 'refunded_by'));
PREPARE oncehook_orders FROM @oncehook_orders;
EXECUTE oncehook_orders;
DEALLOCATE PREPARE oncehook_orders;

-- on: payment.success
-- The generic format: {"type":"payment.success","metadata":{"orderId":..},
-- "transaction":{"id":..,"amount":..,"currency":..},
-- "customer":{"customerEmail":..}}
-- 1. The order's details and the payment (each fact first kept, and
-- the event that recorded it); creates or locks the row.
INSERT INTO orders (id, amount, currency, customer_email, payment_id,
    paid_at, paid_by, created_at, updated_at)
SELECT CASE WHEN (JSON_TYPE(p.j_id) = 'STRING'
	    OR (JSON_TYPE(p.j_id) IN ('INTEGER', 'UNSIGNED INTEGER')
		AND JSON_UNQUOTE(p.j_id) REGEXP '^-{0,1}[0-9]+$'))
	AND CHAR_LENGTH(JSON_UNQUOTE(p.j_id)) <= 191
	THEN JSON_UNQUOTE(p.j_id) END AS v_id,
    CASE WHEN JSON_TYPE(p.j_amount)
	    IN ('INTEGER', 'UNSIGNED INTEGER', 'DOUBLE', 'DECIMAL', 'STRING')
	AND JSON_UNQUOTE(p.j_amount)
	    REGEXP '^-{0,1}[0-9]{1,61}([.][0-9]+){0,1}$'
	THEN CAST(JSON_UNQUOTE(p.j_amount) AS DECIMAL(65,4)) END,
    CASE WHEN JSON_TYPE(p.j_currency) <> 'NULL'
	THEN JSON_UNQUOTE(p.j_currency) END,
    CASE WHEN JSON_TYPE(p.j_email) <> 'NULL'
	THEN JSON_UNQUOTE(p.j_email) END,
    CASE WHEN JSON_TYPE(p.j_payment) <> 'NULL'
	THEN JSON_UNQUOTE(p.j_payment) END,
    :received_at, CONCAT(:received_at, ' ', :endpoint, ' ', :key),
    :received_at, :received_at
FROM JSON_TABLE(:payload, '$' COLUMNS (
	j_id JSON PATH '$.metadata.orderId',
	j_amount JSON PATH '$.transaction.amount',
	j_currency JSON PATH '$.transaction.currency',
	j_email JSON PATH '$.customer.customerEmail',
	j_payment JSON PATH '$.transaction.id')) AS p
HAVING v_id IS NOT NULL
ON DUPLICATE KEY UPDATE
    amount = COALESCE(amount, VALUES(amount)),
    currency = COALESCE(currency, VALUES(currency)),
    customer_email = COALESCE(customer_email, VALUES(customer_email)),
    payment_id = COALESCE(payment_id, VALUES(payment_id)),
    paid_by = IF(paid_at IS NULL, VALUES(paid_by), paid_by),
    paid_at = COALESCE(paid_at, VALUES(paid_at)),
    updated_at = VALUES(updated_at);
-- 2. order.paid, if this event is the one that recorded the payment.
INSERT INTO outbox (topic, payload)
SELECT 'order.paid', JSON_OBJECT('type', 'order.paid',
    'order_id', orders.id,
    'amount', JSON_EXTRACT(p.j_amount, '$'),
    'currency', JSON_EXTRACT(p.j_currency, '$'),
    'customer_email', JSON_EXTRACT(p.j_email, '$'),
    'payment_id', JSON_EXTRACT(p.j_payment, '$'),
    'event_type', :type, 'event_key', :key)
FROM JSON_TABLE(:payload, '$' COLUMNS (
	j_id JSON PATH '$.metadata.orderId',
	j_amount JSON PATH '$.transaction.amount',
	j_currency JSON PATH '$.transaction.currency',
	j_email JSON PATH '$.customer.customerEmail',
	j_payment JSON PATH '$.transaction.id')) AS p
JOIN orders ON orders.id = CASE WHEN (JSON_TYPE(p.j_id) = 'STRING'
	    OR (JSON_TYPE(p.j_id) IN ('INTEGER', 'UNSIGNED INTEGER')
		AND JSON_UNQUOTE(p.j_id) REGEXP '^-{0,1}[0-9]+$'))
	AND CHAR_LENGTH(JSON_UNQUOTE(p.j_id)) <= 191
	THEN JSON_UNQUOTE(p.j_id) END
WHERE orders.paid_by = CONCAT(:received_at, ' ', :endpoint, ' ', :key);

-- on: payment.refunded
-- 1. The refund (first kept, and the event that recorded it); creates
-- or locks the order's row.
INSERT INTO orders (id, refunded_at, refunded_by, created_at,
    updated_at)
SELECT CASE WHEN (JSON_TYPE(p.j_id) = 'STRING'
	    OR (JSON_TYPE(p.j_id) IN ('INTEGER', 'UNSIGNED INTEGER')
		AND JSON_UNQUOTE(p.j_id) REGEXP '^-{0,1}[0-9]+$'))
	AND CHAR_LENGTH(JSON_UNQUOTE(p.j_id)) <= 191
	THEN JSON_UNQUOTE(p.j_id) END AS v_id,
    :received_at, CONCAT(:received_at, ' ', :endpoint, ' ', :key),
    :received_at, :received_at
FROM JSON_TABLE(:payload, '$' COLUMNS (
	j_id JSON PATH '$.metadata.orderId')) AS p
HAVING v_id IS NOT NULL
ON DUPLICATE KEY UPDATE
    refunded_by = IF(refunded_at IS NULL, VALUES(refunded_by), refunded_by),
    refunded_at = COALESCE(refunded_at, VALUES(refunded_at)),
    updated_at = VALUES(updated_at);
-- 2. order.refunded, if this event is the one that recorded the refund.
INSERT INTO outbox (topic, payload)
SELECT 'order.refunded', JSON_OBJECT('type', 'order.refunded',
    'order_id', orders.id,
    'event_type', :type, 'event_key', :key)
FROM JSON_TABLE(:payload, '$' COLUMNS (
	j_id JSON PATH '$.metadata.orderId')) AS p
JOIN orders ON orders.id = CASE WHEN (JSON_TYPE(p.j_id) = 'STRING'
	    OR (JSON_TYPE(p.j_id) IN ('INTEGER', 'UNSIGNED INTEGER')
		AND JSON_UNQUOTE(p.j_id) REGEXP '^-{0,1}[0-9]+$'))
	AND CHAR_LENGTH(JSON_UNQUOTE(p.j_id)) <= 191
	THEN JSON_UNQUOTE(p.j_id) END
WHERE orders.refunded_by = CONCAT(:received_at, ' ', :endpoint, ' ', :key);

-- on: webhook.ping
-- Recorded in events only.

-- on: payment_intent.succeeded
-- Stripe: data.object is the PaymentIntent (amount in the smallest unit).
-- 1. The order's details and the payment (each fact first kept, and
-- the event that recorded it); creates or locks the row.
INSERT INTO orders (id, amount, currency, customer_email, payment_id,
    paid_at, paid_by, created_at, updated_at)
SELECT CASE WHEN (JSON_TYPE(p.j_id) = 'STRING'
	    OR (JSON_TYPE(p.j_id) IN ('INTEGER', 'UNSIGNED INTEGER')
		AND JSON_UNQUOTE(p.j_id) REGEXP '^-{0,1}[0-9]+$'))
	AND CHAR_LENGTH(JSON_UNQUOTE(p.j_id)) <= 191
	THEN JSON_UNQUOTE(p.j_id) END AS v_id,
    CASE WHEN JSON_TYPE(p.j_amount)
	    IN ('INTEGER', 'UNSIGNED INTEGER', 'DOUBLE', 'DECIMAL', 'STRING')
	AND JSON_UNQUOTE(p.j_amount)
	    REGEXP '^-{0,1}[0-9]{1,61}([.][0-9]+){0,1}$'
	THEN CAST(JSON_UNQUOTE(p.j_amount) AS DECIMAL(65,4)) END,
    CASE WHEN JSON_TYPE(p.j_currency) <> 'NULL'
	THEN JSON_UNQUOTE(p.j_currency) END,
    CASE WHEN JSON_TYPE(p.j_email) <> 'NULL'
	THEN JSON_UNQUOTE(p.j_email) END,
    CASE WHEN JSON_TYPE(p.j_payment) <> 'NULL'
	THEN JSON_UNQUOTE(p.j_payment) END,
    :received_at, CONCAT(:received_at, ' ', :endpoint, ' ', :key),
    :received_at, :received_at
FROM JSON_TABLE(:payload, '$' COLUMNS (
	j_id JSON PATH '$.data.object.metadata.order_id',
	j_amount JSON PATH '$.data.object.amount',
	j_currency JSON PATH '$.data.object.currency',
	j_email JSON PATH '$.data.object.receipt_email',
	j_payment JSON PATH '$.data.object.id')) AS p
HAVING v_id IS NOT NULL
ON DUPLICATE KEY UPDATE
    amount = COALESCE(amount, VALUES(amount)),
    currency = COALESCE(currency, VALUES(currency)),
    customer_email = COALESCE(customer_email, VALUES(customer_email)),
    payment_id = COALESCE(payment_id, VALUES(payment_id)),
    paid_by = IF(paid_at IS NULL, VALUES(paid_by), paid_by),
    paid_at = COALESCE(paid_at, VALUES(paid_at)),
    updated_at = VALUES(updated_at);
-- 2. order.paid, if this event is the one that recorded the payment.
INSERT INTO outbox (topic, payload)
SELECT 'order.paid', JSON_OBJECT('type', 'order.paid',
    'order_id', orders.id,
    'amount', JSON_EXTRACT(p.j_amount, '$'),
    'currency', JSON_EXTRACT(p.j_currency, '$'),
    'customer_email', JSON_EXTRACT(p.j_email, '$'),
    'payment_id', JSON_EXTRACT(p.j_payment, '$'),
    'event_type', :type, 'event_key', :key)
FROM JSON_TABLE(:payload, '$' COLUMNS (
	j_id JSON PATH '$.data.object.metadata.order_id',
	j_amount JSON PATH '$.data.object.amount',
	j_currency JSON PATH '$.data.object.currency',
	j_email JSON PATH '$.data.object.receipt_email',
	j_payment JSON PATH '$.data.object.id')) AS p
JOIN orders ON orders.id = CASE WHEN (JSON_TYPE(p.j_id) = 'STRING'
	    OR (JSON_TYPE(p.j_id) IN ('INTEGER', 'UNSIGNED INTEGER')
		AND JSON_UNQUOTE(p.j_id) REGEXP '^-{0,1}[0-9]+$'))
	AND CHAR_LENGTH(JSON_UNQUOTE(p.j_id)) <= 191
	THEN JSON_UNQUOTE(p.j_id) END
WHERE orders.paid_by = CONCAT(:received_at, ' ', :endpoint, ' ', :key);

-- on: checkout.session.completed
-- Stripe: data.object is the Checkout Session.
-- 1. The order's details and the payment (each fact first kept, and
-- the event that recorded it); creates or locks the row.
INSERT INTO orders (id, amount, currency, customer_email, payment_id,
    paid_at, paid_by, created_at, updated_at)
SELECT CASE WHEN (JSON_TYPE(p.j_id) = 'STRING'
	    OR (JSON_TYPE(p.j_id) IN ('INTEGER', 'UNSIGNED INTEGER')
		AND JSON_UNQUOTE(p.j_id) REGEXP '^-{0,1}[0-9]+$'))
	AND CHAR_LENGTH(JSON_UNQUOTE(p.j_id)) <= 191
	THEN JSON_UNQUOTE(p.j_id) END AS v_id,
    CASE WHEN JSON_TYPE(p.j_amount)
	    IN ('INTEGER', 'UNSIGNED INTEGER', 'DOUBLE', 'DECIMAL', 'STRING')
	AND JSON_UNQUOTE(p.j_amount)
	    REGEXP '^-{0,1}[0-9]{1,61}([.][0-9]+){0,1}$'
	THEN CAST(JSON_UNQUOTE(p.j_amount) AS DECIMAL(65,4)) END,
    CASE WHEN JSON_TYPE(p.j_currency) <> 'NULL'
	THEN JSON_UNQUOTE(p.j_currency) END,
    CASE WHEN JSON_TYPE(p.j_email) <> 'NULL'
	THEN JSON_UNQUOTE(p.j_email) END,
    CASE WHEN JSON_TYPE(p.j_payment) <> 'NULL'
	THEN JSON_UNQUOTE(p.j_payment) END,
    :received_at, CONCAT(:received_at, ' ', :endpoint, ' ', :key),
    :received_at, :received_at
FROM JSON_TABLE(:payload, '$' COLUMNS (
	j_id JSON PATH '$.data.object.metadata.order_id',
	j_amount JSON PATH '$.data.object.amount_total',
	j_currency JSON PATH '$.data.object.currency',
	j_email JSON PATH '$.data.object.customer_details.email',
	j_payment JSON PATH '$.data.object.payment_intent')) AS p
HAVING v_id IS NOT NULL
ON DUPLICATE KEY UPDATE
    amount = COALESCE(amount, VALUES(amount)),
    currency = COALESCE(currency, VALUES(currency)),
    customer_email = COALESCE(customer_email, VALUES(customer_email)),
    payment_id = COALESCE(payment_id, VALUES(payment_id)),
    paid_by = IF(paid_at IS NULL, VALUES(paid_by), paid_by),
    paid_at = COALESCE(paid_at, VALUES(paid_at)),
    updated_at = VALUES(updated_at);
-- 2. order.paid, if this event is the one that recorded the payment.
INSERT INTO outbox (topic, payload)
SELECT 'order.paid', JSON_OBJECT('type', 'order.paid',
    'order_id', orders.id,
    'amount', JSON_EXTRACT(p.j_amount, '$'),
    'currency', JSON_EXTRACT(p.j_currency, '$'),
    'customer_email', JSON_EXTRACT(p.j_email, '$'),
    'payment_id', JSON_EXTRACT(p.j_payment, '$'),
    'event_type', :type, 'event_key', :key)
FROM JSON_TABLE(:payload, '$' COLUMNS (
	j_id JSON PATH '$.data.object.metadata.order_id',
	j_amount JSON PATH '$.data.object.amount_total',
	j_currency JSON PATH '$.data.object.currency',
	j_email JSON PATH '$.data.object.customer_details.email',
	j_payment JSON PATH '$.data.object.payment_intent')) AS p
JOIN orders ON orders.id = CASE WHEN (JSON_TYPE(p.j_id) = 'STRING'
	    OR (JSON_TYPE(p.j_id) IN ('INTEGER', 'UNSIGNED INTEGER')
		AND JSON_UNQUOTE(p.j_id) REGEXP '^-{0,1}[0-9]+$'))
	AND CHAR_LENGTH(JSON_UNQUOTE(p.j_id)) <= 191
	THEN JSON_UNQUOTE(p.j_id) END
WHERE orders.paid_by = CONCAT(:received_at, ' ', :endpoint, ' ', :key);

-- on: charge.refunded
-- Stripe: data.object is the Charge; its metadata carries the order id.
-- 1. The refund (first kept, and the event that recorded it); creates
-- or locks the order's row.
INSERT INTO orders (id, refunded_at, refunded_by, created_at,
    updated_at)
SELECT CASE WHEN (JSON_TYPE(p.j_id) = 'STRING'
	    OR (JSON_TYPE(p.j_id) IN ('INTEGER', 'UNSIGNED INTEGER')
		AND JSON_UNQUOTE(p.j_id) REGEXP '^-{0,1}[0-9]+$'))
	AND CHAR_LENGTH(JSON_UNQUOTE(p.j_id)) <= 191
	THEN JSON_UNQUOTE(p.j_id) END AS v_id,
    :received_at, CONCAT(:received_at, ' ', :endpoint, ' ', :key),
    :received_at, :received_at
FROM JSON_TABLE(:payload, '$' COLUMNS (
	j_id JSON PATH '$.data.object.metadata.order_id')) AS p
HAVING v_id IS NOT NULL
ON DUPLICATE KEY UPDATE
    refunded_by = IF(refunded_at IS NULL, VALUES(refunded_by), refunded_by),
    refunded_at = COALESCE(refunded_at, VALUES(refunded_at)),
    updated_at = VALUES(updated_at);
-- 2. order.refunded, if this event is the one that recorded the refund.
INSERT INTO outbox (topic, payload)
SELECT 'order.refunded', JSON_OBJECT('type', 'order.refunded',
    'order_id', orders.id,
    'event_type', :type, 'event_key', :key)
FROM JSON_TABLE(:payload, '$' COLUMNS (
	j_id JSON PATH '$.data.object.metadata.order_id')) AS p
JOIN orders ON orders.id = CASE WHEN (JSON_TYPE(p.j_id) = 'STRING'
	    OR (JSON_TYPE(p.j_id) IN ('INTEGER', 'UNSIGNED INTEGER')
		AND JSON_UNQUOTE(p.j_id) REGEXP '^-{0,1}[0-9]+$'))
	AND CHAR_LENGTH(JSON_UNQUOTE(p.j_id)) <= 191
	THEN JSON_UNQUOTE(p.j_id) END
WHERE orders.refunded_by = CONCAT(:received_at, ' ', :endpoint, ' ', :key);

-- on: payment_intent.canceled
-- Cancels a pending order; a paid order stays paid (see the status).
INSERT INTO orders (id, cancelled_at, created_at, updated_at)
SELECT CASE WHEN (JSON_TYPE(p.j_id) = 'STRING'
	    OR (JSON_TYPE(p.j_id) IN ('INTEGER', 'UNSIGNED INTEGER')
		AND JSON_UNQUOTE(p.j_id) REGEXP '^-{0,1}[0-9]+$'))
	AND CHAR_LENGTH(JSON_UNQUOTE(p.j_id)) <= 191
	THEN JSON_UNQUOTE(p.j_id) END AS v_id,
    :received_at, :received_at, :received_at
FROM JSON_TABLE(:payload, '$' COLUMNS (
	j_id JSON PATH '$.data.object.metadata.order_id')) AS p
HAVING v_id IS NOT NULL
ON DUPLICATE KEY UPDATE
    cancelled_at = COALESCE(cancelled_at, VALUES(cancelled_at)),
    updated_at = VALUES(updated_at);
