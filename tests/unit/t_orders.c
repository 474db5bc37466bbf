/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: the shipped orders domain (sql/actions/orders.sql).
 *
 * The file is loaded as production loads it: store_open(STORE_INIT) runs
 * its setup, store_claim() runs its sections on events that
 * event_extract() built from JSON bodies.  Each action is checked on its
 * own, then every arrival order of payment, refund and cancellation for
 * one order is played and the final status asserted explicitly.
 *
 * With ONCEHOOK_TEST_MYSQL (tests/orders-mariadb.sh), the same tests run
 * on a MariaDB server with sql/actions/mysql/orders.sql: the same
 * out-of-order semantics on both stores.
 *
 * The expected statuses come from the rules in orders.sql:
 *	paid and refunded	-> refunded
 *	paid			-> paid
 *	cancelled, not paid	-> cancelled
 *	otherwise		-> pending
 */
#include "config.h"

#include <sys/stat.h>
#include <sys/types.h>

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "conf.h"
#include "pipeline/event.h"
#include "hook.h"
#include "store/mysql/conn.h"
#include "store/store.h"
#include "tap.h"
#include "testlib.h"

#define EP_GENERIC	0
#define EP_STRIPE	1

static char		 dir[64];
static struct conf	*cf;
static struct store	*st;
static sqlite3		*q;		/* a second connection, to look */
static struct mydb	*my;		/* ... on a MariaDB store */
static long long	 clock_now = 1700000000;

/*
 * Claim body on endpoint epi, received at the next tick of our clock,
 * under key if not NULL (as a header would give it: any bytes), else
 * under the key the endpoint takes from the body.  Returns the claim's
 * result; *atp (if not NULL) gets received_at.
 */
static enum hook_err
deliver_key(size_t epi, const char *body, const char *key, long long *atp)
{
	struct store_claim	 c;
	struct event		 ev;
	struct req		 rq;
	struct why		 why = { "", NULL };
	enum hook_err		 er;

	memset(&rq, 0, sizeof(rq));
	rq.method = "POST";
	if ((er = event_extract(&cf->endpoints[epi], &rq, body, strlen(body),
	    &ev, &why)) != HOOK_OK)
		BAIL("event_extract %s: %d %s", body, (int)er, why.log);
	if (key != NULL) {	/* as from a header no signature covers */
		free(ev.key);
		if ((ev.key = strdup(key)) == NULL)
			BAIL("out of memory");
		ev.key_signed = 0;
	}
	ev.received_at = ++clock_now;
	if (atp != NULL)
		*atp = ev.received_at;
	memset(&c, 0, sizeof(c));
	c.endpoint = epi;
	c.ev = &ev;
	if ((er = store_claim(st, &c, 1)) != HOOK_OK)
		BAIL("store_claim: %d %s", (int)er, c.why);
	if (c.result != HOOK_OK && c.result != HOOK_DUP)
		printf("# claim result %d: %s\n", (int)c.result, c.why);
	event_clear(&ev);
	return c.result;
}

static enum hook_err
deliver(size_t epi, const char *body, long long *atp)
{
	return deliver_key(epi, body, NULL, atp);
}

/* sql with our words for the MariaDB store's ("events", "key"). */
static char *
mysql_words(const char *sql)
{
	static const char *const from[] = { " events ", "key =" };
	static const char *const to[] = { " ord_events ", "event_key =" };
	char	*out, *o;
	size_t	 i;

	if ((out = malloc(2 * strlen(sql) + 64)) == NULL)
		BAIL("out of memory");
	for (o = out; *sql != '\0';) {
		for (i = 0; i < 2; i++)
			if (strncmp(sql, from[i], strlen(from[i])) == 0)
				break;
		if (i < 2) {
			o = stpcpy(o, to[i]);
			sql += strlen(from[i]);
		} else
			*o++ = *sql++;
	}
	*o = '\0';
	return out;
}

/* The first column of the first row of sql, as text, or NULL. */
static const char *
first(const char *sql)
{
	static char	 buf[256];
	struct myres	*r = NULL;
	struct myrow	 row;
	sqlite3_stmt	*s;
	const char	*t = NULL;
	char		*m;

	if (my != NULL) {
		m = mysql_words(sql);
		if (mydb_run(my, strdup(m), &r, NULL) != 0)
			BAIL("%s: %s", m, mydb_error(my));
		free(m);
		if (mydb_next(r, &row) && row.v[0] != NULL) {
			snprintf(buf, sizeof(buf), "%s", row.v[0]);
			t = buf;
		}
		mydb_free(r);
		return t;
	}
	if (sqlite3_prepare_v2(q, sql, -1, &s, NULL) != SQLITE_OK)
		BAIL("%s: %s", sql, sqlite3_errmsg(q));
	if (sqlite3_step(s) == SQLITE_ROW &&
	    (t = (const char *)sqlite3_column_text(s, 0)) != NULL) {
		snprintf(buf, sizeof(buf), "%s", t);
		t = buf;
	}
	sqlite3_finalize(s);
	return t;
}

/* Run sql, which returns nothing. */
static void
exec_sql(const char *sql)
{
	if (my != NULL ? mydb_run(my, strdup(sql), NULL, NULL) !=
	    0 : sqlite3_exec(q, sql, NULL, NULL, NULL) != SQLITE_OK)
		BAIL("%s: %s", sql, my != NULL ? mydb_error(my) :
		    sqlite3_errmsg(q));
}

/* One column of order id as text ("(none)" without a row); a number
 * as SQLite writes it (a DECIMAL's zeros after the point dropped). */
static const char *
col(const char *id, const char *column)
{
	static char	 buf[256];
	char		 sql[512];
	const char	*t;

	if (my != NULL)
		snprintf(sql, sizeof(sql), "SELECT IFNULL(IF(%s REGEXP"
		    " '^-?[0-9]+[.][0-9]+$', TRIM(TRAILING '.' FROM"
		    " TRIM(TRAILING '0' FROM %s)), CAST(%s AS CHAR)),"
		    " '(null)') FROM orders WHERE id = '%s'", column, column,
		    column, id);
	else
		snprintf(sql, sizeof(sql), "SELECT ifnull(CAST(%s AS TEXT), "
		    "'(null)') FROM orders WHERE id = '%s'", column, id);
	t = first(sql);
	snprintf(buf, sizeof(buf), "%s", t != NULL ? t : "(none)");
	return buf;
}

/* 1 if column of order id is the text want. */
static int
is(const char *id, const char *column, const char *want)
{
	return strcmp(col(id, column), want) == 0;
}

static long long
count(const char *sql)
{
	const char	*t = first(sql);

	return t != NULL ? strtoll(t, NULL, 10) : -1;
}

static long long
norders(void)
{
	return count("SELECT count(*) FROM orders");
}

/* Bodies of the events, for order id and a per-event suffix. */
static char *
generic_paid(char *buf, size_t sz, const char *order, const char *evid)
{
	snprintf(buf, sz, "{\"id\":\"%s\",\"type\":\"payment.success\","
	    "\"metadata\":{\"orderId\":\"%s\"},\"transaction\":{\"id\":"
	    "\"tx-%s\",\"amount\":4250,\"currency\":\"EUR\"},\"customer\":"
	    "{\"customerEmail\":\"buyer@example.com\"}}", evid, order, order);
	return buf;
}

static char *
generic_refund(char *buf, size_t sz, const char *order, const char *evid)
{
	snprintf(buf, sz, "{\"id\":\"%s\",\"type\":\"payment.refunded\","
	    "\"metadata\":{\"orderId\":\"%s\"}}", evid, order);
	return buf;
}

static char *
stripe_paid(char *buf, size_t sz, const char *order, const char *evid)
{
	snprintf(buf, sz, "{\"id\":\"%s\",\"object\":\"event\",\"type\":"
	    "\"payment_intent.succeeded\",\"data\":{\"object\":{\"id\":"
	    "\"pi_%s\",\"object\":\"payment_intent\",\"amount\":1999,"
	    "\"currency\":\"usd\",\"receipt_email\":\"s@example.com\","
	    "\"metadata\":{\"order_id\":\"%s\"}}}}", evid, order, order);
	return buf;
}

static char *
stripe_refund(char *buf, size_t sz, const char *order, const char *evid)
{
	snprintf(buf, sz, "{\"id\":\"%s\",\"object\":\"event\",\"type\":"
	    "\"charge.refunded\",\"data\":{\"object\":{\"id\":\"ch_%s\","
	    "\"object\":\"charge\",\"amount_refunded\":1999,\"metadata\":"
	    "{\"order_id\":\"%s\"}}}}", evid, order, order);
	return buf;
}

static char *
stripe_cancel(char *buf, size_t sz, const char *order, const char *evid)
{
	snprintf(buf, sz, "{\"id\":\"%s\",\"object\":\"event\",\"type\":"
	    "\"payment_intent.canceled\",\"data\":{\"object\":{\"id\":"
	    "\"pi_%s\",\"object\":\"payment_intent\",\"metadata\":"
	    "{\"order_id\":\"%s\"}}}}", evid, order, order);
	return buf;
}

static void
test_generic(void)
{
	char		 b[1024];
	long long	 at, at2;
	enum hook_err	 er;
	char		 want[32];

	er = deliver(EP_GENERIC, generic_paid(b, sizeof(b), "o1", "g1"), &at);
	snprintf(want, sizeof(want), "%lld", at);
	CHECK(er == HOOK_OK, "payment.success claimed");
	CHECK(is("o1", "status", "paid"),
	    "payment.success: order created paid (%s)", col("o1", "status"));
	CHECK(is("o1", "amount", "4250") && is("o1", "currency", "EUR"),
	    "payment.success: amount and currency from transaction.*");
	CHECK(is("o1", "customer_email", "buyer@example.com"),
	    "payment.success: email from customer.customerEmail");
	CHECK(is("o1", "payment_id", "tx-o1"),
	    "payment.success: payment id from transaction.id");
	CHECK(is("o1", "paid_at", want) && is("o1", "created_at", want) &&
	    is("o1", "updated_at", want) && is("o1", "refunded_at", "(null)"),
	    "payment.success: paid_at, created_at, updated_at = received_at");

	er = deliver(EP_GENERIC, generic_paid(b, sizeof(b), "o1", "g1"),
	    NULL);
	CHECK(er == HOOK_DUP && is("o1", "updated_at", want),
	    "the same delivery again: HOOK_DUP, order untouched");

	er = deliver(EP_GENERIC, generic_refund(b, sizeof(b), "o1", "g2"),
	    &at2);
	CHECK(er == HOOK_OK && is("o1", "status", "refunded"),
	    "payment.refunded: order refunded (%s)", col("o1", "status"));
	snprintf(want, sizeof(want), "%lld", at2);
	CHECK(is("o1", "refunded_at", want) && is("o1", "updated_at", want),
	    "payment.refunded: refunded_at and updated_at set");
	snprintf(want, sizeof(want), "%lld", at);
	CHECK(is("o1", "amount", "4250") && is("o1", "payment_id", "tx-o1") &&
	    is("o1", "paid_at", want) && is("o1", "created_at", want),
	    "payment.refunded keeps the payment facts");

	at = norders();
	er = deliver(EP_GENERIC, "{\"id\":\"g3\",\"type\":\"webhook.ping\","
	    "\"metadata\":{\"orderId\":\"o-ping\"}}", NULL);
	CHECK(er == HOOK_OK && norders() == at && is("o-ping", "id", "(none)"),
	    "webhook.ping: recorded, no order touched");
	CHECK(count("SELECT count(*) FROM events WHERE key = 'g3' AND "
	    "type = 'webhook.ping'") == 1, "webhook.ping: events row");

	at = norders();
	er = deliver(EP_GENERIC, "{\"id\":\"g4\",\"type\":\"payment.success\","
	    "\"transaction\":{\"id\":\"tx\",\"amount\":1,"
	    "\"currency\":\"EUR\"}}", NULL);
	CHECK(er == HOOK_OK && norders() == at &&
	    count("SELECT count(*) FROM events WHERE key = 'g4'") == 1,
	    "payment.success without an order id: recorded, no order");
	er = deliver(EP_GENERIC, "{\"id\":\"g5\",\"type\":\"payment.refunded\","
	    "\"metadata\":{}}", NULL);
	CHECK(er == HOOK_OK && norders() == at,
	    "payment.refunded without an order id: no order");
	er = deliver(EP_GENERIC, "{\"id\":\"g5o\",\"type\":"
	    "\"payment.success\",\"metadata\":{\"orderId\":{\"a\":1}}}",
	    NULL);
	CHECK(er == HOOK_OK && norders() == at,
	    "payment.success with an object as order id: recorded, no order");
	er = deliver(EP_GENERIC, "{\"id\":\"g5r\",\"type\":"
	    "\"payment.success\",\"metadata\":{\"orderId\":42.5}}", NULL);
	CHECK(er == HOOK_OK && norders() == at,
	    "payment.success with a fractional order id: no order");

	/* A member name written with escapes is the same member. */
	er = deliver(EP_GENERIC, "{\"id\":\"g5u\",\"type\":"
	    "\"payment.success\",\"metadata\":{\"order\\u0049d\":"
	    "\"u8\"},\"transaction\":{\"id\":\"tx-u8\",\"amount\":"
	    "12345678901234567,\"currency\":\"\\u20ac\"},\"customer\":"
	    "{\"customer\\u0045mail\":\"b\\u00fcyer@example.com\"}}", NULL);
	CHECK(er == HOOK_OK && is("u8", "status", "paid") &&
	    is("u8", "amount", "12345678901234567") &&
	    is("u8", "currency", "\xe2\x82\xac") &&
	    is("u8", "customer_email", "b\xc3\xbcyer@example.com"),
	    "payment.success naming \"order\\u0049d\": order paid, amount, "
	    "currency and email read as sent (%s)", col("u8", "status"));
	at = norders();

	er = deliver(EP_GENERIC, "{\"id\":\"g7\",\"type\":\"payment.success\","
	    "\"metadata\":{\"orderId\":42},\"transaction\":{\"id\":\"t42\","
	    "\"amount\":12.5,\"currency\":\"EUR\"}}", NULL);
	er = deliver(EP_GENERIC, "{\"id\":\"g8\",\"type\":"
	    "\"payment.refunded\",\"metadata\":{\"orderId\":\"42\"}}", NULL);
	CHECK(er == HOOK_OK && is("42", "status", "refunded") &&
	    is("42", "amount", "12.5") &&
	    count("SELECT count(*) FROM orders WHERE id = '42'") == 1,
	    "numeric and string order id 42 are one order (%s)",
	    col("42", "status"));
	at = norders();

	er = deliver(EP_GENERIC, "{\"id\":\"g6\",\"type\":\"something.else\","
	    "\"metadata\":{\"orderId\":\"o1\"}}", NULL);
	CHECK(er == HOOK_OK && norders() == at &&
	    is("o1", "status", "refunded"),
	    "unknown type: recorded, no order touched");
}

static void
test_stripe(void)
{
	char		 b[1024];
	long long	 at, n;
	enum hook_err	 er;
	char		 want[32];

	er = deliver(EP_STRIPE, stripe_paid(b, sizeof(b), "s1", "evt_s1"),
	    &at);
	snprintf(want, sizeof(want), "%lld", at);
	CHECK(er == HOOK_OK && is("s1", "status", "paid"),
	    "payment_intent.succeeded: order paid (%s)", col("s1", "status"));
	CHECK(is("s1", "amount", "1999") && is("s1", "currency", "usd") &&
	    is("s1", "customer_email", "s@example.com") &&
	    is("s1", "payment_id", "pi_s1") && is("s1", "paid_at", want),
	    "payment_intent.succeeded: amount, currency, email, payment id");
	CHECK(count("SELECT count(*) FROM events WHERE endpoint = 'stripe' "
	    "AND key = 'evt_s1'") == 1, "stripe event keyed by /id");

	er = deliver(EP_STRIPE, "{\"id\":\"evt_s2\",\"type\":"
	    "\"checkout.session.completed\",\"data\":{\"object\":{\"id\":"
	    "\"cs_1\",\"object\":\"checkout.session\",\"amount_total\":5000,"
	    "\"currency\":\"eur\",\"payment_intent\":\"pi_cs\","
	    "\"customer_details\":{\"email\":\"c@example.com\"},"
	    "\"metadata\":{\"order_id\":\"s2\"}}}}", NULL);
	CHECK(er == HOOK_OK && is("s2", "status", "paid"),
	    "checkout.session.completed: order paid (%s)",
	    col("s2", "status"));
	CHECK(is("s2", "amount", "5000") && is("s2", "currency", "eur") &&
	    is("s2", "customer_email", "c@example.com") &&
	    is("s2", "payment_id", "pi_cs"),
	    "checkout.session.completed: amount_total, customer_details.email,"
	    " payment_intent");

	er = deliver(EP_STRIPE, stripe_refund(b, sizeof(b), "s1", "evt_s3"),
	    NULL);
	CHECK(er == HOOK_OK && is("s1", "status", "refunded") &&
	    !is("s1", "refunded_at", "(null)"),
	    "charge.refunded: order refunded (%s)", col("s1", "status"));
	CHECK(is("s1", "amount", "1999") && is("s1", "paid_at", want),
	    "charge.refunded keeps the payment facts");

	/* A pending order as the site creates it, then cancelled. */
	exec_sql("INSERT INTO orders (id, amount, currency, created_at, "
	    "updated_at) VALUES ('s3', 700, 'usd', 1, 1)");
	CHECK(is("s3", "status", "pending"), "a new order is pending");
	er = deliver(EP_STRIPE, stripe_cancel(b, sizeof(b), "s3", "evt_s4"),
	    NULL);
	CHECK(er == HOOK_OK && is("s3", "status", "cancelled") &&
	    !is("s3", "cancelled_at", "(null)") && is("s3", "amount", "700"),
	    "payment_intent.canceled cancels a pending order (%s)",
	    col("s3", "status"));

	er = deliver(EP_STRIPE, stripe_paid(b, sizeof(b), "s4", "evt_s5"),
	    NULL);
	er = deliver(EP_STRIPE, stripe_cancel(b, sizeof(b), "s4", "evt_s6"),
	    NULL);
	CHECK(er == HOOK_OK && is("s4", "status", "paid"),
	    "payment_intent.canceled leaves a paid order paid (%s)",
	    col("s4", "status"));

	n = norders();
	er = deliver(EP_STRIPE, "{\"id\":\"evt_s7\",\"type\":"
	    "\"payment_intent.succeeded\",\"data\":{\"object\":{\"id\":"
	    "\"pi_x\",\"amount\":5,\"currency\":\"usd\",\"metadata\":{}}}}",
	    NULL);
	CHECK(er == HOOK_OK && norders() == n,
	    "payment_intent.succeeded without order_id: no order");
	er = deliver(EP_STRIPE, "{\"id\":\"evt_s8\",\"type\":"
	    "\"charge.refunded\",\"data\":{\"object\":{\"id\":\"ch_x\"}}}",
	    NULL);
	CHECK(er == HOOK_OK && norders() == n,
	    "charge.refunded without order_id: no order");
	er = deliver(EP_STRIPE, "{\"id\":\"evt_s9\",\"type\":"
	    "\"payment_intent.canceled\",\"data\":{\"object\":{}}}", NULL);
	CHECK(er == HOOK_OK && norders() == n,
	    "payment_intent.canceled without order_id: no order");
	er = deliver(EP_STRIPE, "{\"id\":\"evt_s10\",\"type\":"
	    "\"checkout.session.completed\",\"data\":{\"object\":"
	    "{\"amount_total\":1}}}", NULL);
	CHECK(er == HOOK_OK && norders() == n &&
	    count("SELECT count(*) FROM events WHERE endpoint = 'stripe'") ==
	    10, "checkout.session.completed without order_id: no order; "
	    "every event recorded");
}

/* The kinds of fact, and how each is delivered. */
enum fact { PAID, REFUND, CANCEL };
static const char *const fact_names[] = { "paid", "refund", "cancel" };

typedef char	*(*body_fn)(char *, size_t, const char *, const char *);

/* Deliver facts n of v, in that order, for order id; Stripe format. */
static void
play(const char *id, const enum fact *v, size_t n, int generic)
{
	static const body_fn	 stripe[] = { stripe_paid, stripe_refund,
				    stripe_cancel };
	static const body_fn	 gen[] = { generic_paid, generic_refund,
				    stripe_cancel };
	char			 b[1024], evid[64];
	size_t			 i;
	enum hook_err		 er;

	for (i = 0; i < n; i++) {
		snprintf(evid, sizeof(evid), "%s-%s", id, fact_names[v[i]]);
		er = deliver(generic && v[i] != CANCEL ? EP_GENERIC :
		    EP_STRIPE, (generic ? gen : stripe)[v[i]](b, sizeof(b), id,
		    evid), NULL);
		if (er != HOOK_OK)
			BAIL("%s: %s: %d", id, evid, (int)er);
	}
}

/* The facts as text, "paid,refund,...". */
static char *
names(const enum fact *v, size_t n, char *buf, size_t sz)
{
	size_t	 i;

	buf[0] = '\0';
	for (i = 0; i < n; i++) {
		snprintf(buf + strlen(buf), sz - strlen(buf), "%s%s",
		    i ? "," : "", fact_names[v[i]]);
	}
	return buf;
}

static void
test_permutations(void)
{
	static const enum fact	 three[6][3] = {
		{ PAID, REFUND, CANCEL }, { PAID, CANCEL, REFUND },
		{ REFUND, PAID, CANCEL }, { REFUND, CANCEL, PAID },
		{ CANCEL, PAID, REFUND }, { CANCEL, REFUND, PAID },
	};
	static const struct {
		enum fact	 a, b;
		const char	*want;
	} pairs[] = {
		{ PAID, REFUND, "refunded" },
		{ PAID, CANCEL, "paid" },
		{ REFUND, CANCEL, "cancelled" },
	};
	enum fact	 v[2];
	char		 id[64], what[64], pay[80];
	size_t		 i, j;
	int		 generic;

	for (generic = 0; generic <= 1; generic++)
		for (i = 0; i < 6; i++) {
			snprintf(id, sizeof(id), "p3-%d-%zu", generic, i);
			play(id, three[i], 3, generic);
			CHECK(is(id, "status", "refunded") &&
			    !is(id, "paid_at", "(null)") &&
			    !is(id, "refunded_at", "(null)") &&
			    !is(id, "cancelled_at", "(null)"),
			    "%s %s: refunded, all three facts kept (%s)",
			    generic ? "generic" : "stripe",
			    names(three[i], 3, what, sizeof(what)),
			    col(id, "status"));
			snprintf(pay, sizeof(pay), "%s%s",
			    generic ? "tx-" : "pi_", id);
			CHECK(is(id, "amount", generic ? "4250" : "1999") &&
			    is(id, "payment_id", pay),
			    "%s %s: amount and payment id kept",
			    generic ? "generic" : "stripe",
			    names(three[i], 3, what, sizeof(what)));
		}

	for (generic = 0; generic <= 1; generic++)
		for (i = 0; i < sizeof(pairs) / sizeof(pairs[0]); i++)
			for (j = 0; j < 2; j++) {
				v[0] = j ? pairs[i].b : pairs[i].a;
				v[1] = j ? pairs[i].a : pairs[i].b;
				snprintf(id, sizeof(id), "p2-%d-%zu-%zu",
				    generic, i, j);
				play(id, v, 2, generic);
				CHECK(is(id, "status", pairs[i].want),
				    "%s %s: %s (got %s)",
				    generic ? "generic" : "stripe",
				    names(v, 2, what, sizeof(what)),
				    pairs[i].want, col(id, "status"));
			}

	for (i = 0; i < 3; i++) {
		v[0] = (enum fact)i;
		snprintf(id, sizeof(id), "p1-%zu", i);
		play(id, v, 1, 0);
		CHECK(is(id, "status", i == PAID ? "paid" : i == REFUND ?
		    "pending" : "cancelled"),
		    "stripe %s alone: %s (got %s)", fact_names[i],
		    i == PAID ? "paid" : i == REFUND ? "pending" : "cancelled",
		    col(id, "status"));
	}
}

/*
 * Stripe sends both checkout.session.completed and
 * payment_intent.succeeded for one Checkout payment, in either order.
 */
static void
test_checkout_pair(void)
{
	static const char	*cols[] = { "status", "amount", "currency",
				    "customer_email", "payment_id" };
	char			 b[2][1024], row[2][512];
	size_t			 i, j;
	const char		*id;

	for (i = 0; i < 2; i++) {
		id = i ? "pair1" : "pair0";
		snprintf(b[0], sizeof(b[0]), "{\"id\":\"%s-cs\",\"type\":"
		    "\"checkout.session.completed\",\"data\":{\"object\":{"
		    "\"id\":\"cs_%s\",\"amount_total\":2500,\"currency\":"
		    "\"eur\",\"payment_intent\":\"pi_%s\","
		    "\"customer_details\":{\"email\":\"p@example.com\"},"
		    "\"metadata\":{\"order_id\":\"%s\"}}}}", id, id, id, id);
		snprintf(b[1], sizeof(b[1]), "{\"id\":\"%s-pi\",\"type\":"
		    "\"payment_intent.succeeded\",\"data\":{\"object\":{"
		    "\"id\":\"pi_%s\",\"amount\":2500,\"currency\":\"eur\","
		    "\"receipt_email\":null,\"metadata\":{\"order_id\":"
		    "\"%s\"}}}}", id, id, id);
		if (deliver(EP_STRIPE, b[i], NULL) != HOOK_OK ||
		    deliver(EP_STRIPE, b[1 - i], NULL) != HOOK_OK)
			BAIL("checkout pair %s", id);
		row[i][0] = '\0';
		for (j = 0; j < sizeof(cols) / sizeof(cols[0]); j++)
			snprintf(row[i] + strlen(row[i]),
			    sizeof(row[i]) - strlen(row[i]), "%s|",
			    col(id, cols[j]));
	}
	CHECK(strcmp(row[0], "paid|2500|eur|p@example.com|pi_pair0|") == 0,
	    "checkout then payment_intent: %s", row[0]);
	CHECK(strcmp(row[1], "paid|2500|eur|p@example.com|pi_pair1|") == 0,
	    "payment_intent then checkout: %s", row[1]);
}

static void
test_late(void)
{
	char		 b[1024];
	enum hook_err	 er;

	/* A refund before its payment is kept, then applied. */
	er = deliver(EP_GENERIC, generic_refund(b, sizeof(b), "late1",
	    "late1-r"), NULL);
	CHECK(er == HOOK_OK && is("late1", "status", "pending") &&
	    !is("late1", "refunded_at", "(null)") &&
	    is("late1", "paid_at", "(null)"),
	    "refund before payment: pending with refunded_at set (%s)",
	    col("late1", "status"));
	er = deliver(EP_GENERIC, generic_paid(b, sizeof(b), "late1",
	    "late1-p"), NULL);
	CHECK(er == HOOK_OK && is("late1", "status", "refunded") &&
	    is("late1", "amount", "4250") &&
	    is("late1", "payment_id", "tx-late1"),
	    "... the payment lands: refunded, payment facts filled (%s)",
	    col("late1", "status"));

	/* A second, late payment event never undoes the refund. */
	er = deliver(EP_STRIPE, stripe_paid(b, sizeof(b), "late1",
	    "late1-p2"), NULL);
	CHECK(er == HOOK_OK && is("late1", "status", "refunded"),
	    "a late payment from another event keeps it refunded (%s)",
	    col("late1", "status"));
	CHECK(is("late1", "payment_id", "tx-late1"),
	    "the first payment id is kept");

	er = deliver(EP_STRIPE, "{\"id\":\"late2-c\",\"type\":"
	    "\"checkout.session.completed\",\"data\":{\"object\":{"
	    "\"amount_total\":100,\"currency\":\"eur\",\"metadata\":"
	    "{\"order_id\":\"late2\"}}}}", NULL);
	er = deliver(EP_STRIPE, stripe_refund(b, sizeof(b), "late2",
	    "late2-r"), NULL);
	er = deliver(EP_STRIPE, stripe_paid(b, sizeof(b), "late2",
	    "late2-p"), NULL);
	CHECK(er == HOOK_OK && is("late2", "status", "refunded"),
	    "checkout, refund, late payment_intent.succeeded: refunded (%s)",
	    col("late2", "status"));
}

/* MariaDB: the outbox rows of topic for order id. */
static long long
outbox_rows(const char *topic, const char *id)
{
	char	 sql[512];

	snprintf(sql, sizeof(sql), "SELECT count(*) FROM ord_outbox WHERE"
	    " topic = '%s' AND JSON_UNQUOTE(JSON_EXTRACT(payload,"
	    " '$.order_id')) = '%s'", topic, id);
	return count(sql);
}

/*
 * MariaDB: an orders table made by an older mysql/orders.sql (without
 * paid_by and refunded_by) gains the columns at init, and init again
 * leaves it be; an order paid before that gets no second order.paid.
 */
static void
test_mysql_upgrade(void)
{
	char		 body[512], err[256];
	const char	*cols = "SELECT count(*) FROM information_schema.COLUMNS"
	    " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'orders' AND"
	    " COLUMN_NAME IN ('paid_by', 'refunded_by')";
	int		 round;

	exec_sql("DROP TABLE orders");
	exec_sql("CREATE TABLE orders (id VARCHAR(191) NOT NULL PRIMARY KEY,"
	    " status VARCHAR(16) GENERATED ALWAYS AS (CASE WHEN paid_at IS"
	    " NOT NULL AND refunded_at IS NOT NULL THEN 'refunded' WHEN"
	    " paid_at IS NOT NULL THEN 'paid' WHEN cancelled_at IS NOT NULL"
	    " THEN 'cancelled' ELSE 'pending' END) VIRTUAL, amount"
	    " DECIMAL(65,4) NULL, currency TEXT NULL, customer_email TEXT"
	    " NULL, payment_id TEXT NULL, paid_at BIGINT NULL, refunded_at"
	    " BIGINT NULL, cancelled_at BIGINT NULL, created_at BIGINT NOT"
	    " NULL, updated_at BIGINT NOT NULL) ENGINE=InnoDB DEFAULT"
	    " CHARSET=utf8mb4 COLLATE=utf8mb4_bin");
	exec_sql("INSERT INTO orders (id, paid_at, created_at, updated_at)"
	    " VALUES ('up-1', 1, 1, 1), ('up-2', NULL, 1, 1)");
	CHECK(count(cols) == 0, "upgrade: an orders table of before, without"
	    " paid_by and refunded_by");
	/* What oncehook check asks of a store it opens. */
	store_close(st);
	if ((st = store_open(cf, 0, err, sizeof(err))) == NULL)
		BAIL("store_open: %s", err);
	CHECK(store_about(st, err, sizeof(err)) == -1 && strstr(err,
	    "Unknown column") != NULL && strstr(err, "run oncehook init") !=
	    NULL, "upgrade: before init, check names the column and init");
	printf("# %s\n", err);
	for (round = 0; round < 2; round++) {
		store_close(st);
		if ((st = store_open(cf, STORE_INIT, err, sizeof(err))) ==
		    NULL)
			BAIL("store_open: %s", err);
		CHECK(count(cols) == 2, "upgrade: init %s: paid_by and"
		    " refunded_by are there", round == 0 ? "once" : "again");
	}
	CHECK(deliver(EP_GENERIC, generic_paid(body, sizeof(body), "up-1",
	    "up-ev-1"), NULL) == HOOK_OK && is("up-1", "status", "paid") &&
	    is("up-1", "paid_at", "1") && is("up-1", "paid_by", "(null)"),
	    "upgrade: a payment of an order paid before: the first kept");
	CHECK(outbox_rows("order.paid", "up-1") == 0,
	    "upgrade: ... and no order.paid for it");
	CHECK(deliver(EP_GENERIC, generic_paid(body, sizeof(body), "up-2",
	    "up-ev-2"), NULL) == HOOK_OK && is("up-2", "status", "paid") &&
	    !is("up-2", "paid_by", "(null)"),
	    "upgrade: a pending order of before, paid: paid_by set");
	CHECK(outbox_rows("order.paid", "up-2") == 1,
	    "upgrade: ... and one order.paid for it");
}

/*
 * MariaDB: the event that recorded a fact is named by its bytes.  Keys
 * "k" and "k " are two events; in the same second, the second pays an
 * order already paid and writes no order.paid (a padded comparison
 * would take it for the first).  A repeat whose key is not UTF-8 (as
 * an earlier version stored from a header) is processed: its name is
 * bytes, as the key.
 */
static void
test_mysql_keys(void)
{
	char		 body[512];
	enum hook_err	 r[4];

	/* Each second event at its first's second (deliver_key() ticks). */
	r[0] = deliver_key(EP_GENERIC, generic_paid(body, sizeof(body),
	    "ks-1", "x1"), "pad-k", NULL);
	clock_now--;
	r[1] = deliver_key(EP_GENERIC, generic_paid(body, sizeof(body),
	    "ks-1", "x2"), "pad-k ", NULL);
	r[2] = deliver_key(EP_GENERIC, generic_refund(body, sizeof(body),
	    "ks-1", "x3"), "pad-r", NULL);
	clock_now--;
	r[3] = deliver_key(EP_GENERIC, generic_refund(body, sizeof(body),
	    "ks-1", "x4"), "pad-r ", NULL);
	CHECK(r[0] == HOOK_OK && r[1] == HOOK_OK && r[2] == HOOK_OK &&
	    r[3] == HOOK_OK, "keys \"pad-k\" and \"pad-k \" (and refunds)"
	    " in one second: four events processed");
	CHECK(outbox_rows("order.paid", "ks-1") == 1, "... one order.paid");
	CHECK(outbox_rows("order.refunded", "ks-1") == 1,
	    "... one order.refunded");
	CHECK(deliver_key(EP_GENERIC, generic_paid(body, sizeof(body),
	    "ks-2", "x5"), "cafe-1", NULL) == HOOK_OK &&
	    deliver_key(EP_GENERIC, generic_paid(body, sizeof(body), "ks-2",
	    "x6"), "caf\xe9", NULL) == HOOK_OK &&
	    count("SELECT count(*) FROM orders WHERE id = 'ks-2' AND"
	    " paid_by LIKE '% generic cafe-1'") == 1,
	    "a repeat whose key is not UTF-8 (a header's): processed, the"
	    " first event still named");
	CHECK(outbox_rows("order.paid", "ks-2") == 1, "... one order.paid");
	/* The pipeline refuses such keys (pipeline/event.c); one stored
	 * before it did still fails at its JSON_OBJECT(), and must not
	 * leave the statement failing every later event. */
	CHECK(deliver_key(EP_GENERIC, generic_paid(body, sizeof(body),
	    "ks-3", "x7"), "caf\xe9-3", NULL) != HOOK_OK &&
	    outbox_rows("order.paid", "ks-3") == 0,
	    "a first payment whose key is not UTF-8: its action fails");
	CHECK(deliver_key(EP_GENERIC, generic_paid(body, sizeof(body),
	    "ks-4", "x8"), "cafe-4", NULL) == HOOK_OK &&
	    outbox_rows("order.paid", "ks-4") == 1,
	    "the next first payment, on the same connection: processed, "
	    "one order.paid");
}

int
main(void)
{
	char		 db[sizeof(dir) + 32], act[1024], err[512];
	const char	*url = getenv("ONCEHOOK_TEST_MYSQL");
	struct var	 vars[] = {
		{ "ONCEHOOK_DB", db },
		{ "ONCEHOOK_ENDPOINTS", "generic,stripe" },
		{ "ONCEHOOK_GENERIC_SCHEME", "hmac-sha256" },
		{ "ONCEHOOK_GENERIC_SECRET", "generic-secret" },
		{ "ONCEHOOK_GENERIC_KEY", "json:/id" },
		{ "ONCEHOOK_GENERIC_ACTIONS", act },
		{ "ONCEHOOK_STRIPE_SCHEME", "stripe" },
		{ "ONCEHOOK_STRIPE_SECRET", "whsec_test" },
		{ "ONCEHOOK_STRIPE_ACTIONS", act },
		{ "ONCEHOOK_DB_PASSWORD_FILE", getenv("ONCEHOOK_TEST_MYSQL_PW") },
		{ "ONCEHOOK_DB_PREFIX", "ord_" },
		{ NULL, NULL }
	};

	snprintf(dir, sizeof(dir), "/tmp/oncehook-t_orders-XXXXXX");
	if (mkdtemp(dir) == NULL)
		BAIL("mkdtemp: %s", strerror(errno));
	if (url != NULL) {
		snprintf(db, sizeof(db), "%s", url);
		snprintf(act, sizeof(act), "%s/sql/actions/mysql/orders.sql",
		    tap_srcdir());
	} else {
		snprintf(db, sizeof(db), "%s/orders.sqlite", dir);
		snprintf(act, sizeof(act), "%s/sql/actions/orders.sql",
		    tap_srcdir());
		vars[9].name = NULL;	/* the MariaDB store's only */
	}
	if ((cf = conf_load(var_get, vars, err, sizeof(err))) == NULL)
		BAIL("conf_load: %s", err);
	if ((st = store_open(cf, STORE_INIT, err, sizeof(err))) == NULL)
		BAIL("store_open: %s", err);
	if (url != NULL) {
		if (mydb_connect(cf, &my, err, sizeof(err)) != HOOK_OK)
			BAIL("a second connection: %s", err);
		CHECK(count("SELECT COUNT(*) FROM information_schema.COLUMNS"
		    " WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'orders'"
		    " AND COLUMN_NAME = 'status' AND GENERATION_EXPRESSION IS NOT"
		    " NULL AND GENERATION_EXPRESSION <> ''") == 1 &&
		    count("SELECT COUNT(*) FROM information_schema.TABLES WHERE"
		    " TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'orders' AND"
		    " ENGINE = 'InnoDB'") == 1, "mysql/orders.sql setup made the"
		    " table: InnoDB, the status a generated column");
	} else {
		if (sqlite3_open_v2(db, &q, SQLITE_OPEN_READWRITE, NULL) !=
		    SQLITE_OK)
			BAIL("sqlite3_open: %s", sqlite3_errmsg(q));
		CHECK(count("SELECT count(*) FROM sqlite_master WHERE type = "
		    "'table' AND name = 'orders' AND sql LIKE '%WITHOUT ROWID'")
		    == 1 && count("SELECT count(*) FROM "
		    "pragma_table_xinfo('orders') WHERE name = 'status' AND "
		    "hidden = 2") == 1 && count("SELECT count(*) FROM "
		    "sqlite_master WHERE type = 'trigger' AND tbl_name = "
		    "'orders'") == 0, "orders.sql setup made the table: WITHOUT "
		    "ROWID, the status a generated column, no trigger");
	}
	test_generic();
	test_stripe();
	test_permutations();
	test_checkout_pair();
	test_late();
	if (my != NULL) {
		test_mysql_upgrade();
		test_mysql_keys();
	}

	if (q != NULL)
		sqlite3_close(q);
	mydb_close(my);
	store_close(st);
	conf_free(cf);
	tap_rmdir(dir);
	return tap_done();
}
