# SPDX-License-Identifier: MIT
"""The oncehook end-to-end scenarios for the MariaDB/MySQL store, run
against a web server that tests/mariadb.sh started with a filled-in
conf-examples file whose ONCEHOOK_DB is a mysql:// URL.

tests/e2e/scenarios.py reads its effects from the SQLite file; this
reads them from the MariaDB server instead, with the "mariadb" command
line client as the server's root over its unix socket (--socket,
--database).  Every request is signed here (hookclient.py).

Commands:

  endpoints  for every endpoint of ONCEHOOK_ENDPOINTS (one per signature
             scheme), with that provider's own headers: a new order
             event -> 200 processed, its order paid and one outbox
             order.paid row; the same delivery -> 200 already_processed,
             nothing more written; 40 concurrent identical
             deliveries -> one processed, one event, one effect; a refund
             before its payment -> refunded, one order.paid and one
             order.refunded row; 8 payments and 8 refunds of one
             order at once -> one order.paid, one order.refunded.
             (A forged signature, a key conflict
             and the rest of what a request must be answered on
             MariaDB are request cases: tests/cases/.)
  wordpress  the stripe endpoint with sql/actions/mysql/wordpress.sql and
             tests/deploy/wp-schema.sql: payment_intent.succeeded for
             order 42 -> wc-processing once (delivered twice, then under
             another key: one order.paid row); with wp_wc_orders renamed
             the action fails -> 500 and no event row, no outbox row (the
             claim and the action are one transaction); renamed back, the
             retry is processed.
  fault      FastCGI under load from a few senders; the MariaDB server
             killed (--kill-cmd), answers while it is down must be 503
             with Retry-After, never 200; restarted (--restart-cmd), every
             delivery that did not get 200 is sent again; then each event
             is stored exactly once with its effect, and every one
             answered 200 is there.

Prints "ok - ..." / "not ok - ..." lines (the shell numbers them) with
"#" lines saying what differed.  Exit status 0 if all passed, 1 if some
failed, 2 on a harness error.  Standard library only.
"""

import argparse
import json
import os
import subprocess
import sys
import threading
import time
import traceback

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "servers"))

from oncetest import hookclient  # noqa: E402
from oncetest.checks import Checks, Failed  # noqa: E402
from oncetest.mariadb import My, q  # noqa: E402
from oncetest.testkit import read_env  # noqa: E402
from oncetest.hookclient import dumps  # noqa: E402


def endpoints_of(env, client):
    eps = []
    for name in env.get("ONCEHOOK_ENDPOINTS", "").split(","):
        name = name.strip()
        if not name:
            continue
        pre = "ONCEHOOK_%s_" % name.upper().replace("-", "_")
        scheme = env.get(pre + "SCHEME")
        if scheme not in hookclient.SCHEMES:
            raise ValueError("%sSCHEME: %r" % (pre, scheme))
        secrets = env.get(pre + "SECRET", "").split()
        eps.append((name, hookclient.SCHEMES[scheme], secrets,
                    client.path(name)))
    return eps


class Suite:
    def __init__(self, a, env):
        self.a = a
        self.env = env
        self.label = a.label
        self.http = hookclient.Client(a.url, timeout=30)
        self.db = My(a.socket, a.database)
        self.p = env.get("ONCEHOOK_DB_PREFIX", "oncehook_")
        self.nonce = "%x" % (int(time.time() * 1000) % (1 << 32))
        self.failed = 0

    def run(self, name, fn, *args):
        t = Checks()
        try:
            fn(t, *args)
        except Failed:
            pass
        except Exception:
            t.failures.append("exception:\n" + traceback.format_exc())
        if t.failures:
            self.failed += 1
            print("not ok - %s: %s" % (self.label, name))
            for f in t.failures:
                for line in str(f).splitlines():
                    print("#   " + line)
        else:
            print("ok - %s: %s" % (self.label, name))
        sys.stdout.flush()

    # -- the database ---------------------------------------------------

    def events(self, endpoint, key):
        return self.db.rows(
            "SELECT endpoint, event_key, type, status, payload_hash, "
            "payload FROM %sevents WHERE endpoint = %s AND event_key = %s"
            % (self.p, q(endpoint), q(key)))

    def totals(self):
        return {t: self.db.scalar("SELECT count(*) FROM " + t)
                for t in (self.p + "events", self.p + "conflicts",
                          self.p + "outbox", "orders")}

    def order(self, oid):
        return self.db.one("SELECT id, status, amount, paid_at, refunded_at "
                           "FROM orders WHERE id = %s" % q(oid))

    def outbox(self, topic, oid):
        return self.db.scalar(
            "SELECT count(*) FROM %soutbox WHERE topic = %s AND "
            "JSON_UNQUOTE(JSON_EXTRACT(payload, '$.order_id')) = %s"
            % (self.p, q(topic), q(oid)))

    # -- sending --------------------------------------------------------

    @staticmethod
    def order_body(sch, key, typ, oid, variant=0, amount=49.99):
        """The provider's own payload for key and typ, with the generic
        order fields that sql/actions/mysql/orders.sql reads for
        payment.success and payment.refunded."""
        obj = json.loads(sch.body(key, typ, variant))
        obj["metadata"] = {"orderId": oid}
        obj["transaction"] = {"id": "tx_%s_%d" % (oid, variant),
                              "amount": amount, "currency": "EUR"}
        obj["customer"] = {"customerEmail": "c%d@example.com" % variant}
        return dumps(obj)

    def send(self, ep, body, key, typ, secret=None):
        name, sch, secrets, path = ep
        h = sch.headers(secret or secrets[0], body, key, typ)
        if sch.name == "hmac-sha256":
            h = h + [("X-Idempotency-Key", key)]
        return self.http.post(path, body, h)

    def key(self, ep, tag):
        return "%s-%s-%s" % (tag, ep[0], self.nonce)

    # -- endpoints --------------------------------------------------------

    def ep_first(self, t, ep):
        name, sch = ep[0], ep[1]
        key, oid = self.key(ep, "a"), "A-%s-%s" % (name, self.nonce)
        body = self.order_body(sch, key, "payment.success", oid)
        before = self.totals()
        r = self.send(ep, body, key, "payment.success")
        t.response(r, 200, "first delivery", status="processed", key=key)
        ev = self.events(name, key)
        t.must(t.eq(len(ev), 1, "events rows for the key"), "no event row")
        t.eq(ev[0]["status"], "processed", "events.status")
        t.eq(ev[0]["type"], "payment.success", "events.type")
        t.eq(ev[0]["payload"], body.decode(), "events.payload")
        o = self.order(oid)
        t.must(t.true(o is not None, "order %s not created" % oid), "order")
        t.eq(o["status"], "paid", "order status")
        t.eq(o["amount"], "49.9900", "order amount")
        t.eq(self.outbox("order.paid", oid), 1, "outbox order.paid rows")
        after = self.totals()
        t.eq({k: after[k] - before[k] for k in after},
             {self.p + "events": 1, self.p + "conflicts": 0,
              self.p + "outbox": 1, "orders": 1}, "new rows")
        self.first = (key, oid, body)
        # The same delivery again.
        o1 = self.order(oid)
        r = self.send(ep, body, key, "payment.success")
        t.response(r, 200, "the same delivery again",
                   status="already_processed", key=key)
        t.eq(r.header("idempotent-replayed"), "true", "Idempotent-Replayed")
        t.eq(len(self.events(name, key)), 1, "events rows after the retry")
        t.eq(self.order(oid), o1, "the order after the retry")
        t.eq(self.totals(), after, "rows after the retry")

    def ep_concurrent(self, t, ep, n=40):
        name, sch = ep[0], ep[1]
        key, oid = self.key(ep, "c"), "P-%s-%s" % (name, self.nonce)
        body = self.order_body(sch, key, "payment.success", oid)
        before = self.totals()
        barrier = threading.Barrier(n)
        results = [None] * n

        def one(i):
            try:
                barrier.wait(30)
                results[i] = self.send(ep, body, key, "payment.success")
            except Exception as e:
                results[i] = e

        th = [threading.Thread(target=one, args=(i,)) for i in range(n)]
        for x in th:
            x.start()
        for x in th:
            x.join(120)
        statuses = {}
        for i, r in enumerate(results):
            if not isinstance(r, hookclient.Response):
                t.true(False, "request %d: %r" % (i, r))
                continue
            s = "%d %s" % (r.status, (r.json or {}).get("status") or
                           (r.json or {}).get("error")
                           if isinstance(r.json, dict) else r.body[:60])
            statuses[s] = statuses.get(s, 0) + 1
        t.eq(statuses, {"200 processed": 1,
                        "200 already_processed": n - 1}, "answers")
        t.eq(len(self.events(name, key)), 1, "events rows for the key")
        o = self.order(oid)
        t.true(o is not None and o["status"] == "paid",
               "order %s is %r, want paid" % (oid, o))
        t.eq(self.outbox("order.paid", oid), 1, "outbox order.paid rows")
        after = self.totals()
        t.eq({k: after[k] - before[k] for k in after},
             {self.p + "events": 1, self.p + "conflicts": 0,
              self.p + "outbox": 1, "orders": 1}, "new rows")

    def ep_out_of_order(self, t, ep):
        name, sch = ep[0], ep[1]
        oid = "O-%s-%s" % (name, self.nonce)
        kr, kp = self.key(ep, "r"), self.key(ep, "p")
        r = self.send(ep, self.order_body(sch, kr, "payment.refunded", oid),
                      kr, "payment.refunded")
        t.response(r, 200, "the refund, first", status="processed", key=kr)
        o = self.order(oid)
        t.eq(o and o["status"], "pending", "status after the refund alone")
        r = self.send(ep, self.order_body(sch, kp, "payment.success", oid),
                      kp, "payment.success")
        t.response(r, 200, "the payment, second", status="processed", key=kp)
        o = self.order(oid)
        t.eq(o and o["status"], "refunded", "final status")
        t.eq(self.outbox("order.paid", oid), 1, "outbox order.paid rows")
        t.eq(self.outbox("order.refunded", oid), 1,
             "outbox order.refunded rows")
        t.eq(len(self.events(name, kr)) + len(self.events(name, kp)), 2,
             "events rows")

    def ep_not_utf8(self, t, ep):
        """A first payment whose X-Idempotency-Key is not UTF-8 text:
        400 invalid_key, nothing written (the shipped outbox row's
        JSON_OBJECT has no form for such a key: it once failed at the
        action on every attempt).  The same payment under a UTF-8 key is
        processed, with its one order.paid row."""
        name, sch = ep[0], ep[1]
        oid = "U-%s-%s" % (name, self.nonce)
        text = self.key(ep, "u\u00e9")
        raw = text.encode("utf-8").replace(b"\xc3\xa9", b"\xe9")
        body = self.order_body(sch, text, "payment.success", oid)
        before = self.totals()
        h = sch.headers(ep[2][0], body, text, "payment.success")
        r = self.http.post(ep[3], body, h + [("X-Idempotency-Key", raw)])
        t.eq((r.status, (r.json or {}).get("error")),
             (400, "invalid_key"), "answer to a Latin-1 key")
        t.eq(self.totals(), before, "rows after the Latin-1 key")
        r = self.http.post(ep[3], body, h + [("X-Idempotency-Key",
                                              text.encode("utf-8"))])
        t.response(r, 200, "the UTF-8 key", status="processed", key=text)
        t.eq(self.outbox("order.paid", oid), 1, "outbox order.paid rows")

    def ep_one_order(self, t, ep, n=8):
        """n payments and n refunds of one order under 2n keys, all at
        once: each processed, one order.paid and one order.refunded
        row, the facts named after one event of each kind."""
        name, sch = ep[0], ep[1]
        oid = "M-%s-%s" % (name, self.nonce)
        sends = [(self.key(ep, "m%s%d" % (typ[8], i)), typ)
                 for i in range(n)
                 for typ in ("payment.success", "payment.refunded")]
        barrier = threading.Barrier(len(sends))
        results = [None] * len(sends)

        def one(i):
            key, typ = sends[i]
            try:
                body = self.order_body(sch, key, typ, oid)
                barrier.wait(30)
                results[i] = self.send(ep, body, key, typ)
            except Exception as e:
                results[i] = e

        th = [threading.Thread(target=one, args=(i,))
              for i in range(len(sends))]
        for x in th:
            x.start()
        for x in th:
            x.join(120)
        bad = [(sends[i][0], r if not isinstance(r, hookclient.Response)
                else (r.status, r.body[:80]))
               for i, r in enumerate(results)
               if not isinstance(r, hookclient.Response) or
               r.status != 200 or (r.json or {}).get("status") !=
               "processed"]
        t.eq(bad, [], "deliveries not answered 200 processed")
        o = self.db.one("SELECT status, paid_by, refunded_by FROM orders "
                        "WHERE id = %s" % q(oid))
        t.eq(o and o["status"], "refunded", "final status")
        t.eq(self.outbox("order.paid", oid), 1, "outbox order.paid rows")
        t.eq(self.outbox("order.refunded", oid), 1,
             "outbox order.refunded rows")
        for fact, typ in (("paid_by", "payment.success"),
                          ("refunded_by", "payment.refunded")):
            t.eq(self.db.scalar(
                "SELECT count(*) FROM %sevents e JOIN orders o ON "
                "o.%s = CONCAT(e.received_at, ' ', e.endpoint, ' ', "
                "e.event_key) WHERE o.id = %s AND e.type = %s"
                % (self.p, fact, q(oid), q(typ))), 1,
                "%s events named by orders.%s (%r)"
                % (typ, fact, (o or {}).get(fact)))

    def endpoints(self):
        eps = endpoints_of(self.env, self.http)
        if not eps:
            raise ValueError("no endpoints")
        for ep in eps:
            pre = "%s (%s)" % (ep[0], ep[1].name)
            self.first = None
            self.run("%s: new event -> 200 processed, order paid, one "
                     "order.paid; again -> 200 already_processed, nothing "
                     "more" % pre, self.ep_first, ep)
            self.run("%s: 40 concurrent identical deliveries -> one "
                     "processed, one event, one effect" % pre,
                     self.ep_concurrent, ep)
            self.run("%s: refund before payment -> refunded, one row each "
                     "in the outbox" % pre, self.ep_out_of_order, ep)
            self.run("%s: 8 payments and 8 refunds of one order at once, "
                     "16 keys -> each processed, one order.paid and one "
                     "order.refunded row" % pre, self.ep_one_order, ep)
            if ep[1].name == "hmac-sha256":
                self.run("%s: a first payment keyed by a header that is not "
                         "UTF-8 -> 400 invalid_key, nothing written; under "
                         "its UTF-8 form -> processed, one order.paid"
                         % pre, self.ep_not_utf8, ep)

    # -- wordpress --------------------------------------------------------

    def wp_event(self, key, oid, pi):
        return dumps({"id": key, "object": "event",
                      "type": "payment_intent.succeeded",
                      "data": {"object": {
                          "id": pi, "object": "payment_intent",
                          "amount": 1999, "currency": "eur",
                          "receipt_email": "ada@example.com",
                          "metadata": {"order_id": oid}}}})

    def wp_order(self, oid):
        return self.db.one("SELECT id, status, transaction_id, "
                           "date_updated_gmt FROM wp_wc_orders WHERE id = %d"
                           % oid)

    def wp_send(self, body, key):
        ep = [e for e in endpoints_of(self.env, self.http)
              if e[0] == "stripe"][0]
        return self.send(ep, body, key, "payment_intent.succeeded")

    def wp_paid(self, t):
        k1 = "evt_wp_42_%s" % self.nonce
        body = self.wp_event(k1, "42", "pi_wp42")
        r = self.wp_send(body, k1)
        t.response(r, 200, "payment_intent.succeeded for 42",
                   status="processed", key=k1)
        o = self.wp_order(42)
        t.eq(o and o["status"], "wc-processing", "order 42 status")
        t.eq(o and o["transaction_id"], "pi_wp42", "order 42 transaction_id")
        t.eq(self.outbox("order.paid", "42"), 1, "outbox order.paid rows")
        o1 = self.wp_order(42)
        r = self.wp_send(body, k1)
        t.response(r, 200, "delivered again", status="already_processed",
                   key=k1)
        k2 = "evt_wp_42b_%s" % self.nonce
        r = self.wp_send(self.wp_event(k2, "42", "pi_wp42b"), k2)
        t.response(r, 200, "another key, the same order",
                   status="processed", key=k2)
        t.eq(self.wp_order(42), o1, "order 42 after the second event")
        t.eq(self.outbox("order.paid", "42"), 1,
             "outbox order.paid rows for 42 after three deliveries")
        t.eq(self.db.scalar("SELECT count(*) FROM %sevents WHERE endpoint "
                            "= 'stripe' AND event_key IN (%s, %s)"
                            % (self.p, q(k1), q(k2))), 2, "events rows")
        o = self.wp_order(45)
        t.eq(o and o["status"], "wc-completed", "order 45 untouched")

    def wp_atomic(self, t):
        k = "evt_wp_43_%s" % self.nonce
        body = self.wp_event(k, 43, "pi_wp43")
        before = self.totals_wp()
        self.db.run("RENAME TABLE wp_wc_orders TO wp_wc_orders_gone")
        try:
            r = self.wp_send(body, k)
            t.response(r, 500, "the order table renamed",
                       error="action_failed")
            t.eq(self.events("stripe", k), [], "events rows for the key")
            t.eq(self.totals_wp(), before, "rows after the failure")
        finally:
            self.db.run("RENAME TABLE wp_wc_orders_gone TO wp_wc_orders")
        t.eq(self.wp_order(43)["status"], "wc-pending", "order 43 unchanged")
        r = self.wp_send(body, k)
        t.response(r, 200, "the retry once the table is back",
                   status="processed", key=k)
        t.eq(self.wp_order(43)["status"], "wc-processing", "order 43")
        t.eq(self.outbox("order.paid", "43"), 1, "outbox order.paid rows")
        t.eq(len(self.events("stripe", k)), 1, "events rows for the key")

    def totals_wp(self):
        return {t: self.db.scalar("SELECT count(*) FROM " + t)
                for t in (self.p + "events", self.p + "conflicts",
                          self.p + "outbox")}

    def wordpress(self):
        self.run("wordpress.sql: payment_intent.succeeded moves order 42 to "
                 "wc-processing once (twice delivered, another key: one "
                 "order.paid)", self.wp_paid)
        self.run("wordpress.sql: wp_wc_orders renamed -> 500, no event, no "
                 "outbox row; back -> processed", self.wp_atomic)

    # -- fault ------------------------------------------------------------

    def fault(self):
        ep = [e for e in endpoints_of(self.env, self.http)
              if e[1].name == "hmac-sha256"][0]
        sch = ep[1]
        lock = threading.Lock()
        log = []            # (key, oid, t0, t1, status, retry_after, json)
        bodies = {}
        stop = threading.Event()
        seq = [0]

        def sender(w):
            while not stop.is_set():
                with lock:
                    seq[0] += 1
                    i = seq[0]
                key = "fault-%s-%d" % (self.nonce, i)
                oid = "K-%s-%d" % (self.nonce, i)
                body = self.order_body(sch, key, "payment.success", oid)
                bodies[key] = (oid, body)
                t0 = time.time()
                try:
                    r = self.send(ep, body, key, "payment.success")
                    rec = (key, oid, t0, time.time(), r.status,
                           r.header("retry-after"), r.json
                           if isinstance(r.json, dict) else r.body[:80])
                except Exception as e:
                    rec = (key, oid, t0, time.time(), None, None, repr(e))
                with lock:
                    log.append(rec)
                time.sleep(0.01)

        th = [threading.Thread(target=sender, args=(w,))
              for w in range(self.a.senders)]
        for x in th:
            x.start()
        time.sleep(1.5)
        t_kill = time.time()
        subprocess.run(self.a.kill_cmd, shell=True)
        t_killed = time.time()
        time.sleep(2.5)
        t_restart = time.time()
        p = subprocess.run(self.a.restart_cmd, shell=True,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        t_up = time.time()
        restarted = p.returncode == 0
        time.sleep(1.5)
        stop.set()
        for x in th:
            x.join(60)

        before = [x for x in log if x[3] < t_kill]
        down = [x for x in log if x[2] > t_killed and x[3] < t_restart]
        after = [x for x in log if x[2] > t_up]
        print("# fault: %d requests: %d answered before the kill, %d sent "
              "and answered while down, %d after the restart (%.1f s to "
              "restart)" % (len(log), len(before), len(down), len(after),
                            t_up - t_restart))

        def summary(recs):
            d = {}
            for x in recs:
                s = "%s %s" % (x[4], x[6].get("status") or x[6].get("error")
                               if isinstance(x[6], dict) else x[6])
                d[s] = d.get(s, 0) + 1
            return d

        def c_before(t):
            t.true(len(before) > 0, "no request answered before the kill")
            t.eq(summary(before), {"200 processed": len(before)},
                 "answers before the kill")
        self.run("under load, MariaDB up: every delivery 200 "
                 "processed", c_before)

        def c_down(t):
            t.true(len(down) >= self.a.senders,
                   "only %d requests while down" % len(down))
            bad = [x for x in down if x[4] != 503 or not x[5] or
                   not isinstance(x[6], dict) or
                   x[6].get("error") != "unavailable"]
            t.true(not bad, "answers while down not 503 unavailable with "
                   "Retry-After: "
                   "%r (all: %r)" % (bad[:5], summary(down)))
            t.true(not [x for x in down if x[4] == 200],
                   "a 200 while the server was down")
        self.run("MariaDB killed: every delivery 503 unavailable with "
                 "Retry-After, none 200", c_down)

        def c_restart(t):
            t.true(restarted, "restart failed: %s %s" % (
                p.stdout.decode(errors="replace"),
                p.stderr.decode(errors="replace")))
            ok_after = [x for x in after if x[4] == 200]
            t.true(ok_after, "no 200 after the restart: %r" % summary(after))
        self.run("MariaDB restarted on its data directory: "
                 "deliveries 200 again", c_restart)

        def c_redeliver(t):
            ok = {x[0] for x in log if x[4] == 200}
            todo = sorted({x[0] for x in log} - ok)
            print("# fault: %d keys answered 200, %d to send again"
                  % (len(ok), len(todo)))
            bad = {}
            for key in todo:
                oid, body = bodies[key]
                for attempt in range(20):
                    r = self.send(ep, body, key, "payment.success")
                    if r.status != 503:
                        break
                    time.sleep(0.25)
                s = (r.json or {}).get("status") if isinstance(
                    r.json, dict) else None
                if r.status != 200 or s not in ("processed",
                                                "already_processed"):
                    bad[key] = r
            t.eq(bad, {}, "redeliveries not answered 200")
            keys = sorted(bodies)
            rows = self.db.rows(
                "SELECT event_key, count(*) AS n, min(status) AS s FROM "
                "%sevents WHERE endpoint = %s AND event_key LIKE %s GROUP BY "
                "event_key" % (self.p, q(ep[0]),
                               q("fault-%s-%%" % self.nonce)))
            got = {r["event_key"]: (int(r["n"]), r["s"]) for r in rows}
            missing = [k for k in keys if k not in got]
            t.eq(missing, [], "events missing")
            t.eq([k for k in keys if k in got and got[k] != (1, "processed")],
                 [], "events not stored exactly once, processed")
            t.eq([k for k in ok if k not in got], [],
                 "events answered 200 but not stored")
            orows = self.db.rows(
                "SELECT o.id, o.status, (SELECT count(*) FROM %soutbox b "
                "WHERE b.topic = 'order.paid' AND JSON_UNQUOTE(JSON_EXTRACT("
                "b.payload, '$.order_id')) = o.id) AS n FROM orders o WHERE "
                "o.id LIKE %s" % (self.p, q("K-%s-%%" % self.nonce)))
            og = {r["id"]: (r["status"], int(r["n"])) for r in orows}
            t.eq(len(og), len(keys), "orders rows")
            t.eq([k for k, v in og.items() if v != ("paid", 1)], [],
                 "orders not paid with exactly one order.paid row")
            print("# fault: %d events, each stored once with its order"
                  % len(keys))
        self.run("every delivery that did not get 200 sent again: "
                 "each event stored exactly once with its effect, every "
                 "200 kept", c_redeliver)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("command", choices=("endpoints", "wordpress", "fault"))
    ap.add_argument("--url", required=True)
    ap.add_argument("--env", required=True)
    ap.add_argument("--socket", required=True)
    ap.add_argument("--database", required=True)
    ap.add_argument("--label", required=True)
    ap.add_argument("--kill-cmd")
    ap.add_argument("--restart-cmd")
    ap.add_argument("--senders", type=int, default=4)
    a = ap.parse_args()
    try:
        env = read_env(a.env)
        s = Suite(a, env)
        getattr(s, a.command)()
    except Exception:
        traceback.print_exc()
        return 2
    return 1 if s.failed else 0


if __name__ == "__main__":
    sys.exit(main())
