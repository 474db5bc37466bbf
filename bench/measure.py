#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""One measured row of bench/run.sh: run the load, watch the machine,
check the database, append one JSON line of results.

usage:
  measure.py load --row NAME --run N --out FILE --url URL --mode MODE
      --pool DIR [--ndup K] --seconds S --conns C --threads T
      --pids PID,... --app NAME,... [--db PATH [--claims TABLE]]
      [--log FILE]
  measure.py loop --row NAME --run N --out FILE [--db PATH] -- CMD ARGS...
  measure.py deliver --url URL --pool DIR --ndup K

load runs wrk with bench/wrk.lua (MODE new, dup, any or forged: see
there).
Server CPU is utime+stime from /proc/PID/stat of every PID given and all
its descendants, plus what they reaped (cutime+cstime: CGI children),
before and after; "app" is the part of processes whose name is one of
--app (and for a CGI server, the children it reaped).  The machine's
other CPU is /proc/stat's busy time less the server's, wrk's (from
wait4) and this script's.  RSS is VmRSS of each process after the row.

The checks, after the load has stopped and the database has settled
(requests in flight when wrk stops still commit):
  new   every answer 200 "processed"; new events rows = new orders rows
        = processed answers, give or take the connections (in flight);
  dup   every answer 200 "already_processed"; no new rows at all;
  any   every answer 200 (a responder with no database);
  and no socket errors, no exhausted pool.
The events rows are those of --claims TABLE where the server records its
events in a table of its own (the minimal peers' processed_events).
deliver sends the first K events of the pool once each, one at a time
(what a dup row then sends again); each must be answered "processed".
loop runs CMD (bench/minimal/commitloop), which prints one JSON line;
with --db, events rows must equal its iterations.

Exit status 0 if the checks passed, 1 if not, 2 on a harness error.
"""

import argparse
import json
import os
import resource
import sqlite3
import subprocess
import sys
import threading
import time

HZ = os.sysconf("SC_CLK_TCK")
NCPU = os.cpu_count() or 1
HERE = os.path.dirname(os.path.abspath(__file__))


def proc_stat(pid):
    """(comm, ppid, own ticks, reaped children's ticks) or None."""
    try:
        with open("/proc/%d/stat" % pid) as f:
            s = f.read()
    except OSError:
        return None
    comm = s[s.index("(") + 1:s.rindex(")")]
    f = s[s.rindex(")") + 2:].split()
    # fields 4.. after comm: state ppid ...; utime=14 stime=15 cutime=16
    # cstime=17 counted from 1, i.e. f[11..14].
    return comm, int(f[1]), int(f[11]) + int(f[12]), int(f[13]) + int(f[14])


# The database of the row under load: a group commit writer that FastCGI
# processes started (src/writer/shared.h) is nobody's child but init's,
# so it is found by its ONCEHOOK_DB and counted with the server.
ADOPT_DB = None


def adopted(stats):
    """The pids of the shared writers of ADOPT_DB."""
    if not ADOPT_DB:
        return []
    want = ("ONCEHOOK_DB=%s" % ADOPT_DB).encode()
    out = []
    for pid, st in stats.items():
        if st[0] != "oncehook-writer":
            continue
        try:
            with open("/proc/%d/environ" % pid, "rb") as f:
                if want in f.read().split(b"\0"):
                    out.append(pid)
        except OSError:
            pass
    return out


def is_app(comm, apps):
    """The application's processes: NAME, or NAME-something (serve's
    oncehook-writer, oncehook-work, oncehook-outbox)."""
    return comm in apps or comm.split("-")[0] in apps


def tree(roots):
    """The roots, all their descendants and the adopted writers:
    {pid: stat}."""
    stats = {}
    for d in os.listdir("/proc"):
        if d.isdigit():
            st = proc_stat(int(d))
            if st:
                stats[int(d)] = st
    kids = {}
    for pid, st in stats.items():
        kids.setdefault(st[1], []).append(pid)
    out, todo = {}, [p for p in roots if p in stats] + adopted(stats)
    while todo:
        p = todo.pop()
        if p in out:
            continue
        out[p] = stats[p]
        todo.extend(kids.get(p, []))
    return out


def cpu_sample(roots, apps):
    """{pid: (own, reaped, is_app)} of the server's processes."""
    return {pid: (st[2], st[3], is_app(st[0], apps))
            for pid, st in tree(roots).items()}


def cpu_delta(before, after):
    """(server ticks, app ticks) used between the two samples."""
    total = app = 0
    for pid, (own, reaped, is_app) in after.items():
        own0, reaped0, _ = before.get(pid, (0, 0, is_app))
        d_own, d_reaped = max(own - own0, 0), max(reaped - reaped0, 0)
        total += d_own + d_reaped
        app += (d_own if is_app else 0) + d_reaped
    return total, app


def machine_busy():
    with open("/proc/stat") as f:
        v = [int(x) for x in f.readline().split()[1:]]
    # user nice system idle iowait irq softirq steal ...
    return v[0] + v[1] + v[2] + v[5] + v[6] + v[7]


def self_ticks():
    r = resource.getrusage(resource.RUSAGE_SELF)
    return (r.ru_utime + r.ru_stime) * HZ


def private_kb(pid):
    """Private_Clean + Private_Dirty of a process (smaps_rollup), in KB:
    what it alone costs, where RSS also counts the shared libraries."""
    try:
        with open("/proc/%d/smaps_rollup" % pid) as f:
            return sum(int(line.split()[1]) for line in f
                       if line.startswith(("Private_Clean:",
                                           "Private_Dirty:")))
    except OSError:
        return 0


# Seconds to wait after the load before the idle RSS: past oncehook's idle
# tick (1 s) and the writer's, with room for a busy machine.
IDLE_S = 2.5


def rss(roots, apps):
    """(app processes, mean app RSS MB, total RSS MB of the tree, mean app
    private MB)."""
    app, priv, total = [], [], 0.0
    for pid, st in tree(roots).items():
        try:
            with open("/proc/%d/status" % pid) as f:
                kb = next((int(line.split()[1]) for line in f
                           if line.startswith("VmRSS:")), 0)
        except OSError:
            continue
        total += kb / 1024
        if is_app(st[0], apps):
            app.append(kb / 1024)
            priv.append(private_kb(pid) / 1024)
    return len(app), (sum(app) / len(app) if app else 0.0), total, \
        (sum(priv) / len(priv) if priv else 0.0)


# The table of the events, where the server is not oncehook ("events").
CLAIMS = "events"


def counts(db):
    if not db:
        return None
    if db.startswith("mysql:"):
        # mysql:SOCKET:DATABASE, read as the server's root (the bench's
        # own server): events (oncehook's, with its default prefix) and
        # orders, as for SQLite.
        _, sock, name = db.split(":", 2)
        claims = "oncehook_events" if CLAIMS == "events" else CLAIMS
        out = subprocess.run(
            ["mariadb", "-S", sock, "-u", "root", "-N", "-B", name, "-e",
             "SELECT (SELECT count(*) FROM %s),"
             " (SELECT count(*) FROM orders)" % claims],
            check=True, capture_output=True, text=True).stdout.split()
        return int(out[0]), int(out[1])
    c = sqlite3.connect("file:%s?mode=ro" % db, uri=True, timeout=10)
    try:
        return tuple(c.execute("SELECT count(*) FROM %s" % t).fetchone()[0]
                     for t in (CLAIMS, "orders"))
    finally:
        c.close()


def settle(db, roots, apps):
    """Wait until the database (or the server's CPU) stops changing."""
    last, still = None, 0
    for _ in range(60):
        time.sleep(0.1)
        now = counts(db) if db else cpu_delta({}, cpu_sample(roots, apps))
        still = still + 1 if now == last else 0
        if still >= 3:
            return
        last = now


class WalWatch(threading.Thread):
    """The largest size DB-wal reached, sampled every 100 ms."""

    def __init__(self, db):
        super().__init__(daemon=True)
        self.path, self.peak, self.done = (db + "-wal") if db else None, \
            0, threading.Event()
        if self.path:
            self.start()

    def run(self):
        while not self.done.wait(0.1):
            try:
                self.peak = max(self.peak, os.stat(self.path).st_size)
            except OSError:
                pass

    def stop(self):
        self.done.set()
        return self.peak / (1 << 20)


def run_load(a):
    global ADOPT_DB, CLAIMS
    CLAIMS = a.claims
    ADOPT_DB = a.db if a.db and not a.db.startswith("mysql:") else None
    roots = [int(p) for p in a.pids.split(",") if p]
    apps = set(a.app.split(","))
    c0 = counts(a.db)
    cmd = ["wrk", "-t", str(a.threads), "-c", str(a.conns),
           "-d", "%gs" % a.seconds, "--timeout", "10s", "-s",
           os.path.join(HERE, "wrk.lua"), a.url, "--", a.mode, a.pool,
           str(a.ndup), str(a.threads)]
    s0, b0, m0, t0 = cpu_sample(roots, apps), machine_busy(), self_ticks(), \
        time.monotonic()
    log = open(a.log, "w") if a.log else subprocess.DEVNULL
    wal = WalWatch(a.db)
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=log, text=True)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    p.returncode = os.waitstatus_to_exitcode(status)
    wrk_ticks = (ru.ru_utime + ru.ru_stime) * HZ
    wal_mb = wal.stop()
    settle(a.db, roots, apps)
    s1, b1, m1, t1 = cpu_sample(roots, apps), machine_busy(), self_ticks(), \
        time.monotonic()
    n_app, rss_app, rss_total, priv_app = rss(roots, apps)
    c1 = counts(a.db)
    # Idle: a long-lived process gives back its caches after a second
    # without a request (pipeline_idle()); RSS again past that.
    rss_idle = 0.0
    if n_app:
        time.sleep(IDLE_S)
        rss_idle = rss(roots, apps)[1]
    if a.log:
        log.write(out)
        log.close()
    line = next((x for x in out.splitlines() if x.startswith("BENCH ")), None)
    if p.returncode != 0 or line is None:
        print("measure.py: wrk failed (exit %d):\n%s" % (p.returncode, out),
              file=sys.stderr)
        sys.exit(2)
    w = json.loads(line[6:])
    server, app = cpu_delta(s0, s1)
    other = (b1 - b0) - server - wrk_ticks - (m1 - m0)
    n = max(w["requests"], 1)
    r = {
        "row": a.row, "run": a.run, "kind": "load", "mode": a.mode,
        "requests": w["requests"],
        "rps": w["requests"] / (w["duration_us"] / 1e6),
        "p50_ms": w["p50_us"] / 1000, "p99_ms": w["p99_us"] / 1000,
        "max_ms": w.get("max_us", 0) / 1000,
        "server_us": server / HZ * 1e6 / n, "app_us": app / HZ * 1e6 / n,
        "wrk_us": wrk_ticks / HZ * 1e6 / n,
        "other_pct": 100 * max(other, 0) / HZ / ((t1 - t0) * NCPU),
        "busy_pct": 100 * (b1 - b0) / HZ / ((t1 - t0) * NCPU),
        "procs": n_app, "rss_app_mb": rss_app, "rss_total_mb": rss_total,
        "wal_mb": wal_mb, "private_app_mb": priv_app,
        "rss_idle_mb": rss_idle,
        "answers": {k: w[k] for k in ("processed", "replayed", "other200",
                                      "non200")},
        "errors": {k: w[k] for k in ("connect_errors", "read_errors",
                                     "write_errors", "timeouts")},
    }
    bad = []
    if w["exhausted"]:
        bad.append("pool exhausted")
    errs = sum(r["errors"].values())
    if errs:
        bad.append("%d socket errors" % errs)
    ans = r["answers"]
    if a.mode == "new":
        if ans["replayed"] or ans["other200"] or ans["non200"]:
            bad.append("answers not all processed: %s" % ans)
        de, do = c1[0] - c0[0], c1[1] - c0[1]
        r["db"] = {"events": de, "orders": do}
        if de != do:
            bad.append("events +%d != orders +%d" % (de, do))
        if not ans["processed"] <= de <= ans["processed"] + a.conns:
            bad.append("events +%d vs %d processed answers" %
                       (de, ans["processed"]))
        r["checks"] = "ev=ord=%d, %d 200s" % (de, ans["processed"])
    elif a.mode == "dup":
        if ans["processed"] or ans["other200"] or ans["non200"]:
            bad.append("answers not all already_processed: %s" % ans)
        if c0 is not None:
            r["db"] = {"events": c1[0] - c0[0], "orders": c1[1] - c0[1]}
            if c1 != c0:
                bad.append("duplicates added rows: %s -> %s" % (c0, c1))
        r["checks"] = "+0 rows, %d replays" % ans["replayed"]
    elif a.mode == "forged":
        if ans["processed"] or ans["other200"] or ans["replayed"]:
            bad.append("forged requests answered 200: %s" % ans)
        if c0 is not None:
            r["db"] = {"events": c1[0] - c0[0], "orders": c1[1] - c0[1]}
            if c1 != c0:
                bad.append("forged requests added rows: %s -> %s" %
                           (c0, c1))
        r["checks"] = "+0 rows, %d refused" % ans["non200"]
    else:
        if ans["non200"] or ans["other200"] + ans["processed"] + \
                ans["replayed"] != w["requests"]:
            bad.append("answers not all 200: %s" % ans)
        r["checks"] = "%d 200s" % (ans["processed"] + ans["other200"])
    r["ok"] = not bad
    if bad:
        r["checks"] = "FAIL: " + "; ".join(bad)
    return r


def run_loop(a):
    b0, m0, t0 = machine_busy(), self_ticks(), time.monotonic()
    p = subprocess.Popen(a.cmd, stdout=subprocess.PIPE, text=True)
    out = p.stdout.read()
    _, status, ru = os.wait4(p.pid, 0)
    b1, m1, t1 = machine_busy(), self_ticks(), time.monotonic()
    if os.waitstatus_to_exitcode(status) != 0:
        print("measure.py: %s failed:\n%s" % (a.cmd, out), file=sys.stderr)
        sys.exit(2)
    w = json.loads(out.strip().splitlines()[-1])
    ticks = (ru.ru_utime + ru.ru_stime) * HZ
    n = max(w["iterations"], 1)
    r = {
        "row": a.row, "run": a.run, "kind": "loop",
        "requests": w["iterations"], "rps": w["iterations"] / w["seconds"],
        "p50_ms": w["p50_us"] / 1000, "p99_ms": w["p99_us"] / 1000,
        "max_ms": w.get("max_us", 0) / 1000,
        "server_us": w["cpu_us"] / n, "app_us": w["cpu_us"] / n,
        "wrk_us": 0.0,
        "other_pct": 100 * max((b1 - b0) - ticks - (m1 - m0), 0) / HZ /
        ((t1 - t0) * NCPU),
        "busy_pct": 100 * (b1 - b0) / HZ / ((t1 - t0) * NCPU),
        "procs": 1, "rss_app_mb": w["rss_kb"] / 1024,
        "rss_total_mb": w["rss_kb"] / 1024,
    }
    bad = []
    if a.db:
        ev, od = counts(a.db)
        if not ev == od == w["iterations"]:
            bad.append("events %d, orders %d, commits %d" %
                       (ev, od, w["iterations"]))
        r["checks"] = "ev=ord=%d commits" % ev
    else:
        r["checks"] = "%d syncs" % w["iterations"]
    r["ok"] = not bad
    if bad:
        r["checks"] = "FAIL: " + "; ".join(bad)
    return r


def deliver(a):
    import http.client
    import urllib.parse
    u = urllib.parse.urlsplit(a.url)
    with open(os.path.join(a.pool, "pool.tmpl")) as f:
        parts = f.read().rstrip("\n").split("@ID@")
    with open(os.path.join(a.pool, "pool.ts")) as f:
        ts = f.read().strip()
    try:
        with open(os.path.join(a.pool, "pool.scheme")) as f:
            scheme = f.read().strip()
    except FileNotFoundError:
        scheme = "stripe"
    with open(os.path.join(a.pool, "pool.ids")) as f:
        pool = [next(f).split() for _ in range(a.ndup)]
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    for ident, sig in pool:
        h = {"Content-Type": "application/json"}
        if scheme == "hmac-sha256":
            h["X-Webhook-Signature"] = "sha256=" + sig
        else:
            h["Stripe-Signature"] = "t=%s,v1=%s" % (ts, sig)
        c.request("POST", u.path, ident.join(parts).encode(), h)
        resp = c.getresponse()
        body = resp.read()
        if resp.status != 200 or b'"status":"processed"' not in body:
            print("measure.py deliver: %s: %d %s" % (ident, resp.status,
                                                      body[:200]),
                  file=sys.stderr)
            sys.exit(1)
    c.close()


def main():
    ap = argparse.ArgumentParser(usage=__doc__)
    ap.add_argument("what", choices=("load", "loop", "deliver"))
    ap.add_argument("--row")
    ap.add_argument("--run", type=int, default=1)
    ap.add_argument("--out")
    ap.add_argument("--url")
    ap.add_argument("--mode", choices=("new", "dup", "any", "forged"))
    ap.add_argument("--pool")
    ap.add_argument("--ndup", type=int, default=0)
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--conns", type=int, default=32)
    ap.add_argument("--threads", type=int, default=2)
    ap.add_argument("--pids", default="")
    ap.add_argument("--app", default="")
    ap.add_argument("--db")
    ap.add_argument("--claims", default="events")
    ap.add_argument("--log")
    argv = sys.argv[1:]
    cmd = argv[argv.index("--") + 1:] if "--" in argv else []
    a = ap.parse_args(argv[:len(argv) - len(cmd) - (1 if cmd else 0)])
    a.cmd = cmd
    if a.what == "deliver":
        deliver(a)
        return
    r = run_load(a) if a.what == "load" else run_loop(a)
    with open(a.out, "a") as f:
        f.write(json.dumps(r) + "\n")
    print("  %-28s run %d: %8.0f req/s  p50 %7.2f ms  p99 %7.2f ms  "
          "server %6.0f us/req  other %4.0f%%  wal %5.1f MB  %s" %
          (a.row, a.run, r["rps"], r["p50_ms"], r["p99_ms"], r["server_us"],
           r["other_pct"], r.get("wal_mb", 0), r["checks"]))
    sys.exit(0 if r["ok"] else 1)


if __name__ == "__main__":
    main()
