# SPDX-License-Identifier: MIT
"""oncehook's connection to MariaDB cut at the instant of a COMMIT, by
the fault proxy tests/servers/oncetest/myproxy.py between the program
and a server tests/commitfault.sh started, at each moment:

  before      the COMMIT never reaches the server (it rolls back);
  unanswered  the server commits, its answer never reaches oncehook;
  answered    the answer reaches oncehook, then the connection is cut.

For each moment:

  cgi   a signed delivery to a CGI process (one per request):
        before and unanswered answered 503 with Retry-After,
        answered 200 processed; the same delivery again (the proxy no
        longer cutting) 200, processed (before) or already_processed;
  fcgi  the same, to one FastCGI process whose connection to the server
        is the one cut (a delivery before made it): then a new event to
        it is processed on its next connection;
  fcgi-direct  the same, the claim sent without a lookup first (after
        eight new events in a row, to an endpoint without a replay
        guard): its failure is followed by the lookup it skipped, so
        unanswered is 200 already_processed, the commit read back;
  fcgi deferred  a deferred event to a FastCGI process, which runs it
        after its answer (200 accepted): the second COMMIT, the run's,
        cut; the run all or nothing, work runs what is left;
  work  a deferred event's run by "oncehook work --once" cut at its
        COMMIT: all of the run or none of it; once the run's lease is
        over, work again runs it (before) or finds nothing to run;
  replay  "oncehook replay KEY" of a deferred event cut at its COMMIT:
        "replayed" only when the commit is known (exit 0), else "not
        replayed" (exit 1); the same replay again runs it, or says it
        was processed already;
  deliver  "oncehook deliver --once" cut at its lease's COMMIT: the
        outbox row sent then (before, answered) or after the lease
        (unanswered), and once in all (its target counts).

and, after each: the event's row processed, and its one effect (a row
the actions insert, with no unique key to stop a second) there once,
counted on the server as root.  First, the proxy itself: which texts
are a COMMIT, and a prepared COMMIT (COM_STMT_EXECUTE) cut at each
moment, with a client of the binary protocol (Mini).

Prints TAP.  Standard library only.
"""

import argparse
import hashlib
import os
import socket
import struct
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "servers"))

from oncetest import fcgiclient, hookclient, mariadb, myproxy  # noqa: E402

SECRET = "commitfault-secret-1"
STRIPE_SECRET = "whsec_commitfaultStripeSecret0123456789"
ACTIONS = """-- SPDX-License-Identifier: MIT
-- One effect per run of an event's actions: no unique key, so that a
-- second run would show as a second row.
CREATE TABLE IF NOT EXISTS cf_effects (
  id BIGINT AUTO_INCREMENT PRIMARY KEY,
  endpoint VARCHAR(64) NOT NULL,
  event_key VARCHAR(191) NOT NULL,
  INDEX (event_key)
) ENGINE=InnoDB;
-- on: *
INSERT INTO cf_effects (endpoint, event_key) VALUES (:endpoint, :key);
INSERT INTO outbox (topic, payload)
VALUES ('thing.done', JSON_OBJECT('event_key', :key));
"""
# The outbox's target: one line per attempt that reached it.
TARGET = """#!/bin/sh
# SPDX-License-Identifier: MIT
echo "$ONCEHOOK_OUTBOX_ID $ONCEHOOK_OUTBOX_KEY" >>"$0.sent"
"""


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def check(self, ok, what, why=()):
        self.n += 1
        if not ok:
            self.failed += 1
        print("%s %d - %s" % ("ok" if ok else "not ok", self.n, what))
        for line in ([why] if isinstance(why, str) else why) if not ok \
                else ():
            print("#   " + line)
        sys.stdout.flush()
        return ok


class World:
    """The server (as root, over its socket), the proxy, the program."""

    def __init__(self, a):
        self.a = a
        self.root = mariadb.My(a.socket, a.database)
        self.proxy = myproxy.FaultProxy(("127.0.0.1", a.port)).start()
        self.actions = os.path.join(a.tmp, "commitfault.sql")
        with open(self.actions, "w") as f:
            f.write(ACTIONS)
        self.target = os.path.join(a.tmp, "target.sh")
        with open(self.target, "w") as f:
            f.write(TARGET)
        os.chmod(self.target, 0o755)
        self.log = open(os.path.join(a.tmp, "oncehook.log"), "ab")
        self.seq = 0

    def env(self, prefix):
        e = {k: v for k, v in os.environ.items()
             if not k.startswith("ONCEHOOK_")}
        e.update({
            "ONCEHOOK_DB": "mysql://%s@127.0.0.1:%d/%s" % (
                self.a.user, self.proxy.port, self.a.database),
            "ONCEHOOK_DB_PASSWORD_FILE": self.a.pwfile,
            "ONCEHOOK_DB_PREFIX": prefix,
            # The proxy reads clear text only (TLS is the server's
            # choice, and the proxy's greeting offers none).
            "ONCEHOOK_DB_TLS": "off",
            "ONCEHOOK_ENDPOINTS": "now,later,fast",
            "ONCEHOOK_NOW_SCHEME": "hmac-sha256",
            "ONCEHOOK_NOW_SECRET": SECRET,
            "ONCEHOOK_NOW_ACTIONS": self.actions,
            "ONCEHOOK_LATER_SCHEME": "hmac-sha256",
            "ONCEHOOK_LATER_SECRET": SECRET,
            "ONCEHOOK_LATER_ACTIONS": self.actions,
            "ONCEHOOK_LATER_MODE": "deferred",
            "ONCEHOOK_FAST_SCHEME": "stripe",
            "ONCEHOOK_FAST_SECRET": STRIPE_SECRET,
            "ONCEHOOK_FAST_ACTIONS": self.actions,
            "ONCEHOOK_LOG": "info",
            "ONCEHOOK_COUNTERS": "off",
            "ONCEHOOK_BUSY_TIMEOUT_MS": "3000",
            "ONCEHOOK_OUTBOX_THING_DONE_COMMAND": self.target,
        })
        return e

    def init(self, prefix):
        """oncehook init for prefix, through the proxy (unarmed)."""
        p = self.run(["init"], self.env(prefix))
        return p.returncode == 0, p

    def run(self, args, env):
        p = subprocess.run([self.a.bin] + args, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=60)
        self.log.write(b"$ oncehook %s\n" % " ".join(args).encode())
        self.log.write(p.stdout + p.stderr)
        self.log.flush()
        return p

    def key(self, what):
        self.seq += 1
        return "evt_%s_%d_%d" % (what, os.getpid(), self.seq)

    def effects(self, key):
        return self.root.scalar("SELECT count(*) FROM cf_effects WHERE "
                                "event_key = %s" % mariadb.q(key))

    def status(self, prefix, endpoint, key):
        return self.root.scalar(
            "SELECT status FROM `%sevents` WHERE endpoint = %s AND "
            "event_key = %s" % (prefix, mariadb.q(endpoint),
                                mariadb.q(key)))


def delivery(key, endpoint="now"):
    """The one signed delivery of key: (path, body, headers); Stripe's
    scheme (signed timestamps: no replay guard) for the endpoint fast."""
    fast = endpoint == "fast"
    s = hookclient.SCHEMES["stripe" if fast else "hmac-sha256"]
    body = s.body(key, "thing.happened")
    return ("/hooks/" + endpoint, body,
            dict(s.headers(STRIPE_SECRET if fast else SECRET, body, key,
                           "thing.happened")))


class Cgi:
    """One process per request."""
    name = "cgi"
    endpoint, warm, verifies = "now", 0, False

    def __init__(self, world, env):
        self.w, self.env = world, env

    def send(self, path, body, headers):
        env = dict(self.env)
        env.update(fcgiclient.cgi_params("POST", path, body, headers))
        p = subprocess.run([self.w.a.bin], input=body, env=env,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           timeout=60)
        self.w.log.write(p.stderr)
        self.w.log.flush()
        st, hd, out = fcgiclient.parse_cgi(p.stdout)
        return fcgiclient.Response(st, hd, out)

    def close(self):
        pass


class Fcgi:
    """One FastCGI process, as a web server starts it (its listening
    socket on standard input): one connection to the server, kept."""
    name = "fcgi"
    endpoint, warm, verifies = "now", 1, False

    def __init__(self, world, env):
        self.w = world
        self.path = os.path.join(world.a.tmp, "fcgi-%d.sock" % world.seq)
        if os.path.exists(self.path):
            os.unlink(self.path)
        ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        ls.bind(self.path)
        ls.listen(16)
        self.proc = subprocess.Popen([world.a.bin], stdin=ls.fileno(),
                                     env=env, stdout=subprocess.DEVNULL,
                                     stderr=world.log)
        ls.close()

    def send(self, path, body, headers):
        return fcgiclient.request(self.path, "POST", path, body, headers)

    def alive(self):
        return self.proc.poll() is None

    def close(self):
        self.proc.terminate()
        try:
            self.proc.wait(10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.unlink(self.path)


class FcgiDirect(Fcgi):
    """The same, its claims sent without a lookup first: after
    PIPELINE_DIRECT_AFTER new events in a row (src/pipeline/pipeline.h),
    to an endpoint without a replay guard."""
    name = "fcgi-direct"
    endpoint, warm, verifies = "fast", 8, True


def answer(r):
    """An answer in a line."""
    return "%d %s Retry-After=%s" % (
        r.status, r.json.get("status") if isinstance(r.json, dict) else
        r.body[:80], r.header("retry-after"))


def check_first(tap, what, moment, r, verifies=False):
    """Never 200 unless the commit is known: from the COMMIT's answer,
    or (verifies: a claim sent without a lookup, whose failure is
    followed by the lookup it skipped) from a read after it."""
    if moment == "unanswered" and verifies:
        tap.check(r.status == 200 and isinstance(r.json, dict) and
                  r.json.get("status") == "already_processed",
                  "%s: the commit found by a read on a new connection: "
                  "200 already_processed" % what, answer(r))
    elif moment == "answered":
        tap.check(r.status == 200 and isinstance(r.json, dict) and
                  r.json.get("status") == "processed",
                  "%s: the commit answered, then the cut: 200 processed"
                  % what, answer(r))
    else:
        tap.check(r.status == 503 and bool(r.header("retry-after")) and
                  isinstance(r.json, dict) and "error" in r.json,
                  "%s: 503 with Retry-After, never 200" % what, answer(r))


def once(tap, w, what, prefix, endpoint, key):
    st = w.status(prefix, endpoint, key)
    n = w.effects(key)
    tap.check(st == "processed" and n == 1,
              "%s: the event processed, its effect there once" % what,
              "status %r, %r effects" % (st, n))


def deliveries(tap, w, moment, kind):
    prefix = "cf_%s_%s_" % (moment[:2], kind.name.replace("-", ""))
    env = w.env(prefix)
    ok, p = w.init(prefix)
    if not tap.check(ok, "%s %s: oncehook init through the proxy" % (
            moment, kind.name), p.stderr.decode(errors="replace")):
        return
    what = "%s, %s" % (kind.name, moment)
    front = kind(w, env)
    try:
        # A connection the process keeps, then reuses: the one cut.
        for i in range(kind.warm):
            warm = w.key("warm")
            r = front.send(*delivery(warm, kind.endpoint))
            if r.status != 200:
                break
        if kind.warm:
            tap.check(r.status == 200, "%s: %d new event%s before, 200" % (
                what, kind.warm, "s" if kind.warm > 1 else ""), answer(r))
        conns = w.proxy.stats()["connections"]
        cuts = len(w.proxy.stats()["cuts"])
        key = w.key("%s_%s" % (moment[:2], kind.name))
        d = delivery(key, kind.endpoint)
        w.proxy.arm(moment)
        r = front.send(*d)
        w.proxy.disarm()
        made = w.proxy.wait_cut(cuts + 1, 1)
        tap.check(made, "%s: the proxy cut the connection at its COMMIT"
                  % what, repr(w.proxy.stats()))
        if kind.warm:
            s = w.proxy.stats()
            tap.check(s["cuts"][-1][1] == conns,
                      "%s: the cut connection is the process's kept one"
                      % what, repr(s))
        check_first(tap, what, moment, r, kind.verifies)
        st = w.status(prefix, kind.endpoint, key)
        want = None if moment == "before" else "processed"
        tap.check(st == want, "%s: after the cut the event's row is %s" % (
            what, want or "absent (rolled back)"), "status %r" % st)
        # The retry: the same bytes, the same signature.
        r = front.send(*d)
        want = "processed" if moment == "before" else "already_processed"
        tap.check(r.status == 200 and isinstance(r.json, dict) and
                  r.json.get("status") == want,
                  "%s: the retry answered 200 %s" % (what, want), answer(r))
        once(tap, w, what, prefix, kind.endpoint, key)
        if kind.warm:
            nxt = w.key("next")
            r = front.send(*delivery(nxt, kind.endpoint))
            tap.check(r.status == 200 and r.json.get("status") ==
                      "processed" and front.alive(),
                      "%s: the same process answers a new event 200 "
                      "processed" % what, answer(r))
            once(tap, w, what + ", the next event", prefix, kind.endpoint,
                 nxt)
    except (OSError, fcgiclient.Incomplete, subprocess.SubprocessError) as e:
        tap.check(False, "%s: the exchange" % what, repr(e))
    finally:
        front.close()


def after_answer(tap, w, moment):
    """A deferred event to a FastCGI process, which runs its actions
    after the answer: the claim's COMMIT passes (200 accepted), the
    run's, the second, is cut; the run is all or nothing, work runs
    what is left, once."""
    prefix = "cf_%s_after_" % moment[:2]
    env = w.env(prefix)
    what = "fcgi deferred, %s at the run's COMMIT" % moment
    ok, p = w.init(prefix)
    if not tap.check(ok, "%s: oncehook init through the proxy" % what,
                     p.stderr.decode(errors="replace")):
        return
    front = Fcgi(w, env)
    try:
        key = w.key("%s_after" % moment[:2])
        cuts = len(w.proxy.stats()["cuts"])
        w.proxy.arm(moment, 2)
        r = front.send(*delivery(key, "later"))
        tap.check(r.status == 200 and r.json.get("status") == "accepted",
                  "%s: 200 accepted (the claim's COMMIT passed)" % what,
                  answer(r))
        # The run comes after the answer: the process's next answer
        # comes after the run, whatever became of it.
        nxt = w.key("next")
        r = front.send(*delivery(nxt))
        tap.check(r.status == 200 and r.json.get("status") == "processed"
                  and front.alive(), "%s: the same process answers a new "
                  "event 200 processed" % what, answer(r))
        tap.check(w.proxy.wait_cut(cuts + 1, 5),
                  "%s: the proxy cut the second COMMIT" % what,
                  repr(w.proxy.stats()))
        w.proxy.disarm()
        # Before: the process runs it again on a new connection at once
        # (processed), or finds it still locked by the transaction the
        # server is ending, and leaves it to work (received).
        row = w.root.one(
            "SELECT status, (SELECT count(*) FROM cf_effects WHERE "
            "event_key = %s) AS n FROM `%sevents` WHERE endpoint = 'later'"
            " AND event_key = %s" % (mariadb.q(key), prefix,
                                      mariadb.q(key))) or {}
        st, n = row.get("status"), row.get("n")
        if moment == "before":
            tap.check((st, n) in (("received", "0"), ("processed", "1")),
                      "%s: the run all or nothing" % what,
                      "status %r, %r effects" % (st, n))
        else:
            tap.check((st, n) == ("processed", "1"), "%s: the event "
                      "processed with 1 effect" % what,
                      "status %r, %r effects" % (st, n))
        # The claimer's turn over, work runs what is left.
        w.root.run("UPDATE `%sevents` SET next_at = next_at - 3600 WHERE "
                   "event_key = %s AND status <> 'processed'" % (
                       prefix, mariadb.q(key)))
        p = w.run(["work", "--once"], env)
        tap.check(p.returncode == 0, "%s: work --once exits 0" % what,
                  (p.stdout + p.stderr).decode(errors="replace")
                  .splitlines())
        once(tap, w, what, prefix, "later", key)
    except (OSError, fcgiclient.Incomplete, subprocess.SubprocessError) as e:
        tap.check(False, "%s: the exchange" % what, repr(e))
    finally:
        front.close()


def accepted(tap, w, env, what, key):
    r = Cgi(w, env).send(*delivery(key, "later"))
    return tap.check(r.status == 200 and r.json.get("status") == "accepted",
                     "%s: a deferred event accepted" % what, answer(r))


def runs(tap, w, moment, cmd):
    prefix = "cf_%s_%s_" % (moment[:2], cmd)
    env = w.env(prefix)
    what = "%s, %s" % (cmd, moment)
    ok, p = w.init(prefix)
    if not tap.check(ok, "%s: oncehook init through the proxy" % what,
                     p.stderr.decode(errors="replace")):
        return
    key = w.key("%s_%s" % (moment[:2], cmd))
    if not accepted(tap, w, env, what, key):
        return
    # The claimer's own turn at it (STORE_CLAIMER_FIRST) over: due now.
    w.root.run("UPDATE `%sevents` SET next_at = next_at - 60 WHERE "
               "event_key = %s" % (prefix, mariadb.q(key)))
    args = ["work", "--once"] if cmd == "work" else \
        ["replay", "--endpoint", "later", key]
    cuts = len(w.proxy.stats()["cuts"])
    # work's first COMMIT is its lease's (a transaction of its own), the
    # second its run's.
    w.proxy.arm(moment, 2 if cmd == "work" else 1)
    p = w.run(args, env)
    w.proxy.disarm()
    out = (p.stdout + p.stderr).decode(errors="replace")
    tap.check(w.proxy.wait_cut(cuts + 1, 1),
              "%s: the proxy cut the connection at its COMMIT" % what,
              repr(w.proxy.stats()))
    if cmd == "replay":
        # "replayed" only when the commit is known.
        if moment == "answered":
            tap.check(p.returncode == 0 and "replayed " in out,
                      "%s: replayed, exit 0" % what, out.splitlines())
        else:
            tap.check(p.returncode == 1 and "not replayed" in out,
                      "%s: not replayed, exit 1" % what, out.splitlines())
    else:
        # A run whose commit is unknown is not made again at once: on
        # MariaDB work leases an event before its run (STORE_RUN_LEASE),
        # and the lease outlives a run that died.  All or nothing now.
        # It says "processed" only when the commit is known.
        st, n = w.status(prefix, "later", key), w.effects(key)
        said = "outcome=processed" in out
        want = ("received", 0) if moment == "before" else ("processed", 1)
        tap.check(p.returncode == 0 and (st, n) == want and
                  said == (moment == "answered"),
                  "%s: work --once exits 0, the event %s with %d effect%s, "
                  "logged processed %s" % (
                      what, want[0], want[1], "" if want[1] == 1 else "s",
                      "once" if moment == "answered" else "never"),
                  ["exit %d, status %r, %r effects, logged processed: %s"
                   % (p.returncode, st, n, said)] + out.splitlines())
        # The lease ran out (or was never taken).
        w.root.run("UPDATE `%sevents` SET next_at = next_at - 3600 WHERE "
                   "event_key = %s AND status <> 'processed'" % (
                       prefix, mariadb.q(key)))
    # The retry.
    p = w.run(args, env)
    out = (p.stdout + p.stderr).decode(errors="replace")
    if cmd == "replay":
        want = "replayed " if moment == "before" else \
            "(already; not run again)"
        tap.check(p.returncode == 0 and want in out,
                  "%s: the replay again: %s" % (what, want.strip()),
                  out.splitlines())
    else:
        ran = "outcome=processed" in out
        tap.check(p.returncode == 0 and ran == (moment == "before"),
                  "%s: work again: %s" % (what, "the run" if moment ==
                                          "before" else "nothing to run"),
                  out.splitlines())
    once(tap, w, what, prefix, "later", key)


class Mini:
    """A MariaDB client of the binary protocol's few commands this test
    needs (mysql_native_password, COM_QUERY, COM_STMT_PREPARE and
    COM_STMT_EXECUTE without parameters, MariaDB's direct execution),
    to prove that the proxy finds a prepared COMMIT as well as a COMMIT
    in text."""

    def __init__(self, port, user, password, database):
        self.s = socket.create_connection(("127.0.0.1", port), 10)
        self.buf = b""
        seq, g = self.read()
        v = g.index(b"\0", 1)
        salt = g[v + 5:v + 13]
        rest = g[v + 14 + 2 + 1 + 2 + 2 + 1 + 10:]
        salt += rest[:12]
        caps = 0x1 | 0x8 | 0x200 | 0x2000 | 0x8000 | 0x80000
        auth = self.scramble(password, salt)
        resp = struct.pack("<IIB23x", caps, 1 << 24, 45) + \
            user.encode() + b"\0" + bytes([len(auth)]) + auth + \
            database.encode() + b"\0" + b"mysql_native_password\0"
        self.write(seq + 1, resp)
        seq, r = self.read()
        if r[:1] == b"\xfe":                # auth switch
            name_end = r.index(b"\0", 1)
            self.write(seq + 1, self.scramble(password,
                                              r[name_end + 1:name_end + 21]))
            seq, r = self.read()
        if r[:1] != b"\0":
            raise OSError("login refused: %r" % r[:80])

    @staticmethod
    def scramble(password, salt):
        """mysql_native_password: SHA1(pw) XOR SHA1(salt SHA1(SHA1(pw)))."""
        h1 = hashlib.sha1(password.encode()).digest()
        h3 = hashlib.sha1(salt + hashlib.sha1(h1).digest()).digest()
        return bytes(a ^ b for a, b in zip(h1, h3))

    def write(self, seq, payload):
        n = len(payload)
        self.s.sendall(struct.pack("<I", n)[:3] + bytes([seq & 0xff]) +
                       payload)

    def read(self):
        """(seq, payload); OSError when the connection ends."""
        while len(self.buf) < 4 or len(self.buf) < 4 + \
                int.from_bytes(self.buf[:3], "little"):
            d = self.s.recv(65536)
            if not d:
                raise OSError("connection closed")
            self.buf += d
        n = int.from_bytes(self.buf[:3], "little")
        seq, p = self.buf[3], self.buf[4:4 + n]
        self.buf = self.buf[4 + n:]
        return seq, p

    def ok(self, payload):
        if payload[:1] != b"\0":
            raise OSError("not OK: %r" % payload[:80])
        return payload

    def query(self, sql):
        self.write(0, b"\x03" + sql.encode())
        return self.ok(self.read()[1])

    def prepare(self, sql):
        self.write(0, b"\x16" + sql.encode())
        r = self.ok(self.read()[1])
        if r[5:9] != b"\0\0\0\0":
            raise OSError("want no columns nor parameters: %r" % sql)
        return struct.unpack_from("<I", r, 1)[0]

    def execute(self, sid):
        self.write(0, b"\x17" + struct.pack("<IBI", sid, 0, 1))
        return self.ok(self.read()[1])

    def execute_direct(self, sql):
        """MariaDB's direct execution: the prepare and the execute of
        the statement just prepared (id 0xffffffff) sent together."""
        self.write(0, b"\x16" + sql.encode())
        self.write(0, b"\x17" + struct.pack("<IBI", 0xffffffff, 0, 1))
        self.ok(self.read()[1])
        return self.ok(self.read()[1])

    def close(self):
        self.s.close()


def proxy_itself(tap, w):
    """The proxy's own checks: what a COMMIT is; a prepared COMMIT cut
    at each moment, seen from the client and from the server."""
    yes = [b"COMMIT", b"commit", b"  Commit ;", b"/* x */ COMMIT /* y */",
           b"-- a\nCOMMIT", b"# a\ncommit\n", b"COMMIT WORK",
           b"--\x7f\nCOMMIT", b"/*!100000 COMMIT */", b"/*M!COMMIT*/"]
    no = [b"COMMIT AND CHAIN", b"SELECT 'COMMIT'", b"ROLLBACK",
          b"/* COMMIT */", b"-- COMMIT", b"COMMITX", b"--COMMIT"]
    bad = [t for t in yes if not myproxy.is_commit(t)] + \
        [t for t in no if myproxy.is_commit(t)]
    tap.check(not bad, "proxy: COMMIT told apart from other texts",
              repr(bad))
    with open(w.a.pwfile) as f:
        pw = f.readline().strip()
    w.root.run("CREATE TABLE IF NOT EXISTS cf_proxy (id INT PRIMARY KEY)"
               " ENGINE=InnoDB")
    cases = [(f, m) for f in ("prepared", "direct") for m in myproxy.MOMENTS]
    for i, (form, moment) in enumerate(cases, 1):
        cuts = len(w.proxy.stats()["cuts"])
        w.root.run("DELETE FROM cf_proxy WHERE id = %d" % i)
        try:
            c = Mini(w.proxy.port, w.a.user, pw, w.a.database)
            sid = c.prepare(" commit ") if form == "prepared" else None
            c.query("START TRANSACTION")
            c.query("INSERT INTO cf_proxy VALUES (%d)" % i)
            w.proxy.arm(moment)
            seen = "no answer"
            try:
                if sid is not None:
                    c.execute(sid)
                else:
                    c.execute_direct("COMMIT")
                seen = "OK, then the connection closed"
                c.query("SELECT 1")
                seen = "OK, then a statement answered"
            except OSError:
                pass
            c.close()
        except OSError as e:
            seen = "harness: %s" % e
        w.proxy.disarm()
        w.proxy.wait_cut(cuts + 1, 1)
        # The server ends a transaction whose client left: wait for it.
        rows = None
        for _ in range(50):
            rows = w.root.scalar("SELECT count(*) FROM cf_proxy WHERE id "
                                 "= %d" % i)
            busy = w.root.scalar(
                "SELECT count(*) FROM information_schema.innodb_trx")
            if busy == 0:
                break
            time.sleep(0.1)
        want_seen = "OK, then the connection closed" if moment == \
            "answered" else "no answer"
        want_rows = 0 if moment == "before" else 1
        tap.check(seen == want_seen and rows == want_rows and
                  len(w.proxy.stats()["cuts"]) == cuts + 1,
                  "proxy: a %s COMMIT cut %s: the client sees %s, the "
                  "server has %d row" % (
                      "prepared" if form == "prepared" else
                      "directly executed (id 0xffffffff)", moment,
                      want_seen, want_rows),
                  "the client saw %r, the server has %r rows, cuts %r" % (
                      seen, rows, w.proxy.stats()["cuts"]))


def sent(w, key):
    """The attempts at key's outbox row that reached the target."""
    try:
        with open(w.target + ".sent") as f:
            return sum(1 for ln in f if ln.split()[1:] == [key])
    except OSError:
        return 0


def deliver(tap, w, moment):
    """oncehook deliver --once, its lease's COMMIT cut."""
    prefix = "cf_%s_deliver_" % moment[:2]
    env = w.env(prefix)
    what = "deliver, %s" % moment
    ok, p = w.init(prefix)
    if not tap.check(ok, "%s: oncehook init through the proxy" % what,
                     p.stderr.decode(errors="replace")):
        return
    key = w.key("%s_deliver" % moment[:2])
    r = Cgi(w, env).send(*delivery(key))
    if not tap.check(r.status == 200, "%s: an event 200, its outbox row "
                     "written" % what, answer(r)):
        return
    ob = "`%soutbox`" % prefix
    cuts = len(w.proxy.stats()["cuts"])
    w.proxy.arm(moment)
    p = w.run(["deliver", "--once"], env)
    w.proxy.disarm()
    out = (p.stdout + p.stderr).decode(errors="replace")
    tap.check(w.proxy.wait_cut(cuts + 1, 1),
              "%s: the proxy cut the connection at the lease's COMMIT"
              % what, repr(w.proxy.stats()))
    n = sent(w, key)
    # Before: not leased, taken again on a new connection and sent;
    # unanswered: leased, not sent until the lease runs out; answered:
    # sent, its outcome noted on a new connection.
    want = 0 if moment == "unanswered" else 1
    tap.check(p.returncode == 0 and n == want,
              "%s: deliver --once exits 0, the row sent %d time%s" % (
                  what, want, "" if want == 1 else "s"),
              ["exit %d, sent %d times" % (p.returncode, n)] +
              out.splitlines())
    if moment == "unanswered":
        # The lease ran out (as if OUTBOX_TIMEOUT + 5 s passed).
        w.root.run("UPDATE %s SET next_at = next_at - 3600" % ob)
    p = w.run(["deliver", "--once"], env)
    row = w.root.one("SELECT status, attempts FROM %s WHERE "
                     "JSON_VALUE(payload, '$.event_key') = %s" % (
                         ob, mariadb.q(key))) or {}
    tap.check(p.returncode == 0 and sent(w, key) == 1 and
              row.get("status") == "delivered",
              "%s: deliver again: the row delivered, sent once in all"
              % what, "exit %d, sent %d times, row %r" % (
                  p.returncode, sent(w, key), row))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--port", type=int, required=True,
                    help="the server's TCP port on 127.0.0.1")
    ap.add_argument("--socket", required=True, help="its unix socket")
    ap.add_argument("--database", required=True)
    ap.add_argument("--user", required=True)
    ap.add_argument("--pwfile", required=True)
    ap.add_argument("--tmp", required=True)
    ap.add_argument("--only", help="a moment")
    a = ap.parse_args()
    tap = Tap()
    w = World(a)
    start = time.time()
    proxy_itself(tap, w)
    for moment in myproxy.MOMENTS:
        if a.only and moment != a.only:
            continue
        for kind in (Cgi, Fcgi, FcgiDirect):
            deliveries(tap, w, moment, kind)
        after_answer(tap, w, moment)
        for cmd in ("work", "replay"):
            runs(tap, w, moment, cmd)
        deliver(tap, w, moment)
    print("# %d COMMITs relayed, %d cut, %.1f s" % (
        w.proxy.stats()["commits"], len(w.proxy.stats()["cuts"]),
        time.time() - start))
    print("1..%d" % tap.n)
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())
