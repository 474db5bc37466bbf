# SPDX-License-Identifier: MIT
"""What a delivery costs the MariaDB server, from its own counters: every
section of the shipped MariaDB actions (sql/actions/mysql/orders.sql and
wordpress.sql) run by oncehook with a typical event, new and again as a
duplicate, and the server's status read before and after each.

  --check   (tests/mariadb-counters.sh) TAP: no section makes a temporary
            table, on disk or in memory (Created_tmp_disk_tables,
            Created_tmp_tables); a new event, a duplicate and the
            connection set-up take no more statements than the ceilings
            below (the general log, by command).
  --report  a table per delivery kind: statements by command, round
            trips, temporary tables, handler calls; under CGI (one
            process, one connection per request) and FastCGI (one
            process, its connection and statements kept), for the record
            of docs/design/021-mariadb-round-trips.md.
  --cpu PID mariadbd's CPU per new event and per duplicate (PID its
            process; /proc/PID/stat), --events of the benchmark's 1 KB
            events one at a time to one FastCGI process.

The server is the caller's (tests/servers/mariadb.sh): root over its unix
socket reads the counters and the general log (log_output TABLE, turned
on here), a database and user per run.  Standard library only.
"""

import argparse
import json
import os
import socket
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "servers"))

from oncetest import fcgiclient, hookclient, mariadb  # noqa: E402

STRIPE_SECRET = "whsec_c291bnRlcnMtc2VjcmV0"
SHOP_SECRET = "shop-secret-counters-0123456789"
STATUS = ("Created_tmp_disk_tables", "Created_tmp_tables", "Questions",
          "Com_stmt_prepare", "Com_stmt_execute", "Com_stmt_close",
          "Handler_read_key", "Handler_write", "Handler_update",
          "Opened_files")
# Commands of the general log answered by the server (a round trip each);
# "Close stmt" and "Quit" are not answered.
UNANSWERED = ("Close stmt", "Quit")

# The most round trips each kind may take (--check): a regression in the
# protocol's statements fails here.  Per event, on a kept connection
# (FastCGI), its statements prepared; under CGI, all a request makes.
CEILING = {"new": 5, "dup": 1, "dup in a run": 5, "new, replay guard": 8,
           # CGI: the handshake counts one ("Connect").
           "cgi new": 13, "cgi dup": 5}


def stripe_event(key, typ, obj):
    return {"id": key, "object": "event", "type": typ,
            "api_version": "2024-06-20", "created": 1700000000,
            "data": {"object": obj}}


def sections(n):
    """(endpoint, section, body) for each shipped section, event n."""
    o = "ord-%d" % n
    pay = {"id": "pi_%d" % n, "object": "payment_intent", "amount": 2000,
           "currency": "eur", "receipt_email": "jenny@example.com",
           "metadata": {"order_id": o}}
    out = [
        ("stripe", "payment_intent.succeeded",
         stripe_event("evt_pi_%d" % n, "payment_intent.succeeded", pay)),
        ("stripe", "checkout.session.completed",
         stripe_event("evt_cs_%d" % n, "checkout.session.completed",
                      {"id": "cs_%d" % n, "amount_total": 1999,
                       "currency": "usd", "payment_status": "paid",
                       "payment_intent": "pi_x%d" % n,
                       "customer_details": {"email": "a@example.com"},
                       "metadata": {"order_id": n}})),
        ("stripe", "charge.refunded",
         stripe_event("evt_ch_%d" % n, "charge.refunded",
                      {"id": "ch_%d" % n, "refunded": True,
                       "metadata": {"order_id": o}})),
        ("stripe", "payment_intent.canceled",
         stripe_event("evt_pc_%d" % n, "payment_intent.canceled",
                      {"id": "pi_c%d" % n,
                       "metadata": {"order_id": "c-" + o}})),
        ("shop", "payment.success",
         {"eventId": "ev_ps_%d" % n, "type": "payment.success",
          "metadata": {"orderId": "s-" + o},
          "transaction": {"id": "tx_%d" % n, "amount": 49.99,
                          "currency": "USD"},
          "customer": {"customerEmail": "b@example.com"}}),
        ("shop", "payment.refunded",
         {"eventId": "ev_pr_%d" % n, "type": "payment.refunded",
          "metadata": {"orderId": "s-" + o}}),
        ("shop", "webhook.ping",
         {"eventId": "ev_wp_%d" % n, "type": "webhook.ping"}),
    ]
    # wordpress.sql on tests/deploy/wp-schema.sql's orders 42 and 43.
    wo = 42 if n % 2 else 43
    out += [
        ("wp", "payment_intent.succeeded",
         stripe_event("evt_wpi_%d" % n, "payment_intent.succeeded",
                      dict(pay, metadata={"order_id": str(wo)}))),
        ("wp", "checkout.session.completed",
         stripe_event("evt_wcs_%d" % n, "checkout.session.completed",
                      {"id": "cs_w%d" % n, "amount_total": 500,
                       "currency": "eur", "payment_status": "paid",
                       "payment_intent": "pi_w%d" % n,
                       "customer_details": {"email": "w@example.com"},
                       "metadata": {"order_id": 47}})),
        ("wp", "charge.refunded",
         stripe_event("evt_wch_%d" % n, "charge.refunded",
                      {"id": "ch_w%d" % n, "refunded": True,
                       "metadata": {"order_id": wo}})),
    ]
    return out


def headers_for(endpoint, body):
    if endpoint == "shop":
        return {"X-Webhook-Signature":
                hookclient.sign_hmac_sha256(SHOP_SECRET, body)}
    return {"Stripe-Signature": hookclient.sign_stripe(STRIPE_SECRET, body)}


class Server:
    """The server's counters and general log, read as root."""

    def __init__(self, sock):
        self.root = mariadb.My(sock, "mysql")
        self.root.run("SET GLOBAL log_output = 'TABLE'; "
                      "SET GLOBAL general_log = 1")
        self.calib = {k: 0 for k in STATUS}
        a = self.status()
        b = self.status()
        self.calib = {k: b[k] - a[k] for k in STATUS}

    def status(self):
        rows = self.root.lines(
            "SELECT VARIABLE_NAME, VARIABLE_VALUE FROM "
            "information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME IN (%s)"
            % ", ".join(mariadb.q(k.upper()) for k in STATUS))
        got = {r.split("|")[0].upper(): int(r.split("|")[1]) for r in rows}
        return {k: got[k.upper()] for k in STATUS}

    def delta(self, a, b):
        """What came between reads a and b, the second read's own
        share taken off."""
        return {k: b[k] - a[k] - self.calib[k] for k in STATUS}

    def clear_log(self):
        self.root.run("TRUNCATE TABLE mysql.general_log")

    def commands(self, user):
        """The general log's commands of user's connections since
        clear_log(): {command: n}, and the statements in order."""
        rows = self.root.lines(
            "SELECT command_type, REPLACE(REPLACE(LEFT(argument, 90), "
            "'\\n', ' '), '\\t', ' ') FROM mysql.general_log WHERE "
            "user_host LIKE %s OR thread_id IN (SELECT thread_id FROM "
            "mysql.general_log WHERE command_type = 'Connect' AND argument "
            "LIKE %s) ORDER BY event_time" %
            (mariadb.q(user + "[%"), mariadb.q(user + "@%")))
        by = {}
        for r in rows:
            c = r.split("|")[0]
            by[c] = by.get(c, 0) + 1
        return by, rows


class Oncehook:
    def __init__(self, binary, env, mode, tmp):
        self.binary, self.env, self.mode = binary, env, mode
        self.proc = None
        if mode == "fcgi":
            self.sock = os.path.join(tmp, "counters-fcgi.sock")
            if os.path.exists(self.sock):
                os.unlink(self.sock)
            ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            ls.bind(self.sock)
            ls.listen(16)
            self.log = open(os.path.join(tmp, "counters-fcgi.log"), "ab")
            self.proc = subprocess.Popen([binary], stdin=ls.fileno(),
                                         env=env, stdout=subprocess.DEVNULL,
                                         stderr=self.log)
            ls.close()

    def send(self, endpoint, body):
        path = "/hooks/" + endpoint
        hdrs = headers_for(endpoint, body)
        if self.mode == "fcgi":
            r = fcgiclient.request(self.sock, "POST", path, body, hdrs)
            return r.status, r.body
        params = fcgiclient.cgi_params("POST", path, body, hdrs)
        env = dict(self.env)
        env.update(params)
        p = subprocess.run([self.binary], input=body, env=env,
                           capture_output=True, timeout=60)
        status, _, out = fcgiclient.parse_cgi(p.stdout)
        return status, out

    def close(self):
        if self.proc is not None:
            self.proc.terminate()
            self.proc.wait(10)
            self.log.close()


def setup(args, srv, name):
    """A database and user name, the shop's tables, oncehook init: the
    environment."""
    pw = "pw-" + name
    srv.root.run("DROP DATABASE IF EXISTS `%s`" % name)
    subprocess.run(["sh", "-c", '. "$1/tests/servers/mariadb.sh"; '
                    'MD_SOCK=$2; md_user "$3" "$3" "$4"', "sh",
                    args.srcdir, args.socket, name, pw], check=True)
    with open(os.path.join(args.srcdir, "tests", "deploy",
                           "wp-schema.sql"), "rb") as f:
        subprocess.run(srv.root.cmd[:-1] + [name], input=f.read(),
                       check=True, stdout=subprocess.DEVNULL)
    pwfile = os.path.join(args.tmp, name + ".pw")
    with open(pwfile, "w") as f:
        f.write(pw + "\n")
    os.chmod(pwfile, 0o600)
    acts = args.actions or os.path.join(args.srcdir, "sql", "actions",
                                        "mysql")
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("ONCEHOOK_")}
    env.update({
        "ONCEHOOK_DB": "mysql://%s@localhost/%s?socket=%s" %
        (name, name, args.socket),
        "ONCEHOOK_DB_PASSWORD_FILE": pwfile,
        "ONCEHOOK_LOG": "warn", "ONCEHOOK_COUNTERS": "off",
        "ONCEHOOK_ENDPOINTS": "stripe,shop,wp",
        "ONCEHOOK_STRIPE_SCHEME": "stripe",
        "ONCEHOOK_STRIPE_SECRET": STRIPE_SECRET,
        "ONCEHOOK_STRIPE_ACTIONS": os.path.join(acts, "orders.sql"),
        "ONCEHOOK_SHOP_SCHEME": "hmac-sha256",
        "ONCEHOOK_SHOP_SECRET": SHOP_SECRET,
        "ONCEHOOK_SHOP_ACTIONS": os.path.join(acts, "orders.sql"),
        "ONCEHOOK_WP_SCHEME": "stripe",
        "ONCEHOOK_WP_SECRET": STRIPE_SECRET,
        "ONCEHOOK_WP_ACTIONS": os.path.join(acts, "wordpress.sql"),
    })
    p = subprocess.run([args.bin, "init"], env=env, capture_output=True)
    if p.returncode != 0:
        raise RuntimeError("oncehook init: " + p.stderr.decode())
    return env


def measure(srv, hook, user, endpoint, body, expect):
    """Send body; (counters delta, commands, statements) of the server."""
    srv.clear_log()
    a = srv.status()
    status, out = hook.send(endpoint, body)
    b = srv.status()
    by, rows = srv.commands(user)
    if status != 200 or expect not in out.decode("utf-8", "replace"):
        raise RuntimeError("%s: %s %s (wanted 200, %s)" % (
            endpoint, status, out[:200], expect))
    return srv.delta(a, b), by, rows


def trips(by):
    return sum(n for c, n in by.items() if c not in UNANSWERED)


def check(args, srv):
    n = 0
    failed = 0

    def ok(cond, what, why=()):
        nonlocal n, failed
        n += 1
        failed += 0 if cond else 1
        print("%s %d - %s" % ("ok" if cond else "not ok", n, what))
        for line in why if not cond else ():
            print("#   " + line)
        sys.stdout.flush()

    env = setup(args, srv, "counters_check")
    # The packet a statement of the actions needs: the body as many times
    # as one statement binds :payload (each JSON_TABLE binds it once;
    # wordpress.sql's paying UPDATEs read it twice).
    srv.root.run("SET GLOBAL max_allowed_packet = 2097152")
    try:
        e = dict(env, ONCEHOOK_MAX_BODY="1048576")
        p = subprocess.run([args.bin, "check"], env=e, capture_output=True,
                           timeout=60)
        said = (p.stdout + p.stderr).decode("utf-8", "replace")
        ok(p.returncode != 0 and "max_allowed_packet" in said and
           "2 times" in said,
           "check: max_allowed_packet 2 MiB is too small for a 1 MiB body "
           "bound 2 times", said.splitlines()[-3:])
    finally:
        srv.root.run("SET GLOBAL max_allowed_packet = 16777216")
    for mode in ("cgi", "fcgi"):
        hook = Oncehook(args.bin, env, mode, args.tmp)
        try:
            for i, (ep, sec, ev) in enumerate(sections(
                    100 if mode == "cgi" else 200)):
                body = hookclient.dumps(ev)
                d, by, rows = measure(srv, hook, "counters_check", ep, body,
                                      "processed")
                ok(d["Created_tmp_disk_tables"] == 0 and
                   d["Created_tmp_tables"] == 0,
                   "%s %s/%s: no temporary table (%d on disk, %d in all)" %
                   (mode, ep, sec, d["Created_tmp_disk_tables"],
                    d["Created_tmp_tables"]),
                   ["%s %s" % (r.split("|")[0], r.split("|", 1)[1])
                    for r in rows if r.split("|")[0] in ("Prepare",
                                                         "Query")])
                d, by, rows = measure(srv, hook, "counters_check", ep, body,
                                      "already_processed")
                ok(d["Created_tmp_disk_tables"] == 0 and
                   d["Created_tmp_tables"] == 0,
                   "%s %s/%s duplicate: no temporary table" %
                   (mode, ep, sec))
            if mode == "cgi":
                # A request is a process and a connection: its set-up
                # (the handshake, the session's settings, the schema's
                # version) and each statement prepared, run and closed.
                body = hookclient.dumps(sections(400)[0][2])
                for kind, expect in (("cgi new", "processed"),
                                     ("cgi dup", "already_processed")):
                    d, by, rows = measure(srv, hook, "counters_check",
                                          "stripe", body, expect)
                    ok(trips(by) <= CEILING[kind],
                       "%s (stripe): %d round trips, at most %d" %
                       (kind, trips(by), CEILING[kind]),
                       [r.replace("|", " ") for r in rows])
            if mode == "fcgi":
                # Every statement is prepared by now: what an event costs
                # on a kept connection.  A run of new events: after
                # PIPELINE_DIRECT_AFTER (8) of them the lookup is left out
                # (the claim answers); the last of 10 is measured.
                for i in range(10):
                    body = hookclient.dumps(sections(300 + i)[0][2])
                    d, by, rows = measure(srv, hook, "counters_check",
                                          "stripe", body, "processed")
                ok(trips(by) <= CEILING["new"],
                   "fcgi new (stripe, a run of 10): %d round trips, at "
                   "most %d" % (trips(by), CEILING["new"]),
                   [r.replace("|", " ") for r in rows])
                # Its duplicate, in the run: answered by the claim (its lookup
                # statement prepared here, on its first use).
                d, by, rows = measure(srv, hook, "counters_check", "stripe",
                                      body, "already_processed")
                ok(trips(by) <= CEILING["dup in a run"],
                   "fcgi duplicate after a run (stripe): %d round trips, "
                   "at most %d" % (trips(by), CEILING["dup in a run"]),
                   [r.replace("|", " ") for r in rows])
                for ep, i in (("stripe", 0), ("shop", 4)):
                    body = hookclient.dumps(sections(300)[i][2])
                    if ep == "shop":
                        d, by, rows = measure(srv, hook, "counters_check",
                                              ep, body, "processed")
                        ok(trips(by) <= CEILING["new, replay guard"],
                           "fcgi new, replay guard (shop): %d round trips, "
                           "at most %d" % (trips(by),
                                           CEILING["new, replay guard"]),
                           [r.replace("|", " ") for r in rows])
                    d, by, rows = measure(srv, hook, "counters_check", ep,
                                          body, "already_processed")
                    ok(trips(by) <= CEILING["dup"],
                       "fcgi duplicate (%s): %d round trips, at most %d" %
                       (ep, trips(by), CEILING["dup"]),
                       [r.replace("|", " ") for r in rows])
        finally:
            hook.close()
    print("1..%d" % n)
    return 1 if failed else 0


def report(args, srv):
    """Per kind, the mean over args.events deliveries."""
    env = setup(args, srv, "counters_report")
    kinds = (("new", "stripe", 0, "processed"),
             ("dup", "stripe", 0, "already_processed"),
             ("new, replay guard", "shop", 4, "processed"),
             ("dup, replay guard", "shop", 4, "already_processed"))
    out = {}
    for mode in ("cgi", "fcgi"):
        hook = Oncehook(args.bin, env, mode, args.tmp)
        try:
            # Warm: every statement of the kinds prepared (FastCGI).
            for _, ep, i, _ in kinds:
                hook.send(ep, hookclient.dumps(sections(
                    9000 if mode == "cgi" else 9500)[i][2]))
            for kind, ep, i, expect in kinds:
                tot = {k: 0 for k in STATUS}
                cmds = {}
                for n in range(args.events):
                    ev = sections(10000 + n + (0 if mode == "cgi" else
                                               5000))[i][2]
                    if kind.startswith("dup"):
                        hook.send(ep, hookclient.dumps(ev))
                    d, by, rows = measure(srv, hook, "counters_report", ep,
                                          hookclient.dumps(ev), expect)
                    for k in STATUS:
                        tot[k] += d[k]
                    for c, v in by.items():
                        cmds[c] = cmds.get(c, 0) + v
                row = {k: tot[k] / args.events for k in STATUS}
                row.update({"cmd " + c: v / args.events
                            for c, v in sorted(cmds.items())})
                row["round trips"] = trips(cmds) / args.events
                row["example"] = rows
                out["%s %s" % (mode, kind)] = row
        finally:
            hook.close()
    print(json.dumps(out, indent=1))
    return 0


def cpu(args, srv):
    """mariadbd's CPU (utime + stime of args.pid, /proc) per delivery:
    args.events new events of the benchmark's kind (bench/pool.py's 1 KB
    payment_intent.succeeded), sent one at a time to one FastCGI
    process, then each again as a duplicate; the general log off.  One
    JSON line: microseconds and statements (Questions) per delivery."""
    sys.path.insert(0, os.path.join(args.srcdir, "bench"))
    import pool
    env = setup(args, srv, "counters_cpu")
    srv.root.run("SET GLOBAL general_log = 0")
    tick = os.sysconf("SC_CLK_TCK")

    def used():
        with open("/proc/%d/stat" % args.pid) as f:
            v = f.read().rsplit(")", 1)[1].split()
        return int(v[11]) + int(v[12])

    tmpl = pool.TEMPLATE.replace("@TS@", "1700000000")
    pad = 1024 - len(tmpl.replace("@ID@", "0" * 16))
    if pad > 0:
        tmpl = tmpl.replace('"statement_descriptor":null',
                            '"statement_descriptor":null,"x":"%s"'
                            % ("p" * max(pad - 7, 0)), 1)
    bodies = [tmpl.replace("@ID@", "%016x" % (0x5eed0000 + n)).encode()
              for n in range(args.events + 20)]
    out = {}
    hook = Oncehook(args.bin, env, "fcgi", args.tmp)
    try:
        for b in bodies[args.events:]:        # warm: statements prepared
            hook.send("stripe", b)
        for kind, expect in (("new", "processed"),
                             ("dup", "already_processed")):
            a, t0 = srv.status(), used()
            for b in bodies[:args.events]:
                status, got = hook.send("stripe", b)
                if status != 200 or expect.encode() not in got:
                    raise RuntimeError("%s: %s %s" % (kind, status,
                                                      got[:200]))
            t1, c = used(), srv.delta(a, srv.status())
            out[kind] = {"us": round((t1 - t0) * 1e6 / tick / args.events),
                         "statements": c["Questions"] / args.events,
                         "executed": c["Com_stmt_execute"] / args.events}
    finally:
        hook.close()
    print(json.dumps(out))
    return 0


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--bin", required=True)
    ap.add_argument("--socket", required=True)
    ap.add_argument("--srcdir", required=True)
    ap.add_argument("--tmp", required=True)
    ap.add_argument("--events", type=int, default=20)
    ap.add_argument("--actions", help="a folder with orders.sql and "
                    "wordpress.sql (default: the shipped ones)")
    g = ap.add_mutually_exclusive_group(required=True)
    g.add_argument("--check", action="store_true")
    g.add_argument("--report", action="store_true")
    g.add_argument("--cpu", type=int, metavar="PID",
                   help="mariadbd's CPU per delivery, PID its process")
    args = ap.parse_args()
    args.srcdir = os.path.abspath(args.srcdir)
    args.bin = os.path.abspath(args.bin)
    srv = Server(args.socket)
    try:
        if args.cpu:
            args.pid = args.cpu
            return cpu(args, srv)
        return check(args, srv) if args.check else report(args, srv)
    finally:
        srv.root.run("SET GLOBAL general_log = 0", check=False)


if __name__ == "__main__":
    sys.exit(main())
