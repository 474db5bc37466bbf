# SPDX-License-Identifier: MIT
"""Load, kill and stop a running "oncehook serve", for tests/serve.sh.

    serveload.py --addr ADDR --serve-pid PID --env FILE --workers N STEP...

ADDR is where serve listens (127.0.0.1:PORT or a socket path); requests
go straight to it over FastCGI (tests/servers/oncetest/fcgiclient.py), signed here
with Python's hmac for the endpoint "shop" (hmac-sha256) of FILE (the
ONCEHOOK_* variables serve runs with); effects are read from
ONCEHOOK_DB.  The steps, in the order given:

  workers  serve runs N worker processes
  load     many threads send the same few events again and again, mixed
           with new ones: every answer 200, exactly one "processed" per
           event, one events row and one paid order per event
  kill     the same load, while one worker holding a request in flight
           and then another one at random are killed with SIGKILL: both
           are replaced (N workers again); every event answered
           "processed" has its row; a retry of every event afterwards is
           already_processed, or processed for an event that no answer
           had acknowledged; in the end one "processed" at most and
           exactly one row and one order per event
  stall    (serve --timeout T, 2 workers) two connections that send
           nothing, one that stops in the middle of its parameters and
           one in the middle of its body hold more than every worker:
           each is closed about T seconds after it was accepted, a signed
           delivery sent behind them is answered 200 processed within
           2T + 3 seconds, the workers are the same processes, nothing
           is stored for the body cut short, and sent again in whole it
           is processed
  deferred the load on endpoint "later" (ONCEHOOK_LATER_MODE=deferred):
           one "accepted" per event, its duplicates already_processed;
           then serve's work child runs every event once: one processed
           row and one paid order each
  keepidle (serve --timeout T) a connection the web server keeps, left
           idle on every worker: each is closed after T s, as one that
           sends nothing is, and a delivery behind them is answered
  termidle (serve --timeout T) four connections a worker that send
           nothing when serve gets SIGTERM: it exits within 2T s (it
           does not wait T s for each in turn)
  term     two requests in flight when serve gets SIGTERM, one stopped
           in the middle of its parameters, one in the middle of its
           body, and a kept connection idle: serve waits for the two,
           each gets 200 processed, then serve exits at once (the caller
           checks the exit status and the socket)

Prints "ok - serve: ..." / "not ok - serve: ..." lines (the shell numbers
them) with "#" lines saying what differed.  Exit status 0, 1 if a check
failed, 2 on a harness error.  Standard library only.
"""

import argparse
import hashlib
import hmac
import json
import os
import queue
import random
import signal
import sqlite3
import struct
import sys
import threading
import time

# The tests' client libraries, beside this folder's parent (bench/).
TESTS = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "tests")
sys.path.insert(0, os.path.join(TESTS, "servers"))

from oncetest import checks, fcgiclient  # noqa: E402
from oncetest.testkit import (children_of, comm, read_env,  # noqa: E402
                              sigkill)

THREADS = 16


def sockets(pid):
    """The socket inodes among pid's open files."""
    out = set()
    try:
        for fd in os.listdir("/proc/%d/fd" % pid):
            try:
                t = os.readlink("/proc/%d/fd/%s" % (pid, fd))
            except OSError:
                continue
            if t.startswith("socket:["):
                out.add(t)
    except OSError:
        pass
    return out


def alive(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            st = f.read()
        return st[st.rfind(")") + 2:].split()[0] != "Z"
    except OSError:
        return False


def closed_by_serve(sock, within):
    """Whether serve closed sock within `within` s: end of file (after
    what it still sent) or a reset, not a timeout of ours.  Closes it."""
    sock.settimeout(within)
    try:
        got = 0
        while got < 1 << 20:
            more = sock.recv(65536)
            if not more:
                return True
            got += len(more)
        return False
    except ConnectionResetError:
        return True
    except OSError:
        return False
    finally:
        sock.close()


class Run:
    def __init__(self, a):
        self.a = a
        env = read_env(a.env)
        self.secret = env["ONCEHOOK_SHOP_SECRET"].split()[0].encode()
        self.db = env["ONCEHOOK_DB"]
        self.failed = 0
        self.failures = []
        self.answers = {}           # key -> ["processed", ...] or errors
        self.lock = threading.Lock()
        self.tag = "%x" % int(time.time() * 1000)
        self.path = "/hooks/shop"

    # -- plumbing --------------------------------------------------------

    def check(self, cond, what):
        if not cond:
            self.failures.append(what)
        return cond

    def run(self, name, fn):
        checks.tap_scenario(self, "serve", name, fn)

    def body(self, key, order):
        return json.dumps({
            "eventId": key, "type": "payment.success",
            "metadata": {"orderId": order},
            "transaction": {"id": "tx_" + key, "amount": 12.5,
                            "currency": "EUR"},
            "customer": {"customerEmail": "load@example.com"},
        }, separators=(",", ":")).encode()

    def headers(self, body):
        return {"X-Webhook-Signature": "sha256=" + hmac.new(
            self.secret, body, hashlib.sha256).hexdigest()}

    def request(self, body, slow=None):
        return fcgiclient.request(self.a.addr, "POST", self.path, body,
                                  self.headers(body), slow=slow)

    def record(self, key, what):
        with self.lock:
            self.answers.setdefault(key, []).append(what)

    def deliver(self, key, order):
        """Send one delivery, record what came back: the body's status,
        or "HTTP <code>", or "failed: ..." (what a web server would turn
        into 502)."""
        try:
            r = self.request(self.body(key, order))
        except (fcgiclient.Incomplete, OSError) as e:
            self.record(key, "failed: %s" % e)
            return
        s = r.json.get("status") if isinstance(r.json, dict) else None
        if r.status == 200 and s in ("processed", "already_processed",
                                     "accepted"):
            if s == "already_processed" and \
                    r.header("idempotent-replayed") != "true":
                self.record(key, "already_processed without "
                                 "Idempotent-Replayed")
            else:
                self.record(key, s)
        else:
            self.record(key, "HTTP %d %r" % (r.status, r.body[:120]))

    def load(self, prefix, hot, copies, new, stop_early=None):
        """Deliveries: hot events copies times each, new events once,
        shuffled, by THREADS threads.  Returns the event keys and their
        orders."""
        events = {}
        work = []
        for i in range(hot):
            k = "%s-%s-hot-%d" % (prefix, self.tag, i)
            events[k] = "%s-%s-h%d" % (prefix, self.tag, i)
            work += [k] * copies
        for i in range(new):
            k = "%s-%s-new-%d" % (prefix, self.tag, i)
            events[k] = "%s-%s-n%d" % (prefix, self.tag, i)
            work.append(k)
        random.shuffle(work)
        q = queue.Queue()
        for k in work:
            q.put(k)

        def worker():
            while True:
                try:
                    k = q.get_nowait()
                except queue.Empty:
                    return
                self.deliver(k, events[k])

        threads = [threading.Thread(target=worker) for _ in range(THREADS)]
        for t in threads:
            t.start()
        return events, threads

    def rows(self, keys, endpoint="shop"):
        """events rows and orders (status) by key."""
        conn = sqlite3.connect(self.db, timeout=10)
        try:
            ev = {}
            for k, st in conn.execute(
                    "SELECT key, status FROM events WHERE endpoint = ? "
                    "AND key IN (%s)" % ",".join("?" * len(keys)),
                    [endpoint] + list(keys)):
                ev.setdefault(k, []).append(st)
            return ev
        finally:
            conn.close()

    def orders(self, ids):
        conn = sqlite3.connect(self.db, timeout=10)
        try:
            out = {}
            for oid, st in conn.execute(
                    "SELECT id, status FROM orders WHERE id IN (%s)"
                    % ",".join("?" * len(ids)), list(ids)):
                out.setdefault(oid, []).append(st)
            return out
        finally:
            conn.close()

    def check_effects(self, events, what, endpoint="shop"):
        """Exactly one processed events row and one paid order per
        event."""
        ev = self.rows(list(events), endpoint)
        od = self.orders(list(events.values()))
        bad = 0
        for k, oid in sorted(events.items()):
            if ev.get(k) != ["processed"]:
                bad += 1
                self.check(False, "%s: events rows for %s: %r, want one "
                           "processed" % (what, k, ev.get(k)))
            if od.get(oid) != ["paid"]:
                bad += 1
                self.check(False, "%s: orders rows for %s: %r, want one "
                           "paid" % (what, oid, od.get(oid)))
        return bad == 0

    def workers(self):
        return [p for p in children_of(self.a.serve_pid)
                if comm(p) not in ("oncehook-writer", "oncehook-work",
                                   "oncehook-outbox")]

    def writer(self):
        """serve's writer process (group commit), or None."""
        return next((p for p in children_of(self.a.serve_pid)
                     if comm(p) == "oncehook-writer"), None)

    def wait_workers(self, n, gone=(), timeout=10):
        deadline = time.time() + timeout
        while time.time() < deadline:
            w = self.workers()
            if len(w) == n and not set(w) & set(gone):
                return w
            time.sleep(0.05)
        return self.workers()

    def holder(self, before, timeout=3):
        """The worker that accepted a new connection since before (its
        sockets by worker)."""
        deadline = time.time() + timeout
        while time.time() < deadline:
            for w in self.workers():
                if sockets(w) - before.get(w, set()):
                    return w
            time.sleep(0.01)
        return None

    def slow_begin(self, key, order, params=False):
        """A request whose body is half sent (with params, stopped in
        the middle of its parameters); the worker holding it."""
        body = self.body(key, order)
        before = {w: sockets(w) for w in self.workers()}
        r = fcgiclient.Request(self.a.addr, fcgiclient.cgi_params(
            "POST", "/hooks/shop", body, self.headers(body)), body)
        if params:
            r.begin(head=200)
        else:
            r.begin(len(body) // 2)
        return r, self.holder(before)

    # -- steps ---------------------------------------------------------------

    def s_workers(self):
        w = self.wait_workers(self.a.workers)
        self.check(len(w) == self.a.workers, "serve %d has %d worker "
                   "processes %r, want %d" % (self.a.serve_pid, len(w), w,
                                              self.a.workers))

    def s_load(self):
        t0 = time.time()
        events, threads = self.load("load", hot=30, copies=20, new=400)
        for t in threads:
            t.join(120)
        n = sum(len(self.answers.get(k, [])) for k in events)
        print("#   %d deliveries of %d events in %.2fs" % (n, len(events),
                                                          time.time() - t0))
        for k in sorted(events):
            got = self.answers.get(k, [])
            self.check(all(g in ("processed", "already_processed")
                           for g in got),
                       "%s: answers %r" % (k, got))
            self.check(got.count("processed") == 1, "%s: %d processed "
                       "answers, want 1: %r" % (k, got.count("processed"),
                                                got))
        self.check_effects(events, "after the load")

    def s_deferred(self):
        self.path = "/hooks/later"
        try:
            t0 = time.time()
            events, threads = self.load("deferred", hot=20, copies=10,
                                        new=200)
            for t in threads:
                t.join(120)
            answered = time.time() - t0
            for k in sorted(events):
                got = self.answers.get(k, [])
                self.check(all(g in ("accepted", "already_processed")
                               for g in got), "%s: answers %r" % (k, got))
                self.check(got.count("accepted") == 1, "%s: %d accepted "
                           "answers, want 1: %r" % (k, got.count("accepted"),
                                                    got))
            deadline = time.time() + 60
            while time.time() < deadline:
                ev = self.rows(list(events), "later")
                if all(v == ["processed"] for v in ev.values()) and \
                        len(ev) == len(events):
                    break
                time.sleep(0.2)
            print("#   %d events answered in %.2fs, all processed %.2fs "
                  "after the first delivery" % (len(events), answered,
                                                 time.time() - t0))
            self.check_effects(events, "after the work child", "later")
        finally:
            self.path = "/hooks/shop"

    def check_after_kill(self, events, what):
        """After processes were killed under load: every event answered
        processed is stored; every answer is 200, 503 (busy, nothing
        processed, retry later) or a failed connection; a retry of every
        event processes it at most once in all; one row and one order
        each."""
        ev = self.rows(list(events))
        for k in sorted(events):
            if "processed" in self.answers.get(k, []):
                self.check(ev.get(k) == ["processed"], "%s was answered "
                           "processed, events rows %r" % (k, ev.get(k)))
            for x in self.answers.get(k, []):
                self.check(x in ("processed", "already_processed") or
                           x.startswith("failed") or
                           x.startswith("HTTP 503 "), "%s: answer %r"
                           % (k, x))
        acked = {k for k in events if "processed" in self.answers.get(k, [])}
        for k, oid in sorted(events.items()):
            self.deliver(k, oid)
        for k in sorted(events):
            got = self.answers.get(k, [])
            last = got[-1] if got else None
            if k in acked:
                self.check(last == "already_processed", "%s: retry after "
                           "an acknowledged delivery answered %r" % (k, last))
            else:
                self.check(last in ("processed", "already_processed"),
                           "%s: retry of an unacknowledged event answered "
                           "%r" % (k, last))
            self.check(got.count("processed") <= 1, "%s: processed %d "
                       "times: %r" % (k, got.count("processed"), got))
        self.check_effects(events, what)

    def s_killwriter(self):
        """SIGKILL to the writer while claims are in flight: the workers
        answer 503 for what it held, never 200; serve starts it again."""
        victim = self.writer()
        if not self.check(victim is not None, "no writer process (group "
                          "commit) among serve's children"):
            return
        events, threads = self.load("killw", hot=20, copies=10, new=600)
        time.sleep(0.15)
        os.kill(victim, signal.SIGKILL)
        done = sum(len(v) for v in list(self.answers.values()))
        for t in threads:
            t.join(120)
        deadline = time.time() + 10
        while time.time() < deadline and (self.writer() in (None, victim)
                                          or len(self.workers()) !=
                                          self.a.workers):
            time.sleep(0.05)
        self.check(self.writer() not in (None, victim) and
                   len(self.workers()) == self.a.workers,
                   "a new writer (%r, the killed one %d) and %d workers "
                   "(%r)" % (self.writer(), victim, self.a.workers,
                             self.workers()))
        busy = sum(x.startswith("HTTP 503 ") for v in self.answers.values()
                   for x in v)
        print("#   killed the writer %d after %d answers; 503 answers: %d"
              % (victim, done, busy))
        self.check_after_kill(events, "after the writer was killed and "
                              "the retries")

    def s_batchdup(self):
        """Group commit: while the writer's batch cannot commit (another
        connection holds SQLite's write lock), neither a delivery nor a
        retry of the same event, which went to the writer behind it, is
        answered; once the lock is let go, one is processed and the other
        is the duplicate."""
        key = "bdup-%s" % self.tag
        conn = sqlite3.connect(self.db, timeout=10, isolation_level=None)
        conn.execute("BEGIN IMMEDIATE")
        threads = [threading.Thread(target=self.deliver, args=(key, key))
                   for _ in range(2)]
        threads[0].start()
        time.sleep(0.1)
        threads[1].start()
        time.sleep(0.6)
        early = list(self.answers.get(key, []))
        conn.execute("ROLLBACK")
        conn.close()
        for t in threads:
            t.join(30)
        got = self.answers.get(key, [])
        self.check(early == [], "answered while the batch could not "
                   "commit: %r" % early)
        self.check(sorted(got) == ["already_processed", "processed"],
                   "two deliveries of one event: %r" % got)
        self.check_effects({key: key}, "after the held batch")

    def s_kill(self):
        before = self.workers()
        self.check(len(before) == self.a.workers, "workers before: %r"
                   % before)
        # A request held in flight by one worker.
        skey = "kill-%s-slow" % self.tag
        sorder = "kill-%s-slow" % self.tag
        slow, victim = self.slow_begin(skey, sorder)
        if not self.check(victim is not None, "no worker took the slow "
                          "request"):
            return
        idle = {w: len(sockets(w)) for w in self.workers()}
        events, threads = self.load("kill", hot=20, copies=20, new=400)
        events[skey] = sorder
        time.sleep(0.05)
        os.kill(victim, signal.SIGKILL)
        try:
            r = slow.finish()
            self.record(skey, "HTTP %d %r" % (r.status, r.body[:80]))
            self.check(False, "the request held by the killed worker got "
                       "an answer: %r" % r)
        except (fcgiclient.Incomplete, OSError) as e:
            self.record(skey, "failed: %s" % e)
        # Another worker, caught with a connection open (mid-request).
        second = None
        deadline = time.time() + 5
        while second is None and time.time() < deadline:
            for w in self.workers():
                if w != victim and w in idle and len(sockets(w)) > idle[w]:
                    second = w
                    break
        if second is None:
            second = random.choice([w for w in self.workers()
                                    if w != victim])
        if not sigkill(second):
            # With group commit serve ends every worker when one dies
            # (a pair may hold half a claim) and starts them anew: it
            # may have ended this one first.
            print("#   worker %d had already been ended by serve" % second)
        done = sum(len(v) for v in list(self.answers.values()))
        for t in threads:
            t.join(120)
        after = self.wait_workers(self.a.workers, gone=(victim, second))
        self.check(len(after) == self.a.workers and victim not in after and
                   second not in after,
                   "workers after killing %d and %d: %r, want %d others"
                   % (victim, second, after, self.a.workers))
        failed = {k: v for k, v in self.answers.items() if k in events and
                  any(x.startswith("failed") for x in v)}
        print("#   killed %d (holding a request), then %d after %d answers; "
              "deliveries that failed: %d %r" % (victim, second, done, sum(
                  sum(x.startswith("failed") for x in v)
                  for v in failed.values()), sorted(failed)[:5]))
        self.check(skey in failed, "the request held by the killed worker "
                   "did not fail")
        self.check_after_kill(events, "after the kills and the retries")

    def s_stall(self):
        t = self.a.timeout
        before = self.workers()
        key = "stall-%s" % self.tag
        body = self.body(key, key)
        params = fcgiclient.cgi_params("POST", "/hooks/shop", body,
                                       self.headers(body))
        held = []
        for _ in range(2):      # connected, nothing sent
            held.append(fcgiclient.connect(self.a.addr, timeout=4 * t + 10))
        s = fcgiclient.connect(self.a.addr, timeout=4 * t + 10)
        whole = fcgiclient.record(fcgiclient.BEGIN_REQUEST, struct.pack(
            "!HB5x", fcgiclient.RESPONDER, 0)) + fcgiclient.stream(
            fcgiclient.PARAMS, fcgiclient.encode_params(params))
        s.sendall(whole[:len(whole) // 2])      # half the parameters
        held.append(s)
        r = fcgiclient.Request(self.a.addr, params, body,
                               timeout=4 * t + 10)
        r.begin(len(body) // 2)                 # half the body
        held.append(r.sock)
        time.sleep(0.2)
        ok = "stall-%s-ok" % self.tag
        self.deliver_behind("%d stalled connections" % len(held), ok)
        for i, c in enumerate(held):
            self.check(closed_by_serve(c, 2 * t + 3), "stalled connection "
                       "%d still open after %ds" % (i, 4 * t + 3))
        after = self.workers()
        self.check(after == before, "workers %r, after the stalls %r: the "
                   "same processes go back to accept()" % (before, after))
        self.check(self.rows([key]).get(key) is None, "the body cut short "
                   "was stored: %r" % self.rows([key]).get(key))
        self.deliver(key, key)
        self.check(self.answers.get(key) == ["processed"], "the event cut "
                   "short, sent again in whole: %r, want processed"
                   % self.answers.get(key))
        self.check_effects({key: key, ok: ok}, "after the stalls")

    def closed_at_once(self, sock):
        """After FCGI_END_REQUEST: whether serve's end of the connection
        is closed at once (end of file, then our writes refused), or
        still open, reading what we send (libfcgi's lingering close)."""
        sock.settimeout(5)
        try:
            eof = sock.recv(1) == b""
        except ConnectionResetError:
            eof = True
        time.sleep(0.3)
        try:
            for _ in range(3):  # TCP: the reset comes back after one
                sock.send(fcgiclient.record(fcgiclient.STDIN, b"x" * 8))
                time.sleep(0.1)
        except (BrokenPipeError, ConnectionResetError):
            return eof, True
        return eof, False

    def begin_raw(self, path, body, keep=0, end=False):
        """A connection with the request's parameters and whole body
        sent, with the record that ends the body in the same write (as
        web servers send it) if end, else without it."""
        params = fcgiclient.cgi_params("POST", path, body,
                                       self.headers(body))
        s = fcgiclient.connect(self.a.addr, timeout=10)
        s.sendall(fcgiclient.record(fcgiclient.BEGIN_REQUEST, struct.pack(
            "!HB5x", fcgiclient.RESPONDER, keep)) + fcgiclient.stream(
            fcgiclient.PARAMS, fcgiclient.encode_params(params)) +
            fcgiclient.record(fcgiclient.STDIN, body) +
            (fcgiclient.record(fcgiclient.STDIN, b"") if end else b""))
        return s

    def answer(self, s):
        r = fcgiclient.Request(self.a.addr, {}, b"")
        r.sock = s
        return r.read()

    def s_closing(self):
        # A delivery read whole: closed as soon as it is answered.
        # The end of the body in the same write: sent apart, it could
        # come after the answer on a busy machine (libfcgi's way then).
        key = "closing-%s" % self.tag
        s = self.begin_raw(self.path, self.body(key, key), end=True)
        r = self.answer(s)
        self.check(r.status == 200 and r.json.get("status") == "processed",
                   "the delivery: %r, want 200 processed" % r)
        eof, closed = self.closed_at_once(s)
        s.close()
        self.check(eof and closed, "a request read whole: end of file %s, "
                   "closed at once %s; want both" % (eof, closed))
        # Answered before its body was read (unknown endpoint): the
        # careful close, which reads what still comes.
        s = self.begin_raw("/hooks/nope", b"{" + b" " * 16000 + b"}")
        s.sendall(fcgiclient.record(fcgiclient.STDIN, b""))
        r = self.answer(s)
        self.check(r.status == 404, "the unknown endpoint: %r, want 404"
                   % r)
        eof, closed = self.closed_at_once(s)
        s.close()
        self.check(eof and not closed, "a body left unread: end of file "
                   "%s, closed at once %s; want the first only (libfcgi "
                   "reads on until the web server closes)" % (eof, closed))
        # The body whole but the record that ends it held back: the
        # answer comes at once all the same (nothing waits for that
        # record), and the connection takes libfcgi's careful close.
        kh = key + "-held"
        s = self.begin_raw(self.path, self.body(kh, kh))
        s.settimeout(self.a.timeout / 2.0)
        t0 = time.time()
        try:
            r = self.answer(s)
        except (fcgiclient.Incomplete, OSError) as e:
            r = "no answer: %s" % e
        took = time.time() - t0
        s.close()
        self.check(getattr(r, "status", 0) == 200 and
                   r.json.get("status") == "processed",
                   "the end of the body held back: %r after %.1fs, want "
                   "200 processed at once" % (r, took))
        # A connection the web server keeps: never emptied nor closed;
        # the next request on it is answered.
        k1, k2 = key + "-k1", key + "-k2"
        s = self.begin_raw(self.path, self.body(k1, k1), keep=1, end=True)
        r1 = self.answer(s)
        body = self.body(k2, k2)
        params = fcgiclient.cgi_params("POST", self.path, body,
                                       self.headers(body))
        s.sendall(fcgiclient.record(fcgiclient.BEGIN_REQUEST, struct.pack(
            "!HB5x", fcgiclient.RESPONDER, 0)) + fcgiclient.stream(
            fcgiclient.PARAMS, fcgiclient.encode_params(params)) +
            fcgiclient.stream(fcgiclient.STDIN, body))
        try:
            r2 = self.answer(s)
        except (fcgiclient.Incomplete, OSError) as e:
            r2 = "no answer: %s" % e
        s.close()
        self.check(r1.status == 200 and r1.json.get("status") ==
                   "processed" and getattr(r2, "status", 0) == 200 and
                   r2.json.get("status") == "processed",
                   "two requests on a kept connection: %r, %r; want 200 "
                   "processed twice" % (r1, r2))
        self.check_effects({key: key, kh: kh, k1: k1, k2: k2},
                           "after closing")

    def deliver_behind(self, what, key):
        """A signed delivery of key behind what holds the workers:
        answered 200 processed within 2T + 3 s (T: --timeout)."""
        t = self.a.timeout
        body = self.body(key, key)
        t0 = time.time()
        try:
            resp = fcgiclient.request(self.a.addr, "POST", self.path, body,
                                      self.headers(body), timeout=2 * t + 3)
        except (fcgiclient.Incomplete, OSError) as e:
            self.check(False, "the delivery behind %s got no answer within "
                       "%ds (2 x --timeout %d + 3): %s" % (what, 2 * t + 3,
                                                           t, e))
            return
        took = time.time() - t0
        print("#   the delivery behind %s was answered after %.1fs "
              "(timeout %ds)" % (what, took, t))
        self.check(resp.status == 200 and isinstance(resp.json, dict) and
                   resp.json.get("status") == "processed",
                   "the delivery behind %s: %r, want 200 processed"
                   % (what, resp))
        self.check(took < 2 * t + 3, "answered after %.1fs, want under %ds"
                   % (took, 2 * t + 3))

    def exit_after(self, limit):
        """The seconds until serve ended, waited for limit s at most."""
        t0 = time.time()
        while alive(self.a.serve_pid) and time.time() < t0 + limit:
            time.sleep(0.05)
        return time.time() - t0

    def s_keepidle(self):
        # A kept connection idle on each worker: each is closed after
        # --timeout, as a connection that sends nothing is, and a
        # delivery behind them is answered.
        t = self.a.timeout
        kept = []
        for i in range(self.a.workers):
            k = "keepidle-%d-%s" % (i, self.tag)
            s = self.begin_raw(self.path, self.body(k, k), keep=1, end=True)
            r = self.answer(s)
            self.check(r.status == 200, "kept connection %d: %r" % (i, r))
            kept.append(s)
        self.deliver_behind("%d idle kept connections" % len(kept),
                            "keepidle-ok-%s" % self.tag)
        closed = sum(closed_by_serve(s, t + 3) for s in kept)
        self.check(closed == len(kept), "%d of %d idle kept connections "
                   "closed by serve" % (closed, len(kept)))

    def s_termidle(self):
        # Connections that send nothing, more than the workers, when
        # serve gets SIGTERM: nothing of them is in flight; serve waits
        # for none after the first --timeout (it used to take them one
        # by one, --timeout each).
        t = self.a.timeout
        n = 4 * self.a.workers
        socks = [fcgiclient.connect(self.a.addr, timeout=30)
                 for _ in range(n)]
        time.sleep(0.3)
        os.kill(self.a.serve_pid, signal.SIGTERM)
        took = self.exit_after(30)
        for s in socks:
            s.close()
        print("#   serve exited %.2fs after SIGTERM with %d connections "
              "that send nothing (timeout %ds)" % (took, n, t))
        self.check(took < 2 * t, "serve exited %.1fs after SIGTERM with %d "
                   "silent connections, want under %ds (one --timeout)" % (
                       took, n, 2 * t))

    def s_term(self):
        # Two in flight: one in the middle of its parameters (libfcgi
        # still accepting it), one in the middle of its body.
        held = []
        for what, params in (("parameters", True), ("body", False)):
            key = "term-%s-%s" % (what[0], self.tag)
            slow, holder = self.slow_begin(key, key, params=params)
            if not self.check(holder is not None, "no worker took the "
                              "request stopped in its %s" % what):
                return
            held.append((what, key, slow, holder))
        # And a connection the web server keeps, idle after its answer:
        # no request is in flight on it, so it holds nobody.
        kk = "term-k-%s" % self.tag
        kept = self.begin_raw(self.path, self.body(kk, kk), keep=1,
                              end=True)
        r = self.answer(kept)
        self.check(r.status == 200, "the kept connection's request: %r" % r)
        os.kill(self.a.serve_pid, signal.SIGTERM)
        time.sleep(0.5)
        self.check(alive(self.a.serve_pid), "serve exited with requests "
                   "in flight")
        for what, key, slow, holder in held:
            self.check(alive(holder), "the worker holding the request "
                       "stopped in its %s exited" % what)
        for what, key, slow, holder in held:
            try:
                r = slow.finish()
            except (fcgiclient.Incomplete, OSError) as e:
                self.check(False, "the request stopped in its %s at "
                           "SIGTERM failed: %s" % (what, e))
                continue
            self.check(r.status == 200 and isinstance(r.json, dict) and
                       r.json.get("status") == "processed",
                       "the request stopped in its %s at SIGTERM: %r, "
                       "want 200 processed" % (what, r))
            self.check(self.rows([key]).get(key) == ["processed"],
                       "no events row for the request stopped in its %s"
                       % what)
        took = self.exit_after(10)
        kept.close()
        print("#   serve exited %.2fs after the last answer" % took)
        self.check(not alive(self.a.serve_pid), "serve still running 10 s "
                   "after SIGTERM")
        self.check(took < 5, "serve took %.1fs to exit after the last "
                   "answer, with an idle kept connection open (--timeout "
                   "%d): want under 5 s" % (took, self.a.timeout))


TITLES = {
    "workers": "serve runs --workers worker processes",
    "load": "16 threads, 30 events sent 20 times each mixed with 400 new "
            "ones: every answer 200, exactly one processed per event, one "
            "events row and one paid order each",
    "kill": "SIGKILL to the worker holding a request, then to another "
            "mid-request under load: both replaced; no acknowledged event "
            "lost; a retry of every event processes it at most once in "
            "all; one row and one order each",
    "killwriter": "group commit: SIGKILL to the writer under load: no "
                  "answer 200 for an event not stored, the writer and the "
                  "workers started again; a retry of every event processes "
                  "it at most once in all; one row and one order each",
    "batchdup": "a delivery and its retry while the writer's batch "
                "cannot commit: neither answered before the commit, then "
                "one processed and one already_processed, one row",
    "stall": "--timeout T, 2 workers: 2 idle connections, one stopped "
             "mid-parameters, one mid-body: each closed after T s; a "
             "delivery behind them answered within 2T + 3 s; same workers; "
             "nothing stored for the body cut short",
    "deferred": "deferred mode: 20 events sent 10 times each and 200 new "
                "ones: one accepted per event, the rest already_processed; "
                "serve's work child then runs each once: one processed row "
                "and one paid order each",
    "closing": "a request read whole is closed as soon as it is "
               "answered; one answered before its body was read keeps "
               "reading until the web server closes (libfcgi's way); one "
               "whose body's end is held back is answered at once; a "
               "kept connection takes its next request",
    "keepidle": "--timeout T: a kept connection idle on every worker: each "
                "closed after T s, a delivery behind them answered within "
                "2T + 3 s",
    "termidle": "SIGTERM with connections that send nothing queued, four "
                "a worker: serve exits within 2T s, not T s for each",
    "term": "SIGTERM with two requests in flight (one stopped in its "
            "parameters, one in its body) and a kept connection idle: "
            "serve waits for the two, each gets 200 processed, then serve "
            "exits",
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("steps", nargs="+", choices=sorted(TITLES))
    ap.add_argument("--addr", required=True)
    ap.add_argument("--serve-pid", type=int, required=True)
    ap.add_argument("--env", required=True)
    ap.add_argument("--workers", type=int, default=4)
    ap.add_argument("--label", default="")
    ap.add_argument("--timeout", type=int, default=30)
    a = ap.parse_args()
    try:
        run = Run(a)
    except (OSError, KeyError) as e:
        print("# harness error: %s" % e)
        return 2
    for s in a.steps:
        title = TITLES[s]
        if a.label:
            title = "%s: %s" % (a.label, title)
        run.run(title, getattr(run, "s_" + s))
    return 1 if run.failed else 0


if __name__ == "__main__":
    sys.exit(main())
