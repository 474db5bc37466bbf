-- SPDX-License-Identifier: MIT
-- oncehook actions: the orders domain.
--
-- The setup part (everything before the first "-- on:" line) is run by
-- "oncehook init"; it must be safe to run again, hence IF NOT EXISTS.
-- Each "-- on: TYPE ..." section runs inside the claim transaction for
-- events of those types, with the event bound as :endpoint, :key, :type,
-- :payload (the JSON text), :payload_hash and :received_at (Unix
-- seconds).  If a statement fails, the event and all its effects roll
-- back, the provider gets a 500 and its retry runs the section again.
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
-- events for payments this site did not start).
--
-- The outbox (docs/operations.md): what the site's own code is told, after
-- the commit, by "oncehook deliver".  The first event that records an
-- order paid writes an order.paid row, the first that records it
-- refunded an order.refunded row, in the same transaction as the order:
-- each once, whatever the retries, and none if the event rolls back.
-- Their payload: {"type" (the topic), "order_id", "amount", "currency",
-- "customer_email", "payment_id" (order.paid), "event_type",
-- "event_key"}, from the event.

CREATE TABLE IF NOT EXISTS orders (
	id		TEXT PRIMARY KEY NOT NULL,
	-- The status is a function of the facts; no action writes it.
	status		TEXT GENERATED ALWAYS AS (
	    CASE
		WHEN paid_at IS NOT NULL AND refunded_at IS NOT NULL
		    THEN 'refunded'
		WHEN paid_at IS NOT NULL THEN 'paid'
		WHEN cancelled_at IS NOT NULL THEN 'cancelled'
		ELSE 'pending'
	    END) VIRTUAL,
	amount		NUMERIC,
	currency	TEXT,
	customer_email	TEXT,
	payment_id	TEXT,
	paid_at		INTEGER,	-- when the payment event arrived
	refunded_at	INTEGER,	-- when the refund event arrived
	cancelled_at	INTEGER,	-- when the cancellation arrived
	created_at	INTEGER NOT NULL,
	updated_at	INTEGER NOT NULL
) WITHOUT ROWID;
-- (A small row keyed by its id: WITHOUT ROWID keeps it in the key's
-- b-tree, one page written per order instead of a table page and an
-- index page; the status is computed when read, so no trigger rewrites
-- the row just written.  A database made before keeps its orders table,
-- with the triggers that then derived the status.)

-- on: payment.success
-- The generic format: {"type":"payment.success","metadata":{"orderId":..},
-- "transaction":{"id":..,"amount":..,"currency":..},
-- "customer":{"customerEmail":..}}
INSERT INTO outbox (topic, payload)
SELECT 'order.paid', json_object('type', 'order.paid',
    'order_id', CAST(json_extract(:payload, '$.metadata.orderId') AS TEXT),
    'amount', json_extract(:payload, '$.transaction.amount'),
    'currency', json_extract(:payload, '$.transaction.currency'),
    'customer_email', json_extract(:payload, '$.customer.customerEmail'),
    'payment_id', json_extract(:payload, '$.transaction.id'),
    'event_type', :type, 'event_key', :key)
WHERE json_type(:payload, '$.metadata.orderId') IN ('text', 'integer')
AND NOT EXISTS (SELECT 1 FROM orders
    WHERE id = CAST(json_extract(:payload, '$.metadata.orderId') AS TEXT)
    AND paid_at IS NOT NULL);
INSERT INTO orders (id, amount, currency, customer_email, payment_id,
    paid_at, created_at, updated_at)
SELECT json_extract(:payload, '$.metadata.orderId'),
    json_extract(:payload, '$.transaction.amount'),
    json_extract(:payload, '$.transaction.currency'),
    json_extract(:payload, '$.customer.customerEmail'),
    json_extract(:payload, '$.transaction.id'),
    :received_at, :received_at, :received_at
WHERE json_type(:payload, '$.metadata.orderId') IN ('text', 'integer')
ON CONFLICT (id) DO UPDATE SET
    amount = COALESCE(amount, excluded.amount),
    currency = COALESCE(currency, excluded.currency),
    customer_email = COALESCE(customer_email, excluded.customer_email),
    payment_id = COALESCE(payment_id, excluded.payment_id),
    paid_at = COALESCE(paid_at, excluded.paid_at),
    updated_at = excluded.updated_at;

-- on: payment.refunded
INSERT INTO outbox (topic, payload)
SELECT 'order.refunded', json_object('type', 'order.refunded',
    'order_id', CAST(json_extract(:payload, '$.metadata.orderId') AS TEXT),
    'event_type', :type, 'event_key', :key)
WHERE json_type(:payload, '$.metadata.orderId') IN ('text', 'integer')
AND NOT EXISTS (SELECT 1 FROM orders
    WHERE id = CAST(json_extract(:payload, '$.metadata.orderId') AS TEXT)
    AND refunded_at IS NOT NULL);
INSERT INTO orders (id, refunded_at, created_at, updated_at)
SELECT json_extract(:payload, '$.metadata.orderId'),
    :received_at, :received_at, :received_at
WHERE json_type(:payload, '$.metadata.orderId') IN ('text', 'integer')
ON CONFLICT (id) DO UPDATE SET
    refunded_at = COALESCE(refunded_at, excluded.refunded_at),
    updated_at = excluded.updated_at;

-- on: webhook.ping
-- Recorded in events only.

-- on: payment_intent.succeeded
-- Stripe: data.object is the PaymentIntent (amount in the smallest unit).
INSERT INTO outbox (topic, payload)
SELECT 'order.paid', json_object('type', 'order.paid',
    'order_id', CAST(json_extract(:payload, '$.data.object.metadata.order_id') AS TEXT),
    'amount', json_extract(:payload, '$.data.object.amount'),
    'currency', json_extract(:payload, '$.data.object.currency'),
    'customer_email', json_extract(:payload, '$.data.object.receipt_email'),
    'payment_id', json_extract(:payload, '$.data.object.id'),
    'event_type', :type, 'event_key', :key)
WHERE json_type(:payload, '$.data.object.metadata.order_id') IN ('text', 'integer')
AND NOT EXISTS (SELECT 1 FROM orders
    WHERE id = CAST(json_extract(:payload, '$.data.object.metadata.order_id') AS TEXT)
    AND paid_at IS NOT NULL);
INSERT INTO orders (id, amount, currency, customer_email, payment_id,
    paid_at, created_at, updated_at)
SELECT json_extract(:payload, '$.data.object.metadata.order_id'),
    json_extract(:payload, '$.data.object.amount'),
    json_extract(:payload, '$.data.object.currency'),
    json_extract(:payload, '$.data.object.receipt_email'),
    json_extract(:payload, '$.data.object.id'),
    :received_at, :received_at, :received_at
WHERE json_type(:payload, '$.data.object.metadata.order_id') IN ('text', 'integer')
ON CONFLICT (id) DO UPDATE SET
    amount = COALESCE(amount, excluded.amount),
    currency = COALESCE(currency, excluded.currency),
    customer_email = COALESCE(customer_email, excluded.customer_email),
    payment_id = COALESCE(payment_id, excluded.payment_id),
    paid_at = COALESCE(paid_at, excluded.paid_at),
    updated_at = excluded.updated_at;

-- on: checkout.session.completed
-- Stripe: data.object is the Checkout Session.
INSERT INTO outbox (topic, payload)
SELECT 'order.paid', json_object('type', 'order.paid',
    'order_id', CAST(json_extract(:payload, '$.data.object.metadata.order_id') AS TEXT),
    'amount', json_extract(:payload, '$.data.object.amount_total'),
    'currency', json_extract(:payload, '$.data.object.currency'),
    'customer_email', json_extract(:payload, '$.data.object.customer_details.email'),
    'payment_id', json_extract(:payload, '$.data.object.payment_intent'),
    'event_type', :type, 'event_key', :key)
WHERE json_type(:payload, '$.data.object.metadata.order_id') IN ('text', 'integer')
AND NOT EXISTS (SELECT 1 FROM orders
    WHERE id = CAST(json_extract(:payload, '$.data.object.metadata.order_id') AS TEXT)
    AND paid_at IS NOT NULL);
INSERT INTO orders (id, amount, currency, customer_email, payment_id,
    paid_at, created_at, updated_at)
SELECT json_extract(:payload, '$.data.object.metadata.order_id'),
    json_extract(:payload, '$.data.object.amount_total'),
    json_extract(:payload, '$.data.object.currency'),
    json_extract(:payload, '$.data.object.customer_details.email'),
    json_extract(:payload, '$.data.object.payment_intent'),
    :received_at, :received_at, :received_at
WHERE json_type(:payload, '$.data.object.metadata.order_id') IN ('text', 'integer')
ON CONFLICT (id) DO UPDATE SET
    amount = COALESCE(amount, excluded.amount),
    currency = COALESCE(currency, excluded.currency),
    customer_email = COALESCE(customer_email, excluded.customer_email),
    payment_id = COALESCE(payment_id, excluded.payment_id),
    paid_at = COALESCE(paid_at, excluded.paid_at),
    updated_at = excluded.updated_at;

-- on: charge.refunded
-- Stripe: data.object is the Charge; its metadata carries the order id.
INSERT INTO outbox (topic, payload)
SELECT 'order.refunded', json_object('type', 'order.refunded',
    'order_id', CAST(json_extract(:payload, '$.data.object.metadata.order_id') AS TEXT),
    'event_type', :type, 'event_key', :key)
WHERE json_type(:payload, '$.data.object.metadata.order_id') IN ('text', 'integer')
AND NOT EXISTS (SELECT 1 FROM orders
    WHERE id = CAST(json_extract(:payload, '$.data.object.metadata.order_id') AS TEXT)
    AND refunded_at IS NOT NULL);
INSERT INTO orders (id, refunded_at, created_at, updated_at)
SELECT json_extract(:payload, '$.data.object.metadata.order_id'),
    :received_at, :received_at, :received_at
WHERE json_type(:payload, '$.data.object.metadata.order_id') IN ('text', 'integer')
ON CONFLICT (id) DO UPDATE SET
    refunded_at = COALESCE(refunded_at, excluded.refunded_at),
    updated_at = excluded.updated_at;

-- on: payment_intent.canceled
-- Cancels a pending order; a paid order stays paid (see the status).
INSERT INTO orders (id, cancelled_at, created_at, updated_at)
SELECT json_extract(:payload, '$.data.object.metadata.order_id'),
    :received_at, :received_at, :received_at
WHERE json_type(:payload, '$.data.object.metadata.order_id') IN ('text', 'integer')
ON CONFLICT (id) DO UPDATE SET
    cancelled_at = COALESCE(cancelled_at, excluded.cancelled_at),
    updated_at = excluded.updated_at;
