-- SPDX-License-Identifier: MIT
-- oncehook actions: a WordPress shop (WooCommerce) paid through Stripe,
-- for the MariaDB/MySQL store.
--
-- What it shows: oncehook's claim of an event and the shop's own order
-- row commit in one transaction, in the shop's database.  oncehook's
-- tables (ONCEHOOK_DB_PREFIX, default oncehook_) sit beside WordPress's
-- in the same database; the sections below UPDATE WooCommerce's order
-- table directly.  A payment event sets the order processing once,
-- whatever the retries; if anything fails, neither the claim nor the
-- order's change is kept, and Stripe's retry runs the section again.
--
-- The setup part (this comment) creates nothing: the shop's tables are
-- WooCommerce's, made by WooCommerce.  oncehook init only makes its own.
--
-- The tables are WooCommerce's "High-Performance Order Storage" (HPOS,
-- the default since WooCommerce 8.2): one row per order in wp_wc_orders
-- (id, status, currency, total_amount, transaction_id, date_updated_gmt,
-- ...).  "wp_" is WordPress's default table prefix ($table_prefix in
-- wp-config.php); a site with another prefix edits the names below.
-- The Stripe side: the site puts the WooCommerce order id in the
-- metadata when it creates the PaymentIntent or Checkout Session
-- (metadata[order_id]=42); it comes back in data.object.metadata.order_id,
-- a string ("42") or, from other senders, a JSON integer: both are
-- taken, as digits only; an event without one, or naming no order of
-- this shop, is recorded and changes nothing.
--
-- The statuses:
--   payment   wc-pending, wc-on-hold, wc-failed -> wc-processing, with
--             the payment's id in transaction_id.  An order already
--             processing or completed is never moved back, and one
--             refunded or cancelled is not made processing: the event
--             is recorded and changes nothing.
--   refund    wc-processing, wc-completed -> wc-refunded, on a full
--             refund only (Stripe sends charge.refunded for partial
--             refunds too; data.object.refunded is true on the full one).
-- Unlike sql/actions/mysql/orders.sql, which records facts and derives
-- the status, this writes the shop's one status column: a refund that
-- arrives before its payment finds the order pending and changes
-- nothing, and the payment then makes it processing.  Stripe sends the
-- refund after the payment, but does not promise the order of
-- deliveries; the site's own reconciliation catches that case.
--
-- What it does not do: WooCommerce's own code does not run (no stock
-- reduction, no customer e-mail, no order note, no date_paid_gmt in
-- wp_wc_order_operational_data, no copy to wp_posts when HPOS
-- compatibility mode keeps one; an object cache may hold the old status
-- until it expires).  It does not compare the amount with the order's
-- total (Stripe's amounts are in the smallest unit, 0 decimals for
-- some currencies): a site that must adds the condition to the WHEREs.
-- What the site's code is told is the outbox (docs/operations.md):
-- order.paid and order.refunded rows, written in the same transaction,
-- each only by the event that changes the order's status, delivered
-- after the commit by "oncehook deliver" (e.g. to a small endpoint that
-- calls WooCommerce's payment_complete() for the stock and e-mails).
-- Their payload: {"type", "order_id" (a string), "amount", "currency",
-- "customer_email", "payment_id" (order.paid), "event_type",
-- "event_key"}, the amount as Stripe wrote it.
--
-- The event is read once per statement, by JSON_TABLE(:payload, ...)
-- (MariaDB 10.6, MySQL 8.0.4; sql/actions/mysql/orders.sql says why
-- and how), and the row found by its primary key; no derived table.
-- The paying UPDATEs read it twice, the payment's id in their SET: an
-- UPDATE joined to a JSON_TABLE makes a temporary table.
--
-- Each section first locks the order's row (an UPDATE that changes
-- nothing), so that two events of one order in two transactions at once
-- are run one after the other, then writes its outbox row if the order's
-- status is one the change applies to, then changes it: the outbox row
-- is written exactly when the change is made.
--
-- Privileges: besides its own tables, oncehook's database user needs
-- only SELECT and UPDATE on wp_wc_orders:
--   GRANT SELECT, UPDATE ON wordpress.wp_wc_orders TO 'oncehook'@'localhost';
--
-- Dates: date_updated_gmt is computed from :received_at as
-- '1970-01-01' + N seconds, which is UTC whatever the session's
-- time_zone (FROM_UNIXTIME() would give the session's local time).

-- on: payment_intent.succeeded
-- Stripe: data.object is the PaymentIntent (amount in the smallest unit).
-- 1. Lock the order's row.
UPDATE wp_wc_orders SET status = status
WHERE id = (SELECT CASE WHEN JSON_TYPE(p.j_id) IN ('STRING', 'INTEGER', 'UNSIGNED INTEGER')
	AND JSON_UNQUOTE(p.j_id) REGEXP '^[0-9]{1,19}$'
	THEN CAST(JSON_UNQUOTE(p.j_id) AS UNSIGNED) END
    FROM JSON_TABLE(:payload, '$' COLUMNS (
	j_id JSON PATH '$.data.object.metadata.order_id')) AS p);
-- 2. order.paid, if the order is one this payment changes.
INSERT INTO outbox (topic, payload)
SELECT 'order.paid', JSON_OBJECT('type', 'order.paid',
    'order_id', CAST(o.id AS CHAR),
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
JOIN wp_wc_orders AS o ON o.id = CASE WHEN JSON_TYPE(p.j_id) IN ('STRING', 'INTEGER', 'UNSIGNED INTEGER')
	AND JSON_UNQUOTE(p.j_id) REGEXP '^[0-9]{1,19}$'
	THEN CAST(JSON_UNQUOTE(p.j_id) AS UNSIGNED) END
WHERE o.status IN ('wc-pending', 'wc-on-hold', 'wc-failed');
-- 3. The order is paid.
UPDATE wp_wc_orders SET status = 'wc-processing',
    transaction_id = COALESCE((SELECT CASE WHEN JSON_TYPE(p.j_payment) = 'STRING'
	    AND CHAR_LENGTH(JSON_UNQUOTE(p.j_payment)) BETWEEN 1 AND 100
	    THEN JSON_UNQUOTE(p.j_payment) END
	FROM JSON_TABLE(:payload, '$' COLUMNS (
	    j_payment JSON PATH '$.data.object.id')) AS p),
	transaction_id),
    date_updated_gmt =
	DATE_ADD('1970-01-01 00:00:00', INTERVAL :received_at SECOND)
WHERE status IN ('wc-pending', 'wc-on-hold', 'wc-failed')
AND id = (SELECT CASE WHEN JSON_TYPE(p.j_id) IN ('STRING', 'INTEGER', 'UNSIGNED INTEGER')
	AND JSON_UNQUOTE(p.j_id) REGEXP '^[0-9]{1,19}$'
	THEN CAST(JSON_UNQUOTE(p.j_id) AS UNSIGNED) END
    FROM JSON_TABLE(:payload, '$' COLUMNS (
	j_id JSON PATH '$.data.object.metadata.order_id')) AS p);

-- on: checkout.session.completed
-- Stripe: data.object is the Checkout Session.  A session paid by a
-- delayed method completes unpaid (payment_status "unpaid"): only a
-- "paid" one changes the order.
-- 1. Lock the order's row.
UPDATE wp_wc_orders SET status = status
WHERE id = (SELECT CASE WHEN JSON_TYPE(p.j_id) IN ('STRING', 'INTEGER', 'UNSIGNED INTEGER')
	AND JSON_UNQUOTE(p.j_id) REGEXP '^[0-9]{1,19}$'
	THEN CAST(JSON_UNQUOTE(p.j_id) AS UNSIGNED) END
    FROM JSON_TABLE(:payload, '$' COLUMNS (
	j_id JSON PATH '$.data.object.metadata.order_id')) AS p);
-- 2. order.paid, if the order is one this payment changes.
INSERT INTO outbox (topic, payload)
SELECT 'order.paid', JSON_OBJECT('type', 'order.paid',
    'order_id', CAST(o.id AS CHAR),
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
	j_payment JSON PATH '$.data.object.payment_intent',
	j_status JSON PATH '$.data.object.payment_status')) AS p
JOIN wp_wc_orders AS o ON o.id = CASE WHEN JSON_TYPE(p.j_id) IN ('STRING', 'INTEGER', 'UNSIGNED INTEGER')
	AND JSON_UNQUOTE(p.j_id) REGEXP '^[0-9]{1,19}$'
	AND JSON_UNQUOTE(p.j_status) = 'paid'
	THEN CAST(JSON_UNQUOTE(p.j_id) AS UNSIGNED) END
WHERE o.status IN ('wc-pending', 'wc-on-hold', 'wc-failed');
-- 3. The order is paid.
UPDATE wp_wc_orders SET status = 'wc-processing',
    transaction_id = COALESCE((SELECT CASE WHEN JSON_TYPE(p.j_payment) = 'STRING'
	    AND CHAR_LENGTH(JSON_UNQUOTE(p.j_payment)) BETWEEN 1 AND 100
	    THEN JSON_UNQUOTE(p.j_payment) END
	FROM JSON_TABLE(:payload, '$' COLUMNS (
	    j_payment JSON PATH '$.data.object.payment_intent')) AS p),
	transaction_id),
    date_updated_gmt =
	DATE_ADD('1970-01-01 00:00:00', INTERVAL :received_at SECOND)
WHERE status IN ('wc-pending', 'wc-on-hold', 'wc-failed')
AND id = (SELECT CASE WHEN JSON_TYPE(p.j_id) IN ('STRING', 'INTEGER', 'UNSIGNED INTEGER')
	AND JSON_UNQUOTE(p.j_id) REGEXP '^[0-9]{1,19}$'
	AND JSON_UNQUOTE(p.j_status) = 'paid'
	THEN CAST(JSON_UNQUOTE(p.j_id) AS UNSIGNED) END
    FROM JSON_TABLE(:payload, '$' COLUMNS (
	j_id JSON PATH '$.data.object.metadata.order_id',
	j_status JSON PATH '$.data.object.payment_status')) AS p);

-- on: charge.refunded
-- Stripe: data.object is the Charge; its metadata carries the order id.
-- Only a full refund (data.object.refunded true) changes the order.
-- 1. Lock the order's row.
UPDATE wp_wc_orders SET status = status
WHERE id = (SELECT CASE WHEN JSON_TYPE(p.j_id) IN ('STRING', 'INTEGER', 'UNSIGNED INTEGER')
	AND JSON_UNQUOTE(p.j_id) REGEXP '^[0-9]{1,19}$'
	THEN CAST(JSON_UNQUOTE(p.j_id) AS UNSIGNED) END
    FROM JSON_TABLE(:payload, '$' COLUMNS (
	j_id JSON PATH '$.data.object.metadata.order_id')) AS p);
-- 2. order.refunded, if the order is one this refund changes.
INSERT INTO outbox (topic, payload)
SELECT 'order.refunded', JSON_OBJECT('type', 'order.refunded',
    'order_id', CAST(o.id AS CHAR),
    'event_type', :type, 'event_key', :key)
FROM JSON_TABLE(:payload, '$' COLUMNS (
	j_id JSON PATH '$.data.object.metadata.order_id',
	j_refunded JSON PATH '$.data.object.refunded')) AS p
JOIN wp_wc_orders AS o ON o.id = CASE WHEN JSON_TYPE(p.j_id) IN ('STRING', 'INTEGER', 'UNSIGNED INTEGER')
	AND JSON_UNQUOTE(p.j_id) REGEXP '^[0-9]{1,19}$'
	AND JSON_TYPE(p.j_refunded) = 'BOOLEAN'
	AND JSON_UNQUOTE(p.j_refunded) = 'true'
	THEN CAST(JSON_UNQUOTE(p.j_id) AS UNSIGNED) END
WHERE o.status IN ('wc-processing', 'wc-completed');
-- 3. The order is refunded.
UPDATE wp_wc_orders SET status = 'wc-refunded',
    date_updated_gmt =
	DATE_ADD('1970-01-01 00:00:00', INTERVAL :received_at SECOND)
WHERE status IN ('wc-processing', 'wc-completed')
AND id = (SELECT CASE WHEN JSON_TYPE(p.j_id) IN ('STRING', 'INTEGER', 'UNSIGNED INTEGER')
	AND JSON_UNQUOTE(p.j_id) REGEXP '^[0-9]{1,19}$'
	AND JSON_TYPE(p.j_refunded) = 'BOOLEAN'
	AND JSON_UNQUOTE(p.j_refunded) = 'true'
	THEN CAST(JSON_UNQUOTE(p.j_id) AS UNSIGNED) END
    FROM JSON_TABLE(:payload, '$' COLUMNS (
	j_id JSON PATH '$.data.object.metadata.order_id',
	j_refunded JSON PATH '$.data.object.refunded')) AS p);
