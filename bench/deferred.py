# SPDX-License-Identifier: MIT
"""Deferred mode's answer time with a slow action (issue 11), side by side
with the synchronous mode, in one run.

For each mode (sync, deferred) it makes a database with one endpoint
whose action takes about ACTION seconds (a recursive query, then the
write), starts "oncehook serve" (4 workers; in deferred mode its work
child too) on a loopback port, sends N signed new events one every
INTERVAL seconds straight over FastCGI (tests/servers/oncetest/fcgiclient.py, no
web server in between), and measures each answer.  Then it waits until
every event is processed and checks: N effects, one per key.

usage: python3 bench/deferred.py BIN [--n N] [--interval S] [--action S]

Prints a table (median, p99 and max answer in ms; when the last effect
committed after the last answer) and the ratio of the medians.  Nothing
here is asserted by a test; figures depend on the machine.
"""

import argparse
import hashlib
import hmac
import json
import os
import socket
import sqlite3
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "tests", "servers"))

from oncetest import fcgiclient  # noqa: E402

SECRET = "bench-deferred-secret-0123456789"


def actions(seconds):
    # About 15 M rows a second on this kind of machine: calibrated below.
    return ("CREATE TABLE IF NOT EXISTS slow_effects (key TEXT PRIMARY KEY"
            " NOT NULL);\n-- on: *\n"
            "SELECT count(*) FROM (WITH RECURSIVE c(x) AS (SELECT 1 UNION"
            " ALL SELECT x + 1 FROM c WHERE x < %d) SELECT x FROM c);\n"
            "INSERT INTO slow_effects (key) VALUES (:key);\n" % rows(seconds))


_rate = None


def rows(seconds):
    """Rows of the recursive query that take about seconds here."""
    global _rate
    if _rate is None:
        c = sqlite3.connect(":memory:")
        t = time.monotonic()
        c.execute("SELECT count(*) FROM (WITH RECURSIVE c(x) AS (SELECT 1"
                  " UNION ALL SELECT x + 1 FROM c WHERE x < 2000000)"
                  " SELECT x FROM c)").fetchall()
        _rate = 2000000 / (time.monotonic() - t)
    return int(_rate * seconds)


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def run(binary, mode, n, interval, action, tmp):
    d = os.path.join(tmp, mode)
    os.makedirs(d)
    with open(os.path.join(d, "slow.sql"), "w") as f:
        f.write(actions(action))
    port = free_port()
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("ONCEHOOK_")}
    env.update({
        "ONCEHOOK_DB": os.path.join(d, "hooks.db"),
        "ONCEHOOK_ENDPOINTS": "shop",
        "ONCEHOOK_SHOP_SCHEME": "hmac-sha256",
        "ONCEHOOK_SHOP_SECRET": SECRET,
        "ONCEHOOK_SHOP_ACTIONS": os.path.join(d, "slow.sql"),
        "ONCEHOOK_SHOP_MODE": mode,
        "ONCEHOOK_SYNCHRONOUS": "normal",
        "ONCEHOOK_BUSY_TIMEOUT_MS": "30000",
        "ONCEHOOK_LOG": "warn",
    })
    subprocess.run([binary, "init"], env=env, check=True,
                   capture_output=True)
    log = open(os.path.join(d, "serve.log"), "w")
    srv = subprocess.Popen([binary, "serve", "--listen",
                            "127.0.0.1:%d" % port, "--workers", "4",
                            "--timeout", "60"], env=env, stderr=log)
    addr = "127.0.0.1:%d" % port
    for _ in range(100):
        try:
            fcgiclient.connect(addr, 1).close()
            break
        except OSError:
            time.sleep(0.05)
    lat = []
    statuses = []
    start = time.monotonic()
    for i in range(n):
        body = json.dumps({"eventId": "%s-%d" % (mode, i),
                           "type": "order.paid"}).encode()
        sig = "sha256=" + hmac.new(SECRET.encode(), body,
                                   hashlib.sha256).hexdigest()
        due = start + i * interval
        now = time.monotonic()
        if due > now:
            time.sleep(due - now)
        t = time.monotonic()
        r = fcgiclient.request(addr, "POST", "/hooks/shop", body,
                               {"X-Webhook-Signature": sig}, timeout=120)
        lat.append((time.monotonic() - t) * 1000)
        statuses.append((r.json or {}).get("status"))
    last_answer = time.monotonic()
    db = sqlite3.connect(env["ONCEHOOK_DB"], timeout=30)
    while True:
        done = db.execute("SELECT count(*) FROM events WHERE status ="
                          " 'processed'").fetchone()[0]
        if done >= n or time.monotonic() - last_answer > 30 + n * action:
            break
        time.sleep(0.1)
    drained = time.monotonic() - last_answer
    effects = db.execute("SELECT count(*), count(DISTINCT key) FROM"
                         " slow_effects").fetchone()
    db.close()
    srv.terminate()
    srv.wait(timeout=60)
    log.close()
    lat.sort()
    return {
        "mode": mode, "n": n, "statuses": sorted(set(statuses)),
        "median": statistics.median(lat),
        "p99": lat[min(len(lat) - 1, int(len(lat) * 0.99))],
        "max": lat[-1], "drained_s": drained, "processed": done,
        "effects": effects,
    }


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("bin")
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--interval", type=float, default=0.5)
    ap.add_argument("--action", type=float, default=2.0)
    a = ap.parse_args()
    with tempfile.TemporaryDirectory(prefix="oncehook-deferred.") as tmp:
        res = [run(os.path.abspath(a.bin), m, a.n, a.interval, a.action,
                   tmp) for m in ("sync", "deferred")]
    print("%d new events, one every %.1f s, an action of about %.1f s;"
          " oncehook serve, 4 workers, straight over FastCGI; load"
          " average %s" % (a.n, a.interval, a.action,
                           os.getloadavg()[0]))
    print()
    print("| mode | answers | median ms | p99 ms | max ms |"
          " last effect after the last answer, s | processed | effects"
          " (distinct) |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    ok = True
    for r in res:
        print("| %s | %s | %.1f | %.1f | %.1f | %.1f | %d | %d (%d) |" % (
            r["mode"], ",".join(str(s) for s in r["statuses"]),
            r["median"], r["p99"], r["max"], r["drained_s"],
            r["processed"], r["effects"][0], r["effects"][1]))
        ok &= r["processed"] == r["n"] and r["effects"] == (r["n"], r["n"])
    print()
    print("- answer, median: sync / deferred = %.0f" %
          (res[0]["median"] / res[1]["median"]))
    print("- every event processed once in both modes: %s" %
          ("yes" if ok else "NO"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
