-- SPDX-License-Identifier: MIT
-- oncehook actions: the orders domain, for the MariaDB/MySQL store.
-- The port of sql/actions/orders.sql (SQLite): the same table, the same
-- events, the same outcome whatever order they arrive in.
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
--   the order's details (which creates the row, or locks the one there:
--   the other transaction waits here until this one ends), then writes
--   the outbox row if paid_at is still empty (it now reads the row as
--   committed, under either REPEATABLE READ or READ COMMITTED), then
--   records paid_at (a refund section likewise, with refunded_at).  In
--   the SQLite order (outbox first), the check could read without a
--   lock (MySQL's INSERT ... SELECT does, under READ COMMITTED) and two
--   events write order.paid, or, under REPEATABLE READ, both take a
--   shared lock and one die of the deadlock (and be retried).
-- - ON CONFLICT (id) DO UPDATE SET x = COALESCE(x, excluded.x) is
--   ON DUPLICATE KEY UPDATE x = COALESCE(x, VALUES(x)).  VALUES() works
--   on every MariaDB and MySQL; MySQL 8.0.20 and later deprecate it (a
--   warning, 1287, per statement; still accepted) in favour of row
--   aliases, which MariaDB does not have and which INSERT ... SELECT
--   cannot use.  The values are a SELECT of expressions FROM DUAL (the
--   order id named v_id, kept by HAVING v_id IS NOT NULL), so that no
--   name in ON DUPLICATE KEY UPDATE is ambiguous between the table and
--   the SELECT.
-- - No derived table: each value is read where it is used, by
--   JSON_EXTRACT(:payload, ...) in the SELECT list, the WHERE and the
--   SET, and the order's row is found by its primary key (WHERE id =
--   ...).  A derived table of JSON values (SELECT ... FROM (SELECT
--   JSON_EXTRACT(...)) AS p) is materialised in a temporary table, on
--   disk when it is joined in an UPDATE (its columns are long text),
--   for every event: tests/mariadb-counters.sh fails on any temporary
--   table a section makes.  The cost is :payload bound several times
--   in one statement (at most 14 here): see max_allowed_packet in
--   docs/stores.md.  The outbox row's order_id is the locked row's id.
-- - json_extract() returns a JSON value here (a string comes back
--   quoted): a scalar is read as JSON_UNQUOTE(JSON_EXTRACT(...)), its
--   kind as JSON_TYPE(JSON_EXTRACT(...)) ('STRING', 'INTEGER', ...; the
--   same names on MariaDB and MySQL).  JSON_VALUE() is not used: MySQL
--   has it from 8.0.21 only.  MariaDB calls a number written with an
--   exponent and no point (1e3) an INTEGER; an integer id must also be
--   written as one (digits only), as SQLite and MySQL require.
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
	refunded_at	BIGINT NULL,	-- when the refund event arrived
	cancelled_at	BIGINT NULL,	-- when the cancellation arrived
	created_at	BIGINT NOT NULL,
	updated_at	BIGINT NOT NULL
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_bin;
-- (utf8mb4_bin: ids compare byte for byte, as in SQLite, "A1" and "a1"
-- two orders.  VARCHAR(191): 764 bytes, within the 767-byte index key
-- of the oldest InnoDB row formats.  InnoDB clusters the row on its
-- primary key, as SQLite's WITHOUT ROWID did; the status is computed
-- when read, so no trigger rewrites the row just written.)

-- on: payment.success
-- The generic format: {"type":"payment.success","metadata":{"orderId":..},
-- "transaction":{"id":..,"amount":..,"currency":..},
-- "customer":{"customerEmail":..}}
-- 1. The order's details (first kept); creates or locks its row.
INSERT INTO orders (id, amount, currency, customer_email, payment_id,
    created_at, updated_at)
SELECT CASE WHEN (JSON_TYPE(JSON_EXTRACT(:payload, '$.metadata.orderId')) = 'STRING'
        OR (JSON_TYPE(JSON_EXTRACT(:payload, '$.metadata.orderId'))
	IN ('INTEGER', 'UNSIGNED INTEGER')
	AND JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.metadata.orderId'))
	    REGEXP '^-{0,1}[0-9]+$'))
        AND CHAR_LENGTH(JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.metadata.orderId'))) <= 191
        THEN JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.metadata.orderId')) END AS v_id,
    CASE WHEN JSON_TYPE(JSON_EXTRACT(:payload, '$.transaction.amount'))
	IN ('INTEGER', 'UNSIGNED INTEGER', 'DOUBLE', 'DECIMAL', 'STRING')
	AND JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.transaction.amount'))
	    REGEXP '^-{0,1}[0-9]{1,61}([.][0-9]+){0,1}$'
	THEN CAST(JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.transaction.amount')) AS DECIMAL(65,4)) END,
    CASE WHEN JSON_TYPE(JSON_EXTRACT(:payload, '$.transaction.currency')) <> 'NULL'
	THEN JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.transaction.currency')) END,
    CASE WHEN JSON_TYPE(JSON_EXTRACT(:payload, '$.customer.customerEmail')) <> 'NULL'
	THEN JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.customer.customerEmail')) END,
    CASE WHEN JSON_TYPE(JSON_EXTRACT(:payload, '$.transaction.id')) <> 'NULL'
	THEN JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.transaction.id')) END,
    :received_at, :received_at
FROM DUAL HAVING v_id IS NOT NULL
ON DUPLICATE KEY UPDATE
    amount = COALESCE(amount, VALUES(amount)),
    currency = COALESCE(currency, VALUES(currency)),
    customer_email = COALESCE(customer_email, VALUES(customer_email)),
    payment_id = COALESCE(payment_id, VALUES(payment_id)),
    updated_at = VALUES(updated_at);
-- 2. order.paid, if no event has recorded the payment yet (the row is
-- there: step 1 made or locked it).
INSERT INTO outbox (topic, payload)
SELECT 'order.paid', JSON_OBJECT('type', 'order.paid',
    'order_id', orders.id,
    'amount', JSON_EXTRACT(:payload, '$.transaction.amount'),
    'currency', JSON_EXTRACT(:payload, '$.transaction.currency'),
    'customer_email', JSON_EXTRACT(:payload, '$.customer.customerEmail'),
    'payment_id', JSON_EXTRACT(:payload, '$.transaction.id'),
    'event_type', :type, 'event_key', :key)
FROM orders
WHERE orders.paid_at IS NULL AND orders.id = CASE WHEN (JSON_TYPE(JSON_EXTRACT(:payload, '$.metadata.orderId')) = 'STRING'
        OR (JSON_TYPE(JSON_EXTRACT(:payload, '$.metadata.orderId'))
	IN ('INTEGER', 'UNSIGNED INTEGER')
	AND JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.metadata.orderId'))
	    REGEXP '^-{0,1}[0-9]+$'))
        AND CHAR_LENGTH(JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.metadata.orderId'))) <= 191
        THEN JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.metadata.orderId')) END;
-- 3. The fact, once.
UPDATE orders SET paid_at = COALESCE(paid_at, :received_at)
WHERE id = CASE WHEN (JSON_TYPE(JSON_EXTRACT(:payload, '$.metadata.orderId')) = 'STRING'
        OR (JSON_TYPE(JSON_EXTRACT(:payload, '$.metadata.orderId'))
	IN ('INTEGER', 'UNSIGNED INTEGER')
	AND JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.metadata.orderId'))
	    REGEXP '^-{0,1}[0-9]+$'))
        AND CHAR_LENGTH(JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.metadata.orderId'))) <= 191
        THEN JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.metadata.orderId')) END;

-- on: payment.refunded
-- 1. Creates or locks the order's row.
INSERT INTO orders (id, created_at, updated_at)
SELECT CASE WHEN (JSON_TYPE(JSON_EXTRACT(:payload, '$.metadata.orderId')) = 'STRING'
        OR (JSON_TYPE(JSON_EXTRACT(:payload, '$.metadata.orderId'))
	IN ('INTEGER', 'UNSIGNED INTEGER')
	AND JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.metadata.orderId'))
	    REGEXP '^-{0,1}[0-9]+$'))
        AND CHAR_LENGTH(JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.metadata.orderId'))) <= 191
        THEN JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.metadata.orderId')) END AS v_id,
    :received_at, :received_at
FROM DUAL HAVING v_id IS NOT NULL
ON DUPLICATE KEY UPDATE updated_at = VALUES(updated_at);
-- 2. order.refunded, if no event has recorded the refund yet (the row
-- is there: step 1 made or locked it).
INSERT INTO outbox (topic, payload)
SELECT 'order.refunded', JSON_OBJECT('type', 'order.refunded',
    'order_id', orders.id,
    'event_type', :type, 'event_key', :key)
FROM orders
WHERE orders.refunded_at IS NULL AND orders.id = CASE WHEN (JSON_TYPE(JSON_EXTRACT(:payload, '$.metadata.orderId')) = 'STRING'
        OR (JSON_TYPE(JSON_EXTRACT(:payload, '$.metadata.orderId'))
	IN ('INTEGER', 'UNSIGNED INTEGER')
	AND JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.metadata.orderId'))
	    REGEXP '^-{0,1}[0-9]+$'))
        AND CHAR_LENGTH(JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.metadata.orderId'))) <= 191
        THEN JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.metadata.orderId')) END;
-- 3. The fact, once.
UPDATE orders SET refunded_at = COALESCE(refunded_at, :received_at)
WHERE id = CASE WHEN (JSON_TYPE(JSON_EXTRACT(:payload, '$.metadata.orderId')) = 'STRING'
        OR (JSON_TYPE(JSON_EXTRACT(:payload, '$.metadata.orderId'))
	IN ('INTEGER', 'UNSIGNED INTEGER')
	AND JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.metadata.orderId'))
	    REGEXP '^-{0,1}[0-9]+$'))
        AND CHAR_LENGTH(JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.metadata.orderId'))) <= 191
        THEN JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.metadata.orderId')) END;

-- on: webhook.ping
-- Recorded in events only.

-- on: payment_intent.succeeded
-- Stripe: data.object is the PaymentIntent (amount in the smallest unit).
-- 1. The order's details (first kept); creates or locks its row.
INSERT INTO orders (id, amount, currency, customer_email, payment_id,
    created_at, updated_at)
SELECT CASE WHEN (JSON_TYPE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id')) = 'STRING'
        OR (JSON_TYPE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id'))
	IN ('INTEGER', 'UNSIGNED INTEGER')
	AND JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id'))
	    REGEXP '^-{0,1}[0-9]+$'))
        AND CHAR_LENGTH(JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id'))) <= 191
        THEN JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id')) END AS v_id,
    CASE WHEN JSON_TYPE(JSON_EXTRACT(:payload, '$.data.object.amount'))
	IN ('INTEGER', 'UNSIGNED INTEGER', 'DOUBLE', 'DECIMAL', 'STRING')
	AND JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.amount'))
	    REGEXP '^-{0,1}[0-9]{1,61}([.][0-9]+){0,1}$'
	THEN CAST(JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.amount')) AS DECIMAL(65,4)) END,
    CASE WHEN JSON_TYPE(JSON_EXTRACT(:payload, '$.data.object.currency')) <> 'NULL'
	THEN JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.currency')) END,
    CASE WHEN JSON_TYPE(JSON_EXTRACT(:payload, '$.data.object.receipt_email')) <> 'NULL'
	THEN JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.receipt_email')) END,
    CASE WHEN JSON_TYPE(JSON_EXTRACT(:payload, '$.data.object.id')) <> 'NULL'
	THEN JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.id')) END,
    :received_at, :received_at
FROM DUAL HAVING v_id IS NOT NULL
ON DUPLICATE KEY UPDATE
    amount = COALESCE(amount, VALUES(amount)),
    currency = COALESCE(currency, VALUES(currency)),
    customer_email = COALESCE(customer_email, VALUES(customer_email)),
    payment_id = COALESCE(payment_id, VALUES(payment_id)),
    updated_at = VALUES(updated_at);
-- 2. order.paid, if no event has recorded the payment yet (the row is
-- there: step 1 made or locked it).
INSERT INTO outbox (topic, payload)
SELECT 'order.paid', JSON_OBJECT('type', 'order.paid',
    'order_id', orders.id,
    'amount', JSON_EXTRACT(:payload, '$.data.object.amount'),
    'currency', JSON_EXTRACT(:payload, '$.data.object.currency'),
    'customer_email', JSON_EXTRACT(:payload, '$.data.object.receipt_email'),
    'payment_id', JSON_EXTRACT(:payload, '$.data.object.id'),
    'event_type', :type, 'event_key', :key)
FROM orders
WHERE orders.paid_at IS NULL AND orders.id = CASE WHEN (JSON_TYPE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id')) = 'STRING'
        OR (JSON_TYPE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id'))
	IN ('INTEGER', 'UNSIGNED INTEGER')
	AND JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id'))
	    REGEXP '^-{0,1}[0-9]+$'))
        AND CHAR_LENGTH(JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id'))) <= 191
        THEN JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id')) END;
-- 3. The fact, once.
UPDATE orders SET paid_at = COALESCE(paid_at, :received_at)
WHERE id = CASE WHEN (JSON_TYPE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id')) = 'STRING'
        OR (JSON_TYPE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id'))
	IN ('INTEGER', 'UNSIGNED INTEGER')
	AND JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id'))
	    REGEXP '^-{0,1}[0-9]+$'))
        AND CHAR_LENGTH(JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id'))) <= 191
        THEN JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id')) END;

-- on: checkout.session.completed
-- Stripe: data.object is the Checkout Session.
-- 1. The order's details (first kept); creates or locks its row.
INSERT INTO orders (id, amount, currency, customer_email, payment_id,
    created_at, updated_at)
SELECT CASE WHEN (JSON_TYPE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id')) = 'STRING'
        OR (JSON_TYPE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id'))
	IN ('INTEGER', 'UNSIGNED INTEGER')
	AND JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id'))
	    REGEXP '^-{0,1}[0-9]+$'))
        AND CHAR_LENGTH(JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id'))) <= 191
        THEN JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id')) END AS v_id,
    CASE WHEN JSON_TYPE(JSON_EXTRACT(:payload, '$.data.object.amount_total'))
	IN ('INTEGER', 'UNSIGNED INTEGER', 'DOUBLE', 'DECIMAL', 'STRING')
	AND JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.amount_total'))
	    REGEXP '^-{0,1}[0-9]{1,61}([.][0-9]+){0,1}$'
	THEN CAST(JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.amount_total')) AS DECIMAL(65,4)) END,
    CASE WHEN JSON_TYPE(JSON_EXTRACT(:payload, '$.data.object.currency')) <> 'NULL'
	THEN JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.currency')) END,
    CASE WHEN JSON_TYPE(JSON_EXTRACT(:payload, '$.data.object.customer_details.email')) <> 'NULL'
	THEN JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.customer_details.email')) END,
    CASE WHEN JSON_TYPE(JSON_EXTRACT(:payload, '$.data.object.payment_intent')) <> 'NULL'
	THEN JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.payment_intent')) END,
    :received_at, :received_at
FROM DUAL HAVING v_id IS NOT NULL
ON DUPLICATE KEY UPDATE
    amount = COALESCE(amount, VALUES(amount)),
    currency = COALESCE(currency, VALUES(currency)),
    customer_email = COALESCE(customer_email, VALUES(customer_email)),
    payment_id = COALESCE(payment_id, VALUES(payment_id)),
    updated_at = VALUES(updated_at);
-- 2. order.paid, if no event has recorded the payment yet (the row is
-- there: step 1 made or locked it).
INSERT INTO outbox (topic, payload)
SELECT 'order.paid', JSON_OBJECT('type', 'order.paid',
    'order_id', orders.id,
    'amount', JSON_EXTRACT(:payload, '$.data.object.amount_total'),
    'currency', JSON_EXTRACT(:payload, '$.data.object.currency'),
    'customer_email', JSON_EXTRACT(:payload, '$.data.object.customer_details.email'),
    'payment_id', JSON_EXTRACT(:payload, '$.data.object.payment_intent'),
    'event_type', :type, 'event_key', :key)
FROM orders
WHERE orders.paid_at IS NULL AND orders.id = CASE WHEN (JSON_TYPE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id')) = 'STRING'
        OR (JSON_TYPE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id'))
	IN ('INTEGER', 'UNSIGNED INTEGER')
	AND JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id'))
	    REGEXP '^-{0,1}[0-9]+$'))
        AND CHAR_LENGTH(JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id'))) <= 191
        THEN JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id')) END;
-- 3. The fact, once.
UPDATE orders SET paid_at = COALESCE(paid_at, :received_at)
WHERE id = CASE WHEN (JSON_TYPE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id')) = 'STRING'
        OR (JSON_TYPE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id'))
	IN ('INTEGER', 'UNSIGNED INTEGER')
	AND JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id'))
	    REGEXP '^-{0,1}[0-9]+$'))
        AND CHAR_LENGTH(JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id'))) <= 191
        THEN JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id')) END;

-- on: charge.refunded
-- Stripe: data.object is the Charge; its metadata carries the order id.
-- 1. Creates or locks the order's row.
INSERT INTO orders (id, created_at, updated_at)
SELECT CASE WHEN (JSON_TYPE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id')) = 'STRING'
        OR (JSON_TYPE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id'))
	IN ('INTEGER', 'UNSIGNED INTEGER')
	AND JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id'))
	    REGEXP '^-{0,1}[0-9]+$'))
        AND CHAR_LENGTH(JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id'))) <= 191
        THEN JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id')) END AS v_id,
    :received_at, :received_at
FROM DUAL HAVING v_id IS NOT NULL
ON DUPLICATE KEY UPDATE updated_at = VALUES(updated_at);
-- 2. order.refunded, if no event has recorded the refund yet (the row
-- is there: step 1 made or locked it).
INSERT INTO outbox (topic, payload)
SELECT 'order.refunded', JSON_OBJECT('type', 'order.refunded',
    'order_id', orders.id,
    'event_type', :type, 'event_key', :key)
FROM orders
WHERE orders.refunded_at IS NULL AND orders.id = CASE WHEN (JSON_TYPE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id')) = 'STRING'
        OR (JSON_TYPE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id'))
	IN ('INTEGER', 'UNSIGNED INTEGER')
	AND JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id'))
	    REGEXP '^-{0,1}[0-9]+$'))
        AND CHAR_LENGTH(JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id'))) <= 191
        THEN JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id')) END;
-- 3. The fact, once.
UPDATE orders SET refunded_at = COALESCE(refunded_at, :received_at)
WHERE id = CASE WHEN (JSON_TYPE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id')) = 'STRING'
        OR (JSON_TYPE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id'))
	IN ('INTEGER', 'UNSIGNED INTEGER')
	AND JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id'))
	    REGEXP '^-{0,1}[0-9]+$'))
        AND CHAR_LENGTH(JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id'))) <= 191
        THEN JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id')) END;

-- on: payment_intent.canceled
-- Cancels a pending order; a paid order stays paid (see the status).
INSERT INTO orders (id, cancelled_at, created_at, updated_at)
SELECT CASE WHEN (JSON_TYPE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id')) = 'STRING'
        OR (JSON_TYPE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id'))
	IN ('INTEGER', 'UNSIGNED INTEGER')
	AND JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id'))
	    REGEXP '^-{0,1}[0-9]+$'))
        AND CHAR_LENGTH(JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id'))) <= 191
        THEN JSON_UNQUOTE(JSON_EXTRACT(:payload, '$.data.object.metadata.order_id')) END AS v_id,
    :received_at, :received_at, :received_at
FROM DUAL HAVING v_id IS NOT NULL
ON DUPLICATE KEY UPDATE
    cancelled_at = COALESCE(cancelled_at, VALUES(cancelled_at)),
    updated_at = VALUES(updated_at);
