# SPDX-License-Identifier: MIT
"""Group commit under a web server's FastCGI processes (or its CGI
requests), for tests/groupcommit.sh: load through lighttpd, SIGKILL to
the shared writer and to a FastCGI process in the middle of it, then the
checks.

    groupload.py --url URL --env FILE --server-pid PID [--kills N]
                 [--seconds S] [--stripe] [--every N] [--cgi]

With --cgi the server runs oncehook as CGI: the process killed is a
request's, and a writer runs only while requests overlap.

URL is lighttpd's address of the endpoint "shop" (hmac-sha256, signed
here with Python's hmac from the ONCEHOOK_* variables in FILE); effects
are read from ONCEHOOK_DB.  With --stripe, URL is the endpoint "stripe"
(Stripe's scheme: a signed timestamp, no replay guard) and the events
Stripe's.  The load: THREADS threads send new events, and again events
already sent (each thread every Nth event again at once, and every
N+2nd the next thread's: N is 3 unless --every says), for S seconds
(default 6); meanwhile the
writer (the process named oncehook-writer whose ONCEHOOK_DB is ours) is
killed N times (default 3), a new one being looked for before each kill,
and one FastCGI process (a child of PID) once.  Then a last second
without kills, and every event is sent once more.

Checks, each an "ok -" or "not ok -" line (the shell numbers them):
  - a writer ran, and after each kill another was started;
  - every event answered 200 (processed or already_processed) before the
    last round is in the database, processed, with its paid order: no
    200 for anything the database does not have;
  - in the last round every event is 200, and "processed" only if no
    earlier answer had acknowledged it;
  - in the end exactly one events row and one order per event, and at
    most one "processed" answer per event.

Exit status 0, 1 if a check failed, 2 on a harness error.
"""

import argparse
import hashlib
import hmac
import http.client
import json
import os
import sqlite3
import sys
import threading
import time
import urllib.parse

# The tests' client libraries, beside this folder's parent (bench/).
TESTS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "tests")
sys.path.insert(0, os.path.join(TESTS, "servers"))

from oncetest.testkit import (children_of, comm, read_env,  # noqa: E402
                              sigkill)

THREADS = 24


def writers(db):
    """The pids of the writers whose ONCEHOOK_DB is db."""
    want = ("ONCEHOOK_DB=%s" % db).encode()
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit() or comm(int(d)) != "oncehook-writer":
            continue
        try:
            with open("/proc/%s/environ" % d, "rb") as f:
                if want in f.read().split(b"\0"):
                    out.append(int(d))
        except OSError:
            pass
    return out


class Load:
    def __init__(self, a):
        env = read_env(a.env)
        self.stripe = a.stripe
        self.endpoint = "stripe" if a.stripe else "shop"
        self.every = a.every
        self.secret = env["ONCEHOOK_%s_SECRET" % self.endpoint.upper()
                          ].split()[0].encode()
        self.db = env["ONCEHOOK_DB"]
        u = urllib.parse.urlsplit(a.url)
        self.host, self.port, self.path = u.hostname, u.port, u.path
        self.answers = {}           # key -> ["processed", "HTTP 503", ...]
        self.lock = threading.Lock()
        self.stop = threading.Event()
        self.tag = "%x" % int(time.time() * 1000)
        self.failed = 0

    def body(self, key):
        if self.stripe:
            return json.dumps({
                "id": key, "object": "event",
                "type": "payment_intent.succeeded",
                "data": {"object": {
                    "id": "pi_" + key, "amount": 1250, "currency": "eur",
                    "metadata": {"order_id": "o_" + key}}},
            }, separators=(",", ":")).encode()
        return json.dumps({
            "eventId": key, "type": "payment.success",
            "metadata": {"orderId": "o_" + key},
            "transaction": {"id": "tx_" + key, "amount": 12.5,
                            "currency": "EUR"},
        }, separators=(",", ":")).encode()

    def send(self, conn, key):
        b = self.body(key)
        if self.stripe:
            t = str(int(time.time()))
            sig = hmac.new(self.secret, t.encode() + b"." + b,
                           hashlib.sha256).hexdigest()
            hdr = ("Stripe-Signature", "t=%s,v1=%s" % (t, sig))
        else:
            sig = hmac.new(self.secret, b, hashlib.sha256).hexdigest()
            hdr = ("X-Webhook-Signature", "sha256=" + sig)
        try:
            if conn[0] is None:
                conn[0] = http.client.HTTPConnection(self.host, self.port,
                                                     timeout=60)
            conn[0].request("POST", self.path, body=b, headers={
                "Content-Type": "application/json", hdr[0]: hdr[1]})
            r = conn[0].getresponse()
            data = r.read()
            if r.status == 200:
                got = json.loads(data).get("status", "?")
            else:
                got = "HTTP %d" % r.status
            if r.getheader("Connection", "").lower() == "close":
                conn[0].close()
                conn[0] = None
        except (OSError, http.client.HTTPException, ValueError) as e:
            got = "failed: %s" % e
            if conn[0] is not None:
                conn[0].close()
            conn[0] = None
        with self.lock:
            self.answers.setdefault(key, []).append(got)
        return got

    def sender(self, t):
        conn, i = [None], 0
        while not self.stop.is_set():
            key = "g-%s-%d-%d" % (self.tag, t, i)
            self.send(conn, key)
            # Every third event (every Nth) is sent again at once: a
            # retry, maybe of a claim still in the writer's batch.
            if i % self.every == 0:
                self.send(conn, key)
            # Every fifth (N+2nd), the event the next thread is about to
            # send: two deliveries of one event from two processes at
            # once.
            if i % (self.every + 2) == 0:
                self.send(conn, "g-%s-%d-%d" % (self.tag,
                                                (t + 1) % THREADS, i + 1))
            i += 1
        if conn[0] is not None:
            conn[0].close()

    def ok(self, cond, what, detail=()):
        print("%s - %s" % ("ok" if cond else "not ok", what))
        if not cond:
            self.failed += 1
            for line in list(detail)[:20]:
                print("#   %s" % line)
        sys.stdout.flush()
        return cond

    def rows(self):
        c = sqlite3.connect("file:%s?mode=ro" % self.db, uri=True,
                            timeout=30)
        try:
            ev = {}
            for k, st in c.execute("SELECT key, status FROM events "
                                   "WHERE endpoint = ?",
                                   (self.endpoint,)):
                ev.setdefault(k, []).append(st)
            orders = {}
            for oid, st in c.execute("SELECT id, status FROM orders"):
                orders.setdefault(oid, []).append(st)
            return ev, orders
        finally:
            c.close()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--url", required=True)
    ap.add_argument("--env", required=True)
    ap.add_argument("--server-pid", type=int, required=True)
    ap.add_argument("--kills", type=int, default=3)
    ap.add_argument("--seconds", type=float, default=6.0)
    ap.add_argument("--label", default="")
    ap.add_argument("--stripe", action="store_true")
    ap.add_argument("--every", type=int, default=3)
    ap.add_argument("--cgi", action="store_true")
    a = ap.parse_args()
    what = "a CGI request's process" if a.cgi else "a FastCGI process"
    g = Load(a)

    threads = [threading.Thread(target=g.sender, args=(t,))
               for t in range(THREADS)]
    for t in threads:
        t.start()
    killed, started_after, fcgi_killed = [], [], None
    step = a.seconds / (a.kills + 2)
    for k in range(a.kills):
        time.sleep(step)
        deadline = time.time() + 5
        w = [p for p in writers(g.db) if p not in killed]
        while not w and time.time() < deadline:
            time.sleep(0.02)
            w = [p for p in writers(g.db) if p not in killed]
        if not w:
            break
        if killed:
            started_after.append(w[0])
        if not sigkill(w[0]):
            print("# writer %d ended before its SIGKILL" % w[0])
        killed.append(w[0])
        if k == 0:
            # A CGI request's process lives a few milliseconds: one
            # that ends between the look and the signal is passed over.
            deadline = time.time() + (2 if a.cgi else 0)
            while fcgi_killed is None:
                fcgi_killed = next((p for p in children_of(a.server_pid)
                                    if comm(p) == "oncehook" and
                                    sigkill(p)), None)
                if time.time() >= deadline:
                    break
                time.sleep(0.001)
    time.sleep(step)
    # The writer started after the last kill, looked for under load.
    deadline = time.time() + 5
    while time.time() < deadline:
        w = [p for p in writers(g.db) if p not in killed]
        if w:
            started_after.append(w[0])
            break
        time.sleep(0.02)
    time.sleep(1.0)             # a last second without kills
    g.stop.set()
    for t in threads:
        t.join(120)

    n_ans = sum(len(v) for v in g.answers.values())
    busy = sum(x.startswith("HTTP 503") for v in g.answers.values()
               for x in v)
    print("# %d events, %d answers, %d of them 503; killed writers %r, "
          "the writers after them %r; killed %s %r"
          % (len(g.answers), n_ans, busy, killed, started_after,
             what, fcgi_killed))
    if a.kills:
        g.ok(len(killed) == a.kills and len(started_after) == a.kills,
             "%sgroup commit: the writer was killed %d times under load "
             "and another was started each time" % (a.label, a.kills),
             ["killed %r, found after them %r" % (killed, started_after)])
        g.ok(fcgi_killed is not None,
             "%s%s was killed under load" % (a.label, what))
    else:
        g.ok(len(started_after) == 1, "%sunder load a writer ran (%s)"
             % (a.label, "requests overlapped" if a.cgi else
                "claims met a taken write lock"),
             ["writers found: %r" % started_after])

    ev, orders = g.rows()
    acked = {k for k, v in g.answers.items()
             if "processed" in v or "already_processed" in v}
    bad = ["%s answered %r but its rows are %r, order %r"
           % (k, g.answers[k], ev.get(k), orders.get("o_" + k))
           for k in sorted(acked)
           if ev.get(k) != ["processed"] or
           orders.get("o_" + k) != ["paid"]]
    g.ok(not bad and len(acked) > 100,
         "%severy one of %d events answered 200 is in the database, "
         "processed, with its paid order" % (a.label, len(acked)), bad)

    # The provider's retries: every event once more.
    conn, last = [None], {}
    for k in sorted(g.answers):
        last[k] = g.send(conn, k)
    bad = []
    for k in sorted(g.answers):
        if k in acked and last[k] != "already_processed":
            bad.append("%s: acknowledged, then %r" % (k, last[k]))
        elif k not in acked and last[k] not in ("processed",
                                                "already_processed"):
            bad.append("%s: never acknowledged, then %r" % (k, last[k]))
    g.ok(not bad, "%sa retry of every event is 200: already_processed "
         "if it had been acknowledged" % a.label, bad)

    ev, orders = g.rows()
    bad = ["%s: rows %r, order %r, answers %r" % (k, ev.get(k),
           orders.get("o_" + k), g.answers[k])
           for k in sorted(g.answers)
           if ev.get(k) != ["processed"] or
           orders.get("o_" + k) != ["paid"] or
           g.answers[k].count("processed") > 1]
    g.ok(not bad, "%sin the end one events row, one paid order and at "
         "most one processed answer for each of %d events"
         % (a.label, len(g.answers)), bad)
    return 1 if g.failed else 0


if __name__ == "__main__":
    try:
        sys.exit(main())
    except Exception:
        import traceback
        traceback.print_exc()
        sys.exit(2)
