"""The oncehook end-to-end scenarios, run against a lighttpd that
tests/e2e-lighttpd.sh started with a filled-in conf-examples file.

Prints one line per scenario, "ok - ..." or "not ok - ..." (the shell
numbers them), with "#" lines saying what differed.  Exit status 0 if all
passed, 1 if some failed, 2 on a harness error.

Every request is signed here, with Python's hmac (hookclient.py), and
every effect is read back from the database file with Python's sqlite3.
Standard library only.
"""

import argparse
import json
import os
import signal
import socket
import sys
import threading
import time
import traceback

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import hookclient  # noqa: E402
from hookclient import dumps  # noqa: E402

GENERIC = "/hooks/shop"         # endpoint shop: hmac-sha256
STRIPE = "/hooks/stripe"        # endpoint stripe: stripe


class Failed(Exception):
    """A check failed hard enough that the scenario cannot go on."""


class Checks:
    """The checks of one scenario: every failure is kept, with what was
    expected and what came back."""

    def __init__(self):
        self.failures = []

    def true(self, cond, what):
        if not cond:
            self.failures.append(what)
        return bool(cond)

    def eq(self, got, want, what):
        if got != want:
            self.failures.append("%s: got %r, want %r" % (what, got, want))
            return False
        return True

    def must(self, cond, what):
        if not self.true(cond, what):
            raise Failed(what)

    def response(self, r, code, what, **fields):
        """Status, Content-Type: application/json, a JSON object body,
        and the given fields of it (a value, or True for "a non-empty
        string").  Returns the JSON object (or {})."""
        ok = self.eq(r.status, code, "%s: status" % what)
        ct = r.header("content-type") or ""
        ok &= self.true(ct.split(";")[0].strip() == "application/json",
                        "%s: Content-Type is %r, want application/json"
                        % (what, ct))
        body = r.json if isinstance(r.json, dict) else None
        ok &= self.true(body is not None, "%s: body is not a JSON object: %r"
                        % (what, r.body[:200]))
        body = body or {}
        for k, v in fields.items():
            if v is True:
                ok &= self.true(isinstance(body.get(k), str) and body[k],
                                "%s: body field %r missing or empty in %r"
                                % (what, k, body))
            else:
                ok &= self.eq(body.get(k), v, "%s: body field %r" % (what, k))
        if code >= 400:
            ok &= self.true(isinstance(body.get("error"), str) and
                            body["error"], "%s: no \"error\" in the body %r"
                            % (what, body))
            ok &= self.true("status" not in body or body["status"] not in
                            ("processed", "already_processed"),
                            "%s: an error says %r" % (what, body))
        if not ok:
            self.failures.append("%s: response was %r" % (what, r))
        return body


class Suite:
    def __init__(self, a):
        self.a = a
        self.mode = a.mode
        self.http = hookclient.Client("127.0.0.1", a.port)
        self.db = hookclient.Db(a.db)
        self.requests = 0       # sent to oncehook (one log line each)
        self.failed = 0
        self.s1 = None          # the first delivery, reused later

    # -- plumbing -------------------------------------------------------

    def run(self, name, fn):
        t = Checks()
        try:
            fn(t)
        except Failed:
            pass
        except Exception:       # a harness error inside one scenario
            t.failures.append("exception:\n" + traceback.format_exc())
        if t.failures:
            self.failed += 1
            print("not ok - %s: %s" % (self.mode, name))
            for f in t.failures:
                for line in str(f).splitlines():
                    print("#   " + line)
            tail = self.log_lines()[-3:]
            if tail:
                print("#   last oncehook log lines:")
                for line in tail:
                    print("#     " + line)
        else:
            print("ok - %s: %s" % (self.mode, name))
        sys.stdout.flush()

    def log_lines(self):
        """oncehook's request log lines so far, from every log given."""
        lines = []
        for p in self.a.log:
            try:
                with open(p, "rb") as f:
                    lines += f.read().decode("utf-8", "replace").splitlines()
            except OSError:
                pass
        return [ln for ln in lines if " outcome=" in ln and "status=" in ln]

    def count(self):
        self.requests += 1

    def post_shop(self, body, secret=None, **kw):
        self.count()
        return self.http.post_hmac(GENERIC, secret or self.a.shop_secret,
                                   body, **kw)

    def post_stripe(self, body, t=None, secret=None, **kw):
        self.count()
        return self.http.post_stripe(STRIPE, secret or self.a.stripe_secret,
                                     body, t, **kw)

    def evid(self, tag):
        return "evt_%s_%s" % (self.mode, tag)

    @staticmethod
    def generic(evid, typ, order, amount=49.99, currency="USD",
                email="a@example.com", tx="tx_1"):
        return dumps({
            "eventId": evid,
            "type": typ,
            "metadata": {"orderId": order},
            "transaction": {"id": tx, "amount": amount,
                            "currency": currency},
            "customer": {"customerEmail": email},
        })

    @staticmethod
    def stripe_event(evid, typ, order, obj_id="pi_1", amount=4999,
                     currency="usd"):
        obj = {"id": obj_id, "amount": amount, "currency": currency,
               "metadata": {"order_id": order}}
        return dumps({"id": evid, "type": typ, "data": {"object": obj}})

    def totals(self):
        """Rows in the tables a request could have written."""
        return {t: self.db.scalar("SELECT count(*) FROM " + t)
                for t in ("events", "conflicts", "orders")}

    def events(self, endpoint, key):
        return self.db.rows("SELECT * FROM events WHERE endpoint = ? AND "
                            "key = ?", (endpoint, key))

    def order(self, oid):
        return self.db.one("SELECT * FROM orders WHERE id = ?", (oid,))

    def nothing_stored(self, t, before, what):
        t.eq(self.totals(), before, "%s: rows in events, conflicts, orders"
             % what)

    # -- scenarios ------------------------------------------------------

    def s01_first_delivery(self, t):
        key = self.evid("s1")
        body = self.generic(key, "payment.success", "42")
        self.s1 = (key, body)
        before = self.totals()
        now = int(time.time())
        r = self.post_shop(body)
        t.response(r, 200, "first delivery", status="processed", key=key)
        t.true(r.header("idempotent-replayed") is None,
               "first delivery answered Idempotent-Replayed")
        ev = self.events("shop", key)
        t.must(t.eq(len(ev), 1, "events rows for the key"), "no event row")
        ev = ev[0]
        t.eq(ev["type"], "payment.success", "events.type")
        t.eq(ev["status"], "processed", "events.status")
        t.eq(ev["payload"], body.decode(), "events.payload (the raw body)")
        t.true(abs(ev["received_at"] - now) < 120,
               "events.received_at %r is not now (%d)"
               % (ev["received_at"], now))
        t.true(ev["processed_at"] is not None, "events.processed_at is NULL")
        t.true(ev["expires_at"] is None or
               ev["expires_at"] - ev["received_at"] >= 3 * 86400,
               "events.expires_at %r: kept less than Stripe's 3-day retry "
               "horizon" % ev["expires_at"])
        t.true(len(ev["payload_hash"] or "") == 64,
               "events.payload_hash %r is not a SHA-256 hex"
               % ev["payload_hash"])
        o = self.order("42")
        t.must(t.true(o is not None, "order 42 was not created"), "no order")
        t.eq(o["status"], "paid", "order 42 status")
        t.eq(float(o["amount"]), 49.99, "order 42 amount")
        t.eq(o["currency"], "USD", "order 42 currency")
        t.eq(o["customer_email"], "a@example.com", "order 42 customer_email")
        t.eq(o["payment_id"], "tx_1", "order 42 payment_id")
        t.true(o["paid_at"] is not None, "order 42 paid_at is NULL")
        after = self.totals()
        t.eq(after["events"] - before["events"], 1, "new events rows")
        t.eq(after["orders"] - before["orders"], 1, "new orders rows")

    def s02_retry(self, t):
        t.must(self.s1 is not None, "needs the first delivery")
        key, body = self.s1
        o_before = self.order("42")
        before = self.totals()
        r = self.post_shop(body)
        t.response(r, 200, "retry", status="already_processed", key=key)
        t.eq(r.header("idempotent-replayed"), "true",
             "retry: Idempotent-Replayed header")
        # The same event re-serialised (keys reordered, white space): the
        # payload hash is over the canonical JSON, so still a replay.
        obj = json.loads(body)
        body2 = json.dumps(dict(reversed(list(obj.items()))),
                           indent=1).encode()
        r = self.post_shop(body2)
        t.response(r, 200, "re-serialised retry", status="already_processed",
                   key=key)
        t.eq(r.header("idempotent-replayed"), "true",
             "re-serialised retry: Idempotent-Replayed header")
        t.eq(len(self.events("shop", key)), 1, "events rows for the key")
        t.eq(self.order("42"), o_before, "order 42 after the retries")
        self.nothing_stored(t, before, "retries")

    def s03_bad_signatures(self, t):
        key = self.evid("s3")
        body = self.generic(key, "payment.success", "31")
        before = self.totals()
        cases = []
        # Signed, then one byte of the body changed.
        tampered = body.replace(b"49.99", b"0.01")
        sig = hookclient.sign_hmac_sha256(self.a.shop_secret, body)
        self.count()
        cases.append(("tampered body", self.http.post(
            GENERIC, tampered, {"X-Webhook-Signature": sig})))
        cases.append(("wrong secret", self.post_shop(
            body, secret="not-the-secret")))
        self.count()
        cases.append(("missing signature header",
                      self.http.post(GENERIC, body)))
        self.count()
        cases.append(("malformed signature header", self.http.post(
            GENERIC, body, {"X-Webhook-Signature": "sha256=zz"})))
        # The same on the Stripe endpoint.
        sbody = self.stripe_event(self.evid("s3s"), "payment_intent.succeeded",
                                  "32")
        cases.append(("stripe: wrong secret", self.post_stripe(
            sbody, secret="whsec_wrong")))
        stampered = sbody.replace(b"4999", b"1")
        self.count()
        cases.append(("stripe: tampered body", self.http.post(
            STRIPE, stampered, {"Stripe-Signature": hookclient.sign_stripe(
                self.a.stripe_secret, sbody)})))
        self.count()
        cases.append(("stripe: missing signature header",
                      self.http.post(STRIPE, sbody)))
        for what, r in cases:
            t.response(r, 401, what, error="invalid_signature")
        t.eq(self.events("shop", key), [], "events rows for the key")
        t.eq(self.order("31"), None, "order 31")
        t.eq(self.order("32"), None, "order 32")
        self.nothing_stored(t, before, "bad signatures")

    def s04_stripe_timestamps(self, t):
        key = self.evid("s4")
        body = self.stripe_event(key, "payment_intent.succeeded", "43")
        before = self.totals()
        now = int(time.time())
        r = self.post_stripe(body, t=now - 3600)
        t.response(r, 400, "an hour old", error="stale_timestamp")
        r = self.post_stripe(body, t=now + 3600)
        t.response(r, 400, "an hour ahead", error="stale_timestamp")
        self.nothing_stored(t, before, "stale timestamps")
        t.eq(self.order("43"), None, "order 43 after stale deliveries")
        r = self.post_stripe(body)
        t.response(r, 200, "fresh", status="processed", key=key)
        ev = self.events("stripe", key)
        t.eq(len(ev), 1, "events rows for the key")
        if ev:
            t.eq(ev[0]["type"], "payment_intent.succeeded", "events.type")
        o = self.order("43")
        t.must(t.true(o is not None, "order 43 was not created"), "no order")
        t.eq(o["status"], "paid", "order 43 status")
        t.eq(int(o["amount"]), 4999, "order 43 amount")
        t.eq(o["currency"], "usd", "order 43 currency")
        t.eq(o["payment_id"], "pi_1", "order 43 payment_id")

    def s05_key_conflict(self, t):
        t.must(self.s1 is not None, "needs the first delivery")
        key, body = self.s1
        other = self.generic(key, "payment.success", "55", amount=1.00,
                             email="b@example.com", tx="tx_5")
        o_before = self.order("42")
        ev_before = self.events("shop", key)
        before = self.totals()
        r = self.post_shop(other)
        t.response(r, 422, "same key, other payload", error="key_conflict")
        t.true(r.header("idempotent-replayed") is None,
               "a conflict answered Idempotent-Replayed")
        t.eq(self.order("42"), o_before, "order 42 after the conflict")
        t.eq(self.order("55"), None, "order 55 (the conflicting payload)")
        t.eq(self.events("shop", key), ev_before, "the event row")
        after = self.totals()
        t.eq(after["events"], before["events"], "events rows")
        t.eq(after["orders"], before["orders"], "orders rows")
        t.eq(after["conflicts"] - before["conflicts"], 1, "new conflicts rows")
        c = self.db.rows("SELECT * FROM conflicts WHERE endpoint = ? AND "
                         "key = ?", ("shop", key))
        t.eq(len(c), 1, "conflicts rows for the key")
        if c and ev_before:
            t.true(c[0]["payload_hash"] != ev_before[0]["payload_hash"],
                   "conflicts.payload_hash is the stored event's hash")

    def s06_concurrent(self, t):
        n = 40
        key = self.evid("s6")
        body = self.generic(key, "payment.success", "60")
        sig = hookclient.sign_hmac_sha256(self.a.shop_secret, body)
        before = self.totals()
        barrier = threading.Barrier(n)
        results = [None] * n

        def one(i):
            try:
                barrier.wait(30)
                results[i] = self.http.post(GENERIC, body,
                                            {"X-Webhook-Signature": sig})
            except Exception as e:   # reported below
                results[i] = e

        threads = [threading.Thread(target=one, args=(i,)) for i in range(n)]
        self.requests += n
        for th in threads:
            th.start()
        for th in threads:
            th.join(120)
        statuses = {}
        for i, r in enumerate(results):
            if not isinstance(r, hookclient.Response):
                t.true(False, "request %d: %r" % (i, r))
                continue
            b = t.response(r, 200, "concurrent request %d" % i, key=key)
            s = b.get("status")
            statuses[s] = statuses.get(s, 0) + 1
            if s == "already_processed":
                t.eq(r.header("idempotent-replayed"), "true",
                     "request %d: Idempotent-Replayed" % i)
        t.eq(statuses, {"processed": 1, "already_processed": n - 1},
             "answers by status")
        t.eq(len(self.events("shop", key)), 1, "events rows for the key")
        t.eq(self.db.scalar("SELECT count(*) FROM orders WHERE id = '60'"), 1,
             "orders rows for order 60")
        o = self.order("60")
        t.true(o is not None and o["status"] == "paid",
               "order 60 is %r, want paid" % (o,))
        after = self.totals()
        t.eq(after["events"] - before["events"], 1, "new events rows")
        t.eq(after["conflicts"], before["conflicts"], "conflicts rows")

    def s07_out_of_order(self, t):
        # Generic: the refund first.
        r = self.post_shop(self.generic(self.evid("s7r"), "payment.refunded",
                                        "70"))
        t.response(r, 200, "refund before payment", status="processed")
        o = self.order("70")
        t.true(o is not None and o["status"] == "pending" and
               o["refunded_at"] is not None,
               "after the refund alone, order 70 is %r, want pending with "
               "refunded_at kept" % (o,))
        r = self.post_shop(self.generic(self.evid("s7p"), "payment.success",
                                        "70"))
        t.response(r, 200, "payment after its refund", status="processed")
        o = self.order("70")
        t.true(o is not None and o["status"] == "refunded",
               "order 70 is %r, want refunded" % (o,))
        # Stripe: charge.refunded before payment_intent.succeeded.
        r = self.post_stripe(self.stripe_event(
            self.evid("s7sr"), "charge.refunded", "71", obj_id="ch_1"))
        t.response(r, 200, "stripe refund before payment", status="processed")
        r = self.post_stripe(self.stripe_event(
            self.evid("s7sp"), "payment_intent.succeeded", "71"))
        t.response(r, 200, "stripe payment after its refund",
                   status="processed")
        o = self.order("71")
        t.true(o is not None and o["status"] == "refunded",
               "order 71 is %r, want refunded" % (o,))
        t.eq(self.db.scalar("SELECT count(*) FROM orders WHERE id IN "
                            "('70', '71')"), 2, "orders rows for 70 and 71")

    def s08_request_errors(self, t):
        key = self.evid("s8")
        body = self.generic(key, "payment.success", "81")
        before = self.totals()
        self.count()
        r = self.http.request("GET", GENERIC)
        t.response(r, 405, "GET")
        allow = r.header("allow") or ""
        t.true("POST" in [m.strip() for m in allow.split(",")],
               "GET: Allow header is %r, want POST" % allow)
        big = dumps({"eventId": self.evid("s8big"), "type": "payment.success",
                     "metadata": {"orderId": "82"},
                     "pad": "x" * (2 * 1024 * 1024)})
        r = self.post_shop(big)
        t.response(r, 413, "2 MiB body")
        r = self.post_shop(body,
                           content_type="application/x-www-form-urlencoded")
        t.response(r, 415, "form content type")
        r = self.post_shop(b'{"eventId": "' + key.encode() + b'", "type": ')
        t.response(r, 400, "malformed JSON")
        self.count()
        r = self.http.post_hmac("/hooks/nope", self.a.shop_secret, body)
        t.response(r, 404, "unknown endpoint /hooks/nope")
        t.eq(self.events("shop", key), [], "events rows for the key")
        t.eq(self.order("81"), None, "order 81")
        t.eq(self.order("82"), None, "order 82")
        self.nothing_stored(t, before, "refused requests")

    def s09_failing_action(self, t):
        # The orders action fails for order 90 while it is listed in a
        # control table: a trigger refuses the insert, as a business
        # constraint would.  Statements prepared before the schema change
        # are re-prepared by SQLite.
        self.db.execute("""
            CREATE TABLE IF NOT EXISTS e2e_refused (order_id TEXT PRIMARY KEY);
            INSERT OR IGNORE INTO e2e_refused VALUES ('90');
            CREATE TRIGGER IF NOT EXISTS e2e_refuse BEFORE INSERT ON orders
            WHEN EXISTS (SELECT 1 FROM e2e_refused WHERE order_id = NEW.id)
            BEGIN SELECT RAISE(ABORT, 'e2e: order refused'); END;
        """)
        key = self.evid("s9")
        body = self.generic(key, "payment.success", "90")
        before = self.totals()
        r = self.post_shop(body)
        t.response(r, 500, "failing action", error="action_failed")
        t.eq(self.events("shop", key), [], "events rows after the failure")
        t.eq(self.order("90"), None, "order 90 after the failure")
        self.nothing_stored(t, before, "failing action")
        r = self.post_shop(body)
        t.response(r, 500, "failing action, retried", error="action_failed")
        self.db.execute("DELETE FROM e2e_refused WHERE order_id = '90';")
        r = self.post_shop(body)
        t.response(r, 200, "retry once the action succeeds",
                   status="processed", key=key)
        r = self.post_shop(body)
        t.response(r, 200, "another retry", status="already_processed",
                   key=key)
        t.eq(r.header("idempotent-replayed"), "true",
             "another retry: Idempotent-Replayed")
        t.eq(len(self.events("shop", key)), 1, "events rows for the key")
        o = self.order("90")
        t.true(o is not None and o["status"] == "paid",
               "order 90 is %r, want paid" % (o,))
        after = self.totals()
        t.eq(after["events"] - before["events"], 1, "new events rows")
        t.eq(after["orders"] - before["orders"], 1, "new orders rows")

    # Scenario 10 makes the database read-only to oncehook: mode 0444 on
    # the file (root, running this, is not affected; the backends run as
    # nobody).  A process that already has the file open keeps writing
    # through its descriptor, so under FastCGI lighttpd is reloaded
    # (SIGUSR1, graceful restart: what "systemctl reload" does) and its
    # new processes open the read-only file.  Restoring puts 0600 back on
    # the file and on the -wal/-shm that SQLite created meanwhile with the
    # file's mode.

    def ro_files(self):
        return [p for p in (self.a.db, self.a.db + "-wal", self.a.db + "-shm")
                if os.path.exists(p)]

    def children(self):
        """PIDs of lighttpd's children (the FastCGI processes)."""
        pids = set()
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open("/proc/%s/stat" % d) as f:
                    st = f.read()
            except OSError:
                continue
            # pid (comm) state ppid ...: comm may hold spaces.
            fields = st[st.rfind(")") + 2:].split()
            if len(fields) > 1 and fields[1] == str(self.a.server_pid):
                pids.add(int(d))
        return pids

    def reload_server(self):
        """Graceful restart of lighttpd; wait until new processes run
        and answer."""
        old = self.children()
        os.kill(self.a.server_pid, signal.SIGUSR1)
        deadline = time.time() + 15
        while time.time() < deadline:
            now = self.children()
            if now and not now & old:
                break
            time.sleep(0.05)
        else:
            raise Failed("lighttpd did not restart its processes")
        while time.time() < deadline:
            try:
                r = self.http.request("GET", GENERIC)
            except OSError:
                r = None
            if r is not None and r.json is not None:
                self.count()            # oncehook answered (and logged)
                if r.status == 405:
                    return
            time.sleep(0.1)
        raise Failed("lighttpd did not answer after a graceful restart")

    def s10a_readonly(self, t):
        key = self.evid("s10")
        body = self.generic(key, "payment.success", "100")
        self.ro_key = (key, body)
        os.chmod(self.a.db, 0o444)
        if self.mode == "fastcgi":
            self.reload_server()
        before = self.totals()
        r = self.post_shop(body)
        t.response(r, 503, "read-only database")
        ra = r.header("retry-after") or ""
        t.true(ra.isdigit() and int(ra) > 0,
               "read-only database: Retry-After is %r" % ra)
        t.eq(self.events("shop", key), [], "events rows for the key")
        t.eq(self.order("100"), None, "order 100")
        self.nothing_stored(t, before, "read-only database")
        # A known event is still answered: a retry needs no write.
        k1, b1 = self.s1
        r = self.post_shop(b1)
        t.response(r, 200, "retry of a known event, database read-only",
                   status="already_processed", key=k1)

    def s10b_restored(self, t):
        key, body = self.ro_key
        for p in self.ro_files():
            os.chmod(p, 0o600)
        r = self.post_shop(body)
        t.response(r, 200, "database writable again", status="processed",
                   key=key)
        t.eq(len(self.events("shop", key)), 1, "events rows for the key")
        o = self.order("100")
        t.true(o is not None and o["status"] == "paid",
               "order 100 is %r, want paid" % (o,))

    def s11_busy(self, t):
        key = self.evid("s11")
        body = self.generic(key, "payment.success", "110")
        before = self.totals()
        conn = self.db.connect()
        try:
            conn.execute("BEGIN IMMEDIATE")
            t0 = time.time()
            r = self.post_shop(body)
            took = time.time() - t0
            t.response(r, 503, "write lock held")
            ra = r.header("retry-after") or ""
            t.true(ra.isdigit() and int(ra) > 0,
                   "write lock held: Retry-After is %r" % ra)
            t.true(took >= 0.9 * self.a.busy_ms / 1000.0,
                   "answered 503 after %.3fs, before the busy timeout of "
                   "%d ms" % (took, self.a.busy_ms))
            # A retry of a known event is answered from a read.
            k1, b1 = self.s1
            r = self.post_shop(b1)
            t.response(r, 200, "retry of a known event, write lock held",
                       status="already_processed", key=k1)
        finally:
            conn.execute("ROLLBACK")
            conn.close()
        t.eq(self.events("shop", key), [], "events rows while locked")
        t.eq(self.order("110"), None, "order 110 while locked")
        self.nothing_stored(t, before, "write lock held")
        r = self.post_shop(body)
        t.response(r, 200, "lock released", status="processed", key=key)
        t.eq(len(self.events("shop", key)), 1, "events rows for the key")
        o = self.order("110")
        t.true(o is not None and o["status"] == "paid",
               "order 110 is %r, want paid" % (o,))

    def s12_rotation(self, t):
        key = self.evid("s12")
        body = self.generic(key, "payment.success", "120")
        r = self.post_shop(body, secret=self.a.shop_secret_old)
        t.response(r, 200, "signed with the older of two secrets",
                   status="processed", key=key)
        o = self.order("120")
        t.true(o is not None and o["status"] == "paid",
               "order 120 is %r, want paid" % (o,))

    def s13_logs(self, t):
        lines = []
        for p in self.a.log:
            try:
                with open(p, "rb") as f:
                    lines += f.read().decode("utf-8", "replace").splitlines()
            except OSError:
                pass
        reqs = self.log_lines()
        t.eq(len(reqs), self.requests, "request log lines (one per request)")
        k1 = self.s1[0] if self.s1 else "-"
        t.true(any('endpoint=shop key="%s"' % k1 in ln and
                   "outcome=processed" in ln and "status=200" in ln
                   for ln in reqs),
               "no log line for the first delivery (endpoint, key, outcome, "
               "status)")
        t.true(any("status=401" in ln and "why=" in ln for ln in reqs),
               "no log line saying why a signature was refused")
        text = "\n".join(lines)
        for what, s in (("shop secret", self.a.shop_secret),
                        ("old shop secret", self.a.shop_secret_old),
                        ("stripe secret", self.a.stripe_secret),
                        ("a customer email (payload)", "a@example.com")):
            t.true(s not in text, "the log shows the %s" % what)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--mode", required=True)
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--db", required=True)
    ap.add_argument("--server-pid", type=int, required=True)
    ap.add_argument("--log", action="append", default=[])
    ap.add_argument("--busy-ms", type=int, required=True)
    ap.add_argument("--stripe-secret", required=True)
    ap.add_argument("--shop-secret", required=True)
    ap.add_argument("--shop-secret-old", required=True)
    a = ap.parse_args()

    s = Suite(a)
    plan = [
        ("1. first delivery -> 200 processed, one event, order paid",
         s.s01_first_delivery),
        ("2. retries (same bytes, re-serialised) -> 200 already_processed, "
         "Idempotent-Replayed, nothing changed", s.s02_retry),
        ("3. tampered body, wrong secret, missing or malformed signature "
         "-> 401 invalid_signature, nothing stored", s.s03_bad_signatures),
        ("4. stripe: timestamp an hour old or ahead -> 400 stale_timestamp, "
         "nothing stored; fresh -> 200", s.s04_stripe_timestamps),
        ("5. same key, other payload -> 422 key_conflict, recorded, never "
         "processed", s.s05_key_conflict),
        ("6. 40 concurrent identical deliveries -> one processed, 39 "
         "already_processed, one event, one order", s.s06_concurrent),
        ("7. refund before payment (generic and stripe) -> order refunded",
         s.s07_out_of_order),
        ("8. GET 405 with Allow, 2 MiB 413, form 415, malformed JSON 400, "
         "unknown endpoint 404; JSON errors, nothing stored",
         s.s08_request_errors),
        ("9. failing action -> 500 action_failed, nothing stored; fixed -> "
         "processed once, then already_processed", s.s09_failing_action),
        ("10a. read-only database -> 503 with Retry-After, nothing "
         "processed", s.s10a_readonly),
        ("10b. database writable again -> the delivery is processed",
         s.s10b_restored),
        ("11. write lock held past the busy timeout -> 503 with "
         "Retry-After; released -> processed", s.s11_busy),
        ("12. secret rotation: the older of two secrets -> 200 processed",
         s.s12_rotation),
        ("13. one log line per request with endpoint, key, outcome; no "
         "secret, no payload", s.s13_logs),
    ]
    for name, fn in plan:
        failed = s.failed
        s.run(name, fn)
        if fn == s.s10b_restored:
            # Whatever happened, leave the database writable, and under
            # FastCGI processes that opened it writable, for what follows.
            for p in s.ro_files():
                os.chmod(p, 0o600)
            if s.mode == "fastcgi":
                try:
                    s.reload_server()
                except Failed as e:
                    print("# %s" % e)
                    return 2
                if s.failed > failed and getattr(s, "ro_key", None):
                    # Tell a stuck process from a file still read-only.
                    r = s.post_shop(s.ro_key[1])
                    print("#   the same delivery after a reload (new "
                          "processes, same files): %r" % r)
    return 1 if s.failed else 0


if __name__ == "__main__":
    sys.exit(main())
