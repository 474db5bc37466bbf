-- SPDX-License-Identifier: MIT
-- oncehook tests: a minimal WooCommerce order table, for
-- sql/actions/mysql/wordpress.sql on a MariaDB/MySQL test server.  The
-- columns are a subset of WooCommerce's HPOS wp_wc_orders (its names and
-- types), enough for the actions file; the real table has more (tax,
-- customer, billing e-mail, payment method, ...) and its own indexes.
-- Not run by oncehook init: the shop's tables are the shop's.

CREATE TABLE IF NOT EXISTS wp_wc_orders (
	id			BIGINT UNSIGNED NOT NULL,
	status			VARCHAR(20) NULL,
	currency		VARCHAR(10) NULL,
	type			VARCHAR(20) NULL,
	total_amount		DECIMAL(26,8) NULL,
	customer_id		BIGINT UNSIGNED NULL,
	billing_email		VARCHAR(320) NULL,
	date_created_gmt	DATETIME NULL,
	date_updated_gmt	DATETIME NULL,
	payment_method		VARCHAR(100) NULL,
	transaction_id		VARCHAR(100) NULL,
	PRIMARY KEY (id),
	KEY status (status),
	KEY date_created (date_created_gmt)
) ENGINE=InnoDB DEFAULT CHARSET=utf8mb4 COLLATE=utf8mb4_unicode_520_ci;

-- 42, 43 and 44 await their payment; 45 is completed (paid and
-- shipped); 46 was cancelled; 47 is on hold.
INSERT INTO wp_wc_orders (id, status, currency, type, total_amount,
    customer_id, billing_email, date_created_gmt, date_updated_gmt,
    payment_method, transaction_id)
VALUES
	(42, 'wc-pending', 'EUR', 'shop_order', 19.99000000, 1,
	    'ada@example.com', '2024-05-01 10:00:00', '2024-05-01 10:00:00',
	    'stripe', NULL),
	(43, 'wc-pending', 'EUR', 'shop_order', 5.00000000, 2,
	    'bob@example.com', '2024-05-01 10:05:00', '2024-05-01 10:05:00',
	    'stripe', ''),
	(44, 'wc-pending', 'USD', 'shop_order', 120.50000000, 0,
	    'guest@example.com', '2024-05-01 10:10:00', '2024-05-01 10:10:00',
	    'stripe', NULL),
	(45, 'wc-completed', 'EUR', 'shop_order', 7.25000000, 1,
	    'ada@example.com', '2024-04-20 09:00:00', '2024-04-22 15:30:00',
	    'stripe', 'pi_3Old0000000000000000000'),
	(46, 'wc-cancelled', 'EUR', 'shop_order', 3.00000000, 3,
	    'cy@example.com', '2024-04-28 12:00:00', '2024-04-29 12:00:00',
	    'stripe', NULL),
	(47, 'wc-on-hold', 'EUR', 'shop_order', 10.00000000, 3,
	    'cy@example.com', '2024-05-01 11:00:00', '2024-05-01 11:00:00',
	    'stripe', NULL);
