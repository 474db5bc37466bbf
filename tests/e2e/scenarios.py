# SPDX-License-Identifier: MIT
"""The oncehook end-to-end scenarios, run against a web server that a
test script (tests/e2e-lighttpd.sh, tests/e2e-apache.sh,
tests/e2e-nginx.sh) started with a filled-in conf-examples file.
"scenarios.py --help" gives the command line, with what the options
say of the server in front (its reload, its body limit, its own JSON
error pages).

What a request must be answered, on its own, is a request case
(tests/cases/, run on every store with the fast paths off and on):
retries, bad signatures, stale timestamps, key conflicts, out of order,
a failing action, rotation, deep or escaped JSON, every provider's own.
Here stays what needs the server in front or processes racing: the
numbered scenarios exercise the orders domain through the endpoints
shop (hmac-sha256) and stripe; E1, E6 and H run for every endpoint of
the configuration, with each provider's own signature, key and type
headers: the first delivery through the server, concurrent duplicates,
hostile signature headers.

Prints one line per scenario, "ok - ..." or "not ok - ..." (the shell
numbers them), with "#" lines saying what differed.  Exit status 0 if all
passed, 1 if some failed, 2 on a harness error.

Every request is signed here, with Python's hmac (hookclient.py), and
every effect is read back from the database file with Python's sqlite3.
Standard library only.
"""

import argparse
import base64
import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import threading
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "servers"))

from oncetest import hookclient  # noqa: E402
from oncetest.checks import Checks, Failed  # noqa: E402
from oncetest.testkit import children_of, read_env  # noqa: E402
from oncetest.hookclient import dumps  # noqa: E402

# The endpoints of the orders scenarios (1 to 13), as in the shipped
# examples: their actions file is sql/actions/orders.sql.
SHOP = "shop"                   # scheme hmac-sha256
STRIPE = "stripe"               # scheme stripe


class Endpoint:
    """One endpoint of the server's configuration: name, scheme (a
    hookclient sender), secrets (the first signs), URL path."""

    def __init__(self, name, scheme, secrets, path):
        self.name = name
        self.scheme = scheme
        self.secrets = secrets
        self.path = path

    def __repr__(self):
        return "%s (%s)" % (self.name, self.scheme.name)


def endpoints_of(env, client):
    """The endpoints that ONCEHOOK_ENDPOINTS and the ONCEHOOK_<NAME>_*
    variables configure (SPEC section 3), in their order."""
    eps = []
    for name in env.get("ONCEHOOK_ENDPOINTS", "").split(","):
        name = name.strip()
        if not name:
            continue
        pre = "ONCEHOOK_%s_" % name.upper().replace("-", "_")
        scheme = env.get(pre + "SCHEME")
        if scheme not in hookclient.SCHEMES:
            raise ValueError("%sSCHEME: %r is no scheme the tests know"
                             % (pre, scheme))
        if pre + "SECRET_FILE" in env:
            with open(env[pre + "SECRET_FILE"], encoding="utf-8") as f:
                secrets = [ln.strip() for ln in f
                           if ln.strip() and not ln.startswith("#")]
        else:
            secrets = env.get(pre + "SECRET", "").split()
        if not secrets:
            raise ValueError("%sSECRET: no secret" % pre)
        eps.append(Endpoint(name, hookclient.SCHEMES[scheme], secrets,
                            client.path(name)))
    return eps


# The event type each provider's test deliveries carry (none of them
# has a section in orders.sql: they are recorded, nothing more).
TYPES = {
    "hmac-sha256": "e2e.ping",
    "stripe": "customer.created",
    "github": "push",
    "standard": "invoice.paid",
    "svix": "user.created",
    "shopify": "orders/create",
    "slack": "app_mention",
    "paddle": "subscription.activated",
    "gitlab": "Push Hook",
}


class Suite:
    def __init__(self, a, env):
        self.a = a
        self.mode = a.mode
        self.env = env          # the server's ONCEHOOK_* variables
        self.http = hookclient.Client(a.url)
        self.shop_path = self.http.path(SHOP)
        self.stripe_path = self.http.path(STRIPE)
        self.db = hookclient.Db(a.db)
        self.endpoints = endpoints_of(env, self.http) if env else []
        self.requests = 0       # sent to oncehook (one log line each)
        self.failed = 0
        self.s1 = None          # the first delivery, reused later
        self.first = {}         # endpoint name -> its first delivery

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

    def count(self, body=b""):
        """Count one request that reaches oncehook (it logs one line for
        it): every request, except one whose body the web server refuses
        by its size before oncehook runs (--server-body-limit)."""
        limit = self.a.server_body_limit
        if limit is None or len(body) <= limit:
            self.requests += 1

    def answered(self, r):
        """Whether oncehook itself gave the answer r (and so logged the
        request): a JSON object; with --server-json-pages, one that also
        carries oncehook's Cache-Control: no-store, since the server's
        own error pages are JSON objects too."""
        if self.a.server_json_pages:
            return r.from_oncehook()
        return isinstance(r.json, dict)

    def post_shop(self, body, secret=None, path=None, **kw):
        self.count(body)
        return self.http.post_hmac(path or self.shop_path,
                                   secret or self.a.shop_secret, body, **kw)

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

    def concurrent(self, t, path, body, headers, n, key):
        """Send n identical deliveries at once, each on its own
        connection; check every answer is 200 for key and exactly one is
        processed, the others already_processed with
        Idempotent-Replayed."""
        barrier = threading.Barrier(n)
        results = [None] * n

        def one(i):
            try:
                barrier.wait(30)
                results[i] = self.http.post(path, body, headers)
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

    def s06_concurrent(self, t):
        n = 40
        key = self.evid("s6")
        body = self.generic(key, "payment.success", "60")
        sig = hookclient.sign_hmac_sha256(self.a.shop_secret, body)
        before = self.totals()
        self.concurrent(t, self.shop_path, body, {"X-Webhook-Signature": sig},
                        n, key)
        t.eq(len(self.events("shop", key)), 1, "events rows for the key")
        t.eq(self.db.scalar("SELECT count(*) FROM orders WHERE id = '60'"), 1,
             "orders rows for order 60")
        o = self.order("60")
        t.true(o is not None and o["status"] == "paid",
               "order 60 is %r, want paid" % (o,))
        after = self.totals()
        t.eq(after["events"] - before["events"], 1, "new events rows")
        t.eq(after["conflicts"], before["conflicts"], "conflicts rows")

    def s08_request_errors(self, t):
        key = self.evid("s8")
        body = self.generic(key, "payment.success", "81")
        before = self.totals()
        self.count()
        r = self.http.request("GET", self.shop_path)
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
        r = self.http.post_hmac(self.http.path("nope"), self.a.shop_secret,
                                body)
        t.response(r, 404, "unknown endpoint nope")
        t.eq(self.events("shop", key), [], "events rows for the key")
        t.eq(self.order("81"), None, "order 81")
        t.eq(self.order("82"), None, "order 82")
        self.nothing_stored(t, before, "refused requests")


    # Scenario 10 makes the database read-only to oncehook: mode 0444 on
    # the file (root, running this, is not affected; the backends run as
    # nobody).  A process that already has the file open keeps writing
    # through its descriptor, so under FastCGI the long-running processes
    # are replaced (reload_server: --reload-signal to --server-pid, or
    # --reload-command) and the new ones open the read-only file.
    # Restoring puts 0600 back on the file and on the -wal/-shm that
    # SQLite created meanwhile with the file's mode.

    def ro_files(self):
        return [p for p in (self.a.db, self.a.db + "-wal", self.a.db + "-shm")
                if os.path.exists(p)]

    def children(self):
        """PIDs of the children of --server-pid: the FastCGI processes
        (lighttpd, Apache mod_fcgid), or the backend that a supervisor
        runs (tests/deploy/supervise.py)."""
        return set(children_of(self.a.server_pid))

    def reload_server(self):
        """Make the FastCGI processes reopen the database: run
        --reload-command, or send --reload-signal to --server-pid (a
        graceful restart of lighttpd or Apache, a restart of the backend
        by its supervisor); with --server-pid, wait until none of its
        children is an old one; then until oncehook answers again."""
        a = self.a
        old = self.children() if a.server_pid else None
        if a.reload_command:
            how = "--reload-command %r" % a.reload_command
            try:
                p = subprocess.run(a.reload_command, shell=True,
                                   stdin=subprocess.DEVNULL,
                                   capture_output=True, timeout=60)
            except subprocess.TimeoutExpired:
                raise Failed("%s did not end within 60 s" % how)
            if p.returncode != 0:
                raise Failed("%s: exit status %d: %s" % (
                    how, p.returncode, (p.stdout + p.stderr).decode(
                        "utf-8", "replace").strip()[:2000]))
        else:
            how = "%s to PID %d" % (a.reload_signal.name, a.server_pid)
            os.kill(a.server_pid, a.reload_signal)
        deadline = time.time() + 15
        while old is not None:
            now = self.children()
            if now and not now & old:
                break
            if time.time() >= deadline:
                raise Failed("after %s, the children of PID %d were not "
                             "replaced" % (how, a.server_pid))
            time.sleep(0.05)
        while time.time() < deadline:
            try:
                r = self.http.request("GET", self.shop_path)
            except OSError:
                r = None
            # Behind nginx or mod_proxy_fcgi, the server's own 503 page
            # while the backend starts is no answer of oncehook's.
            if r is not None and self.answered(r):
                self.count()            # oncehook answered (and logged)
                if r.status == 405:
                    return
            time.sleep(0.1)
        raise Failed("oncehook did not answer again after %s" % how)

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

    # Scenario 17: the database removed, renamed or replaced under the
    # running processes.  A process must notice that ONCEHOOK_DB no
    # longer names the file it holds open and answer 503 (CGI, which
    # opens the path each time, finds no database: 500), never 200 into
    # a file that is no longer the database; once the database is back,
    # deliveries are processed again, and every delivery ever answered
    # 200 is in the database at the path with its order.

    def s17_moved(self, t):
        db = self.a.db
        st = os.stat(db)
        acked = []          # (key, order) answered 200 processed
        n = [0]

        def deliver(what):
            n[0] += 1
            key = self.evid("s17-%d" % n[0])
            order = "17%03d" % n[0]
            r = self.post_shop(self.generic(key, "payment.success", order))
            if r.status == 200:
                acked.append((key, order, what))
            return r

        def refused(what, count=8):
            for _ in range(count):
                r = deliver(what)
                t.true(r.status in (500, 503), "%s: a delivery was "
                       "answered %r, want 503 (or CGI's 500: no database)"
                       % (what, r))
                if r.status == 503:
                    ra = r.header("retry-after") or ""
                    t.true(ra.isdigit(), "%s: 503 without Retry-After"
                           % what)

        def back(what):
            # Every process recovers by itself: 8 answers 200 in a row.
            deadline = time.time() + 40
            row = 0
            while time.time() < deadline and row < 8:
                r = deliver(what)
                row = row + 1 if r.status == 200 else 0
                if r.status != 200:
                    time.sleep(0.1)
            t.true(row >= 8, "%s: not back to 8 deliveries processed in "
                   "a row within 40 s" % what)

        def place(src):
            os.chown(src, st.st_uid, st.st_gid)
            os.chmod(src, 0o600)
            os.rename(src, db)

        def backup(path):
            src = sqlite3.connect("file:%s?mode=ro" % db, uri=True)
            dst = sqlite3.connect(path)
            src.backup(dst)
            dst.close()
            src.close()

        # Every process has the database open.
        for _ in range(8):
            t.response(deliver("before"), 200, "before anything moved",
                       status="processed")
        # Renamed away, then back.
        os.rename(db, db + ".moved")
        refused("database renamed away")
        os.rename(db + ".moved", db)
        back("database renamed back")
        # Removed with its -wal and -shm, then restored from a backup.
        backup(db + ".bak")
        for suffix in ("", "-wal", "-shm"):
            if os.path.exists(db + suffix):
                os.unlink(db + suffix)
        refused("database removed (rm oncehook.db*)")
        place(db + ".bak")
        back("database restored after rm")
        # A backup moved over the live database, its -wal still in use.
        backup(db + ".bak")
        kept = list(acked)
        for _ in range(3):
            deliver("after the backup, before the restore")
        later = [k for k, _, w in acked if w.startswith("after the backup")]
        place(db + ".bak")
        r = deliver("backup moved over the live database")
        # CGI opens the path anew: the new file is the database.
        t.true(self.mode == "cgi" or r.status != 200, "backup moved over "
               "the live database: the first delivery was answered %r" % r)
        back("backup moved over the live database")
        # What a 200 promised is in the database at the path.
        time.sleep(0.2)
        for key, order, what in acked:
            if key in later:
                continue        # the operator replaced them with a backup
            ev = self.events("shop", key)
            o = self.order(order)
            t.true(len(ev) == 1 and o is not None and o["status"] ==
                   "paid", "%s: %s was answered 200 but its event (%d) or "
                   "order (%r) is not in the database" % (what, key,
                                                          len(ev), o))
        t.true(len(kept) > 8, "deliveries answered 200: %d" % len(kept))
        t.eq(self.db.scalar("PRAGMA integrity_check"), "ok",
             "integrity_check after it all")
        # A process that got no request since the last move still holds
        # the old file; its next request would be the one 503 it takes
        # to notice.  Fresh processes for the scenarios that follow.
        if self.mode == "fastcgi":
            self.reload_server()

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

    def s16_trailing_slash(self, t):
        # lighttpd's mod_fastcgi passes POST /hooks/shop/ as SCRIPT_NAME
        # /hooks/shop and PATH_INFO /: the name is the last non-empty
        # segment, of SCRIPT_NAME when PATH_INFO has none.
        key = self.evid("s14")
        body = self.generic(key, "payment.success", "140")
        r = self.post_shop(body, path=self.shop_path + "/")
        t.response(r, 200, "POST %s/" % self.shop_path, status="processed",
                   key=key)
        t.eq(len(self.events("shop", key)), 1, "events rows for the key")
        r = self.post_shop(body, path=self.shop_path + "//")
        t.response(r, 200, "POST %s//" % self.shop_path,
                   status="already_processed", key=key)
        # An unknown name: 404, and the log line says what routing saw
        # (SCRIPT_NAME and PATH_INFO as the server split the path).
        before = self.totals()
        nope = self.http.path("nope-%s" % self.mode) + "/"
        r = self.post_shop(body, path=nope)
        t.response(r, 404, "POST %s" % nope)
        t.true(any("status=404" in ln and
                   ("why=\"no endpoint named nope-%s (SCRIPT_NAME="
                    % self.mode) in ln and " PATH_INFO=" in ln
                   for ln in self.log_lines()),
               "no 404 log line naming nope-%s with its SCRIPT_NAME and "
               "PATH_INFO" % self.mode)
        self.nothing_stored(t, before, "unknown endpoint")

    def s13_logs(self, t):
        lines = []
        for p in self.a.log:
            try:
                with open(p, "rb") as f:
                    lines += f.read().decode("utf-8", "replace").splitlines()
            except OSError:
                pass
        reqs = self.log_lines()
        # Counted as records: a server that relays oncehook's stderr may
        # put two of its lines on one line of its own log.
        t.eq(sum(ln.count(" outcome=") for ln in reqs), self.requests,
             "request log lines (one per request)")
        k1 = self.s1[0] if self.s1 else "-"
        t.true(any('endpoint=shop key="%s"' % k1 in ln and
                   "outcome=processed" in ln and "status=200" in ln
                   for ln in reqs),
               "no log line for the first delivery (endpoint, key, outcome, "
               "status)")
        t.true(any("status=401" in ln and "why=" in ln for ln in reqs),
               "no log line saying why a signature was refused")
        for ep in self.endpoints:
            if ep.name not in self.first:
                continue
            k = self.first[ep.name][0]
            t.true(any('endpoint=%s key="%s"' % (ep.name, k) in ln and
                       "outcome=processed" in ln for ln in reqs),
                   "no log line for the first delivery to %r" % ep)
        text = "\n".join(lines)
        secrets = [("shop secret", self.a.shop_secret),
                   ("old shop secret", self.a.shop_secret_old),
                   ("stripe secret", self.a.stripe_secret)]
        for ep in self.endpoints:
            secrets += [("secret of %r" % ep, x) for x in ep.secrets]
        for what, x in secrets + [("a customer email (payload)",
                                   "a@example.com")]:
            t.true(not x or x not in text, "the log shows the %s" % what)

    # -- every scheme ---------------------------------------------------
    #
    # The delivery scenarios again, for every endpoint the configuration
    # names (the shipped examples have one per provider), each signed as
    # its provider signs, with the key and the type where that provider
    # puts them (hookclient.SCHEMES).  Their event types have no section
    # in orders.sql: the events are recorded, nothing more.

    def key(self, ep, tag):
        return "%s-%s-%s" % (self.mode, ep.name, tag)

    def send(self, ep, body, headers):
        """POST to the endpoint; counted as a request to oncehook when
        oncehook answered it (Suite.answered)."""
        r = self.http.post(ep.path, body, headers)
        if self.answered(r):
            self.requests += 1
        return r

    def e1_first(self, t, ep):
        sch = ep.scheme
        key, typ = self.key(ep, "e1"), TYPES[sch.name]
        body = sch.body(key, typ)
        h = sch.headers(ep.secrets[0], body, key, typ)
        before = self.totals()
        now = int(time.time())
        r = self.send(ep, body, h)
        t.response(r, 200, "first delivery", status="processed", key=key)
        t.true(r.header("idempotent-replayed") is None,
               "first delivery answered Idempotent-Replayed")
        ev = self.events(ep.name, key)
        t.must(t.eq(len(ev), 1, "events rows for the key"), "no event row")
        self.first[ep.name] = (key, typ, body, h)
        ev = ev[0]
        t.eq(ev["type"], typ, "events.type")
        t.eq(ev["status"], "processed", "events.status")
        t.eq(ev["payload"], body.decode(), "events.payload (the raw body)")
        t.true(abs(ev["received_at"] - now) < 120,
               "events.received_at %r is not now (%d)"
               % (ev["received_at"], now))
        after = self.totals()
        t.eq(after["events"] - before["events"], 1, "new events rows")
        t.eq(after["orders"], before["orders"], "orders rows")
        t.eq(after["conflicts"], before["conflicts"], "conflicts rows")

    def e6_concurrent(self, t, ep, n=20):
        sch = ep.scheme
        key, typ = self.key(ep, "e6"), TYPES[sch.name]
        body = sch.body(key, typ)
        before = self.totals()
        self.concurrent(t, ep.path, body,
                        sch.headers(ep.secrets[0], body, key, typ), n, key)
        t.eq(len(self.events(ep.name, key)), 1, "events rows for the key")
        after = self.totals()
        t.eq(after["events"] - before["events"], 1, "new events rows")
        t.eq(after["conflicts"], before["conflicts"], "conflicts rows")

    # -- hostile signature headers ---------------------------------------
    #
    # Every case must be refused, 401 (or 400) with oncehook's JSON
    # error, and store nothing; afterwards the endpoint still processes a
    # valid delivery.  Through the web server, a request whose headers
    # exceed the server's own limit (--header-limit) may instead be
    # refused by the server itself (lighttpd: 431): it then never
    # reached oncehook.  Straight to the CGI program (--cgi), every case
    # reaches oncehook.

    def hostile_cases(self, ep, key, typ, now):
        """[(what, body, [(header, value)])]: hostile variants of a
        delivery signed at now; values are str, or bytes sent as is."""
        sch, sec = ep.scheme, ep.secrets[0]
        body = sch.body(key, typ)
        good = sch.headers(sec, body, key, typ, now)
        sig = dict(good)[sch.sig]
        shape = SHAPES[sch.name].format(t=now)  # what precedes the MAC
        mac = sig[len(shape):]
        cases = []

        def put(what, name, value, base=None):
            h = [(k, v) for k, v in (base or good)
                 if k.lower() != name.lower()]
            if value is not None:
                h.append((name, value))
            cases.append((what, body, h))

        def b64(raw):
            return base64.b64encode(raw).decode("ascii")

        fill = {"hex": "0", "base64": "A", "token": "a"}[sch.encoding]
        for n, size in ((102400, "100 KB"), (60000, "60 KB"),
                        (8300, "8 KB")):
            put("signature header of %s" % size, sch.sig, shape + fill * n)
        put("empty signature header", sch.sig, "")
        put("bytes above 0x7f in the signature header", sch.sig,
            sig.encode("ascii") + b"\xe9\xff")
        put("a tab inside the signature", sch.sig,
            shape + mac[:4] + "\t" + mac[4:])
        if sch.encoding == "hex":
            put("odd-length hex", sch.sig, shape + mac[:-1])
            put("non-hex digits", sch.sig, shape + "g" * 64)
            put("hex of 31 bytes", sch.sig, shape + mac[:62])
            put("hex of 33 bytes", sch.sig, shape + mac + "00")
            put("base64 where hex is expected", sch.sig,
                shape + b64(bytes.fromhex(mac)))
        elif sch.encoding == "base64":
            raw = base64.b64decode(mac)
            put("bad base64 characters", sch.sig, shape + "!*@#" * 11)
            put("base64 padding in the middle", sch.sig,
                shape + mac[:20] + "=" + mac[21:])
            put("base64 of 31 bytes", sch.sig, shape + b64(raw[:31]))
            put("base64 of 33 bytes", sch.sig, shape + b64(raw + b"\0"))
            put("hex where base64 is expected", sch.sig, shape + raw.hex())
        else:
            put("a prefix of the token", sch.sig, sec[:-1])
            put("the token twice", sch.sig, sec + ", " + sec)
            put("the token and more", sch.sig, sec + "x")
        if sch.name in ("stripe", "paddle"):
            tk, sep, vk = (("t", ",", "v1") if sch.name == "stripe" else
                           ("ts", ";", "h1"))
            wrong = "%s%s=%s" % (sep, vk, "1" * 64)

            def many(n):
                return "%s=%d%s%s%s=%s" % (tk, now, wrong * (n - 1), sep,
                                           vk, mac)
            put("missing %s=" % tk, sch.sig, "%s=%s" % (vk, mac))
            put("%s= not a number" % tk, sch.sig,
                "%s=abc%s%s=%s" % (tk, sep, vk, mac))
            put("%s= of 30 digits" % tk, sch.sig,
                "%s=%s%s%s=%s" % (tk, "9" * 30, sep, vk, mac))
            put("%s= twice" % tk, sch.sig, "%s=%d%s%s" % (tk, now, sep, sig))
            put("a thousand %s entries, the last one right" % vk, sch.sig,
                many(1000))
            put("a hundred %s entries, the last one right" % vk, sch.sig,
                many(100))
            put("a thousand empty %s entries" % vk, sch.sig,
                "%s=%d" % (tk, now) + ("%s%s=" % (sep, vk)) * 1000)
            put("a thousand separators", sch.sig, sep * 1000)
        if sch.name in ("standard", "svix"):
            p = sch.prefix
            wrong = "v1," + b64(b"\x01" * 32)
            put("missing %s-timestamp" % p, p + "-timestamp", None)
            put("missing %s-id" % p, p + "-id", None)
            put("%s-timestamp not a number" % p, p + "-timestamp", "abc")
            put("%s-timestamp of 60 KB" % p, p + "-timestamp", "1" * 60000)
            cases.append(("%s-id of 60 KB, signed with it" % p, body,
                          sch.headers(sec, body, "msg_" + "x" * 60000, typ,
                                      now)))
            put("a thousand v1 entries, the last one right", sch.sig,
                " ".join([wrong] * 999 + [sig]))
            put("a hundred v1 entries, the last one right", sch.sig,
                " ".join([wrong] * 99 + [sig]))
            put("a thousand entries without a comma", sch.sig, "v1 " * 1000)
            put("v1, alone", sch.sig, "v1,")
        if sch.name == "slack":
            ts = "X-Slack-Request-Timestamp"
            put("missing %s" % ts, ts, None)
            put("%s not a number" % ts, ts, "abc")
            put("%s of 60 KB" % ts, ts, "1" * 60000)
            put("v1= instead of v0=", sch.sig, "v1=" + mac)
            put("two v0 entries", sch.sig, sig + "," + sig)
        if sch.name == "github":
            put("sha1= prefix", sch.sig, "sha1=" + mac)
            put("no sha256= prefix", sch.sig, mac)
            put("sha256= twice", sch.sig, "sha256=" + sig)
        if sch.name == "hmac-sha256":
            put("sha512= prefix", sch.sig, "sha512=" + mac)
        return cases

    def refused(self, t, what, r, size, via_server=True):
        """Check one answer to a hostile request."""
        # Straight to the CGI program, every answer is oncehook's.
        mine = self.answered(r) if via_server else isinstance(r.json, dict)
        if mine:                                 # oncehook answered
            if via_server:
                self.requests += 1
            ok = t.true(r.status in (400, 401), "%s: status %d, want 400 or "
                        "401" % (what, r.status))
            ok &= t.true(isinstance(r.json.get("error"), str) and
                         r.json["error"] and "status" not in r.json,
                         "%s: no JSON error" % what)
            if not ok:
                t.failures.append("%s: response was %r" % (what, r))
        elif via_server and size > self.a.header_limit:
            t.true(r.status in (400, 413, 431, 494), "%s: %r: neither "
                   "oncehook's answer nor the web server's refusal of a "
                   "header over its limit" % (what, r))
        else:
            t.true(False, "%s: not oncehook's answer (crashed?): %r"
                   % (what, r))

    def h_hostile(self, t, ep):
        key, typ = self.key(ep, "h"), TYPES[ep.scheme.name]
        before = self.totals()
        for what, body, h in self.hostile_cases(ep, key, typ,
                                                int(time.time())):
            size = sum(len(k) + len(v) + 4 for k, v in h)
            self.refused(t, what, self.http.post(ep.path, body, h), size)
        t.eq(self.events(ep.name, key), [], "events rows for the key")
        self.nothing_stored(t, before, "hostile headers")
        # Still serving: the same delivery, signed as it should be.
        r = self.send(ep, ep.scheme.body(key, typ), ep.scheme.headers(
            ep.secrets[0], ep.scheme.body(key, typ), key, typ))
        t.response(r, 200, "a valid delivery after the hostile ones",
                   status="processed", key=key)

    def cgi_post(self, ep, body, headers):
        """Run the oncehook binary as a CGI program for one request,
        with the server's ONCEHOOK_* variables; (Response, exit status,
        stderr)."""
        env = {k.encode(): v.encode() for k, v in self.env.items()}
        env.update({
            b"GATEWAY_INTERFACE": b"CGI/1.1",
            b"SERVER_PROTOCOL": b"HTTP/1.1",
            b"REQUEST_METHOD": b"POST",
            b"SCRIPT_NAME": b"/hooks",
            b"PATH_INFO": ("/" + ep.name).encode(),
            b"CONTENT_TYPE": b"application/json",
            b"CONTENT_LENGTH": str(len(body)).encode(),
            b"REMOTE_ADDR": b"127.0.0.1",
        })
        for k, v in headers:
            name = ("HTTP_" + k.upper().replace("-", "_")).encode()
            env[name] = v if isinstance(v, bytes) else v.encode("latin-1")
        kw = {}
        if self.a.cgi_user:
            kw = {"user": self.a.cgi_user, "group": self.a.cgi_group,
                  "extra_groups": []}
        p = subprocess.run([self.a.cgi], input=body, env=env,
                           capture_output=True, timeout=30, **kw)
        head, _, data = p.stdout.replace(b"\r\n", b"\n").partition(b"\n\n")
        hdrs = {}
        for line in head.decode("latin-1").split("\n"):
            k, _, v = line.partition(":")
            hdrs[k.strip().lower()] = v.strip()
        status = int((hdrs.get("status") or "200").split()[0])
        return (hookclient.Response(status, hdrs, data), p.returncode,
                p.stderr.decode("utf-8", "replace"))

    def h_cgi(self, t, ep):
        key, typ = self.key(ep, "hc"), TYPES[ep.scheme.name]
        before = self.totals()
        for what, body, h in self.hostile_cases(ep, key, typ,
                                                int(time.time())):
            r, rc, err = self.cgi_post(ep, body, h)
            self.refused(t, what, r, 0, via_server=False)
            t.eq(rc, 0, "%s: exit status" % what)
            t.true(not SANITIZER.search(err), "%s: sanitizer report: %s"
                   % (what, err[:2000]))
        t.eq(self.events(ep.name, key), [], "events rows for the key")
        self.nothing_stored(t, before, "hostile headers")
        body = ep.scheme.body(key, typ)
        r, rc, err = self.cgi_post(ep, body, ep.scheme.headers(
            ep.secrets[0], body, key, typ))
        t.response(r, 200, "a valid delivery, straight to the program",
                   status="processed", key=key)


# What precedes the MAC in each scheme's signature header.
SHAPES = {
    "hmac-sha256": "sha256=",
    "stripe": "t={t},v1=",
    "github": "sha256=",
    "standard": "v1,",
    "svix": "v1,",
    "shopify": "",
    "slack": "v0=",
    "paddle": "ts={t};h1=",
    "gitlab": "",
}

SANITIZER = re.compile(r"ERROR: AddressSanitizer|runtime error:|"
                       r"LeakSanitizer|ERROR: \w*Sanitizer")


USAGE = ("scenarios.py --url http://127.0.0.1:PORT/hooks --env FILE "
         "--mode MODE\n       [--server-pid PID] [--reload-signal SIG | "
         "--reload-command CMD]\n       [--log FILE]... [--db PATH] "
         "[--busy-ms MS] [--header-limit BYTES]\n       "
         "[--server-body-limit BYTES] [--server-json-pages]\n       "
         "[--cgi BIN [--cgi-user USER]]\n       "
         "[--only TEXT] [--skip TEXT]")

DESCRIPTION = """\
Run the scenarios against oncehook behind a running web server.

--url is where the endpoints live: the endpoint name is appended
(http://127.0.0.1:8080/hooks + /stripe).  --env is the server's
configuration, its ONCEHOOK_* variables one NAME=value a line (what the
web server passes oncehook): the endpoints, schemes and secrets, and the
defaults of --db (ONCEHOOK_DB) and --busy-ms.  The orders scenarios
(1-13) need the endpoints "shop" (hmac-sha256, two secrets) and
"stripe" (stripe) with sql/actions/orders.sql; the delivery and hostile
header scenarios (E1-E6, H) run for every endpoint.  --only/--skip keep
or drop the scenarios whose title contains TEXT.

--mode labels the lines; "fastcgi" also makes scenario 10 replace the
long-running oncehook processes, so that they reopen the database it
made read-only (and once more when it is writable again):

  --server-pid PID     the process whose children are oncehook's
                       processes: lighttpd or Apache (mod_fcgid), or
                       the supervisor of "oncehook serve" or of
                       spawn-fcgi (tests/deploy/supervise.py); after a
                       reload, none of its children may be an old one
  --reload-signal SIG  sent to PID to reload (default USR1: the graceful
                       restart of lighttpd and Apache; supervise.py
                       restarts its backend)
  --reload-command CMD run with /bin/sh -c instead of the signal
                       ("apache2 -k graceful -f FILE", "systemctl
                       reload lighttpd"); it must exit 0

Either --server-pid or --reload-command is needed in mode fastcgi.
After a reload the scenarios wait until oncehook answers again.

What the web server in front does itself:

  --log FILE           where oncehook's request log lines land (any
                       number of them); scenario 13 counts them
  --header-limit BYTES the server's limit on request headers: over it a
                       hostile request may be refused by the server
                       itself (default 8190)
  --server-body-limit BYTES
                       the server refuses a request whose body is over
                       BYTES by its Content-Length, before oncehook runs
                       (the shipped Apache and nginx examples, at
                       ONCEHOOK_MAX_BODY): scenario 8's 2 MiB request is
                       then not counted as one oncehook answers, and
                       scenario 13 expects no log line for it
  --server-json-pages  the server answers some requests with JSON error
                       pages of its own (413; 503 while a backend
                       restarts): an answer counts as oncehook's only
                       when it also carries Cache-Control: no-store,
                       which oncehook sends and those pages do not

--cgi also runs the hostile headers straight through the binary as a
CGI program (as --cgi-user when given).

The older form --port PORT --stripe-secret S --shop-secret S
--shop-secret-old S --db PATH --busy-ms MS still works (endpoints stripe
and shop only, or those of --env, the flags overriding its secrets).
"""


def signal_arg(text):
    """A signal by name (USR1, SIGUSR1) or number."""
    name = text.strip().upper()
    try:
        if name.isdigit():
            return signal.Signals(int(name))
        return signal.Signals[name if name.startswith("SIG")
                              else "SIG" + name]
    except (KeyError, ValueError):
        raise argparse.ArgumentTypeError("no signal %r" % text)


def parse_args(argv=None):
    ap = argparse.ArgumentParser(
        usage=USAGE, description=DESCRIPTION,
        formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--url")
    ap.add_argument("--port", type=int)
    ap.add_argument("--env")
    ap.add_argument("--mode", required=True)
    ap.add_argument("--db")
    ap.add_argument("--server-pid", type=int)
    ap.add_argument("--reload-signal", type=signal_arg)
    ap.add_argument("--reload-command")
    ap.add_argument("--log", action="append", default=[])
    ap.add_argument("--busy-ms", type=int)
    ap.add_argument("--header-limit", type=int, default=8190)
    ap.add_argument("--server-body-limit", type=int)
    ap.add_argument("--server-json-pages", action="store_true")
    ap.add_argument("--cgi")
    ap.add_argument("--cgi-user")
    ap.add_argument("--stripe-secret")
    ap.add_argument("--shop-secret")
    ap.add_argument("--shop-secret-old")
    ap.add_argument("--only", action="append", default=[])
    ap.add_argument("--skip", action="append", default=[])
    a = ap.parse_args(argv)
    if not a.url:
        if not a.port:
            ap.error("--url (or --port) is required")
        a.url = "http://127.0.0.1:%d/hooks" % a.port
    if a.reload_signal and a.reload_command:
        ap.error("--reload-signal or --reload-command, not both")
    if a.reload_signal and not a.server_pid:
        ap.error("--reload-signal needs --server-pid")
    a.reload_signal = a.reload_signal or signal.SIGUSR1
    if a.mode == "fastcgi" and not (a.server_pid or a.reload_command):
        ap.error("--mode fastcgi needs --server-pid or --reload-command "
                 "(scenario 10 reloads)")
    if a.server_body_limit is not None and a.server_body_limit < 0:
        ap.error("--server-body-limit: a number of bytes, 0 or more")
    env = read_env(a.env) if a.env else {}
    if not env:
        # The older form: the two endpoints of the orders scenarios.
        if not (a.stripe_secret and a.shop_secret):
            ap.error("--env, or --stripe-secret and --shop-secret")
        env = {"ONCEHOOK_ENDPOINTS": "stripe,shop",
               "ONCEHOOK_STRIPE_SCHEME": "stripe",
               "ONCEHOOK_SHOP_SCHEME": "hmac-sha256"}
        if a.db:
            env["ONCEHOOK_DB"] = a.db
    if a.stripe_secret:
        env["ONCEHOOK_STRIPE_SECRET"] = a.stripe_secret
    if a.shop_secret:
        env["ONCEHOOK_SHOP_SECRET"] = " ".join(
            x for x in (a.shop_secret, a.shop_secret_old) if x)
    a.db = a.db or env.get("ONCEHOOK_DB")
    if not a.db:
        ap.error("--db (or ONCEHOOK_DB in --env) is required")
    if a.busy_ms is None:
        a.busy_ms = int(env.get("ONCEHOOK_BUSY_TIMEOUT_MS", "5000"))
    a.cgi_group = None
    if a.cgi_user:
        import grp
        import pwd
        a.cgi_group = grp.getgrgid(pwd.getpwnam(a.cgi_user).pw_gid).gr_name
    return a, env


def main():
    a, env = parse_args()
    try:
        s = Suite(a, env)
    except (ValueError, OSError) as e:
        print("# harness error: %s" % e)
        return 2
    eps = {ep.name: ep for ep in s.endpoints}
    if (SHOP in eps and STRIPE in eps and
            eps[SHOP].scheme.name == "hmac-sha256" and
            eps[STRIPE].scheme.name == "stripe"):
        a.shop_secret = eps[SHOP].secrets[0]
        a.shop_secret_old = (eps[SHOP].secrets[1]
                             if len(eps[SHOP].secrets) > 1 else None)
        a.stripe_secret = eps[STRIPE].secrets[0]
    else:
        print("# harness error: the orders scenarios need the endpoints "
              "%r (hmac-sha256) and %r (stripe)" % (SHOP, STRIPE))
        return 2

    plan = [
        ("1. first delivery -> 200 processed, one event, order paid",
         s.s01_first_delivery),
        ("6. 40 concurrent identical deliveries -> one processed, 39 "
         "already_processed, one event, one order", s.s06_concurrent),
        ("8. GET 405 with Allow, 2 MiB 413, form 415, malformed JSON 400, "
         "unknown endpoint 404; JSON errors, nothing stored",
         s.s08_request_errors),
        ("10a. read-only database -> 503 with Retry-After, nothing "
         "processed", s.s10a_readonly),
        ("10b. database writable again -> the delivery is processed",
         s.s10b_restored),
        ("11. write lock held past the busy timeout -> 503 with "
         "Retry-After; released -> processed", s.s11_busy),
        ("16. POST /hooks/shop/ (trailing slash) -> 200 processed; "
         "/hooks/nope/ -> 404, its log line names the path",
         s.s16_trailing_slash),
        ("17. database renamed, removed, replaced under running processes "
         "-> 503 (never 200 into the old file); back -> processed; every "
         "200 is in the database", s.s17_moved),
    ]
    for ep in s.endpoints:
        def bind(fn, ep=ep):
            return lambda t: fn(t, ep)
        pre = "%s (%s)" % (ep.name, ep.scheme.name)
        plan += [
            ("E1. %s: first delivery -> 200 processed, event stored with "
             "its key and type" % pre, bind(s.e1_first)),
        ]
        plan += [
            ("E6. %s: 20 concurrent identical deliveries -> exactly one "
             "processed" % pre, bind(s.e6_concurrent)),
            ("H. %s: hostile signature headers -> 401 or 400, nothing "
             "stored, still serving" % pre, bind(s.h_hostile)),
        ]
        if a.cgi:
            plan.append(("H-cgi. %s: hostile signature headers straight "
                         "to the CGI program -> 401 or 400, exit 0, "
                         "nothing stored" % pre, bind(s.h_cgi)))
    plan.append(("13. one log line per request with endpoint, key, "
                 "outcome; no secret, no payload", s.s13_logs))

    for name, fn in plan:
        if a.only and not any(x in name for x in a.only):
            continue
        if any(x in name for x in a.skip):
            continue
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
