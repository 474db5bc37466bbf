#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""bench/run.sh's table and ratios from the JSON lines of bench/measure.py.

usage: report.py RESULTS.jsonl [OUT.md]

One line per row: the median of its runs for each figure; "checks" says
how many runs passed and, if one failed, why.  Then the ratios the
benchmark is for (a ratio is left out when one of its rows did not run).
Printed, and written to OUT.md if given.
"""

import json
import statistics
import sys

RATIOS = [
    ("counters: duplicates x4, on / off", "oncehook fcgi x4 normal dup",
     "oncehook fcgi x4 normal dup, counters off", "rps"),
    ("counters: forged flood x4, on / off", "oncehook fcgi x4 normal forged",
     "oncehook fcgi x4 normal forged, counters off", "rps"),
    # (what, numerator row, denominator row, figure)
    # The peers, both kinds: the handler a site owner would write
    # (minimal) and oncehook's work re-done (same work); for a Stripe
    # endpoint and an hmac-sha256 one (its replay guard).
    ("oncehook new normal x4 / minimal PHP-FPM x4",
     "oncehook fcgi x4 normal new", "php-fpm x4 minimal new", "rps"),
    ("oncehook new normal x4 / minimal Node x1",
     "oncehook fcgi x4 normal new", "node x1 minimal new", "rps"),
    ("oncehook new normal x4, hmac-sha256 / minimal PHP-FPM x4",
     "oncehook fcgi x4 normal new, hmac-sha256", "php-fpm x4 minimal new",
     "rps"),
    ("oncehook new normal x4, hmac-sha256 / minimal Node x1",
     "oncehook fcgi x4 normal new, hmac-sha256", "node x1 minimal new",
     "rps"),
    ("oncehook new normal x4 / same-work PHP-FPM x4",
     "oncehook fcgi x4 normal new", "php-fpm x4 normal new", "rps"),
    ("oncehook new normal x4 / same-work Node x4",
     "oncehook fcgi x4 normal new", "node x4 normal new", "rps"),
    ("oncehook new normal x4, hmac-sha256 / same-work PHP-FPM x4",
     "oncehook fcgi x4 normal new, hmac-sha256", "php-fpm x4 normal new",
     "rps"),
    ("oncehook new normal x4, hmac-sha256 / same-work Node x4",
     "oncehook fcgi x4 normal new, hmac-sha256", "node x4 normal new",
     "rps"),
    ("oncehook new normal x4: hmac-sha256 / Stripe",
     "oncehook fcgi x4 normal new, hmac-sha256",
     "oncehook fcgi x4 normal new", "rps"),
    ("server CPU per new event: minimal PHP-FPM / oncehook (x4 normal)",
     "php-fpm x4 minimal new", "oncehook fcgi x4 normal new", "server_us"),
    ("server CPU per new event: minimal Node / oncehook (x4 normal)",
     "node x1 minimal new", "oncehook fcgi x4 normal new", "server_us"),
    ("server CPU per new event: minimal PHP-FPM / oncehook hmac-sha256",
     "php-fpm x4 minimal new", "oncehook fcgi x4 normal new, hmac-sha256",
     "server_us"),
    ("oncehook dup x4 / minimal PHP-FPM dup", "oncehook fcgi x4 normal dup",
     "php-fpm x4 minimal dup", "rps"),
    ("oncehook dup x4 / minimal Node dup", "oncehook fcgi x4 normal dup",
     "node x1 minimal dup", "rps"),
    ("oncehook new full x4 / minimal PHP-FPM full",
     "oncehook fcgi x4 full new", "php-fpm x4 minimal full new", "rps"),
    ("oncehook new full x4 / minimal Node full", "oncehook fcgi x4 full new",
     "node x1 minimal full new", "rps"),
    # The MariaDB rows' anchors: the PHP peers on the same server, the
    # handler a site owner would write (minimal) and oncehook's work
    # re-done (same work).
    ("MariaDB: oncehook new x4 / minimal PHP-FPM + PDO MySQL",
     "oncehook fcgi x4 normal new, mariadb",
     "php-fpm x4 minimal new, mariadb", "rps"),
    ("MariaDB: oncehook dup x4 / minimal PHP-FPM + PDO MySQL",
     "oncehook fcgi x4 normal dup, mariadb",
     "php-fpm x4 minimal dup, mariadb", "rps"),
    ("MariaDB: server CPU per new event (MariaDB's too), minimal PHP / "
     "oncehook", "php-fpm x4 minimal new, mariadb",
     "oncehook fcgi x4 normal new, mariadb", "server_us"),
    ("MariaDB: oncehook new x4 / same-work PHP-FPM + PDO MySQL",
     "oncehook fcgi x4 normal new, mariadb",
     "php-fpm x4 normal new, mariadb", "rps"),
    ("MariaDB: oncehook dup x4 / same-work PHP-FPM + PDO MySQL",
     "oncehook fcgi x4 normal dup, mariadb",
     "php-fpm x4 normal dup, mariadb", "rps"),
    ("MariaDB: oncehook dup x4 / oncehook dup x4 on SQLite",
     "oncehook fcgi x4 normal dup, mariadb", "oncehook fcgi x4 normal dup",
     "rps"),
    ("MariaDB: oncehook new x4 / oncehook new x4 on SQLite",
     "oncehook fcgi x4 normal new, mariadb", "oncehook fcgi x4 normal new",
     "rps"),
    ("MariaDB: server CPU per new event (MariaDB's too), same-work PHP / "
     "oncehook",
     "php-fpm x4 normal new, mariadb",
     "oncehook fcgi x4 normal new, mariadb", "server_us"),
    ("oncehook new normal x4 / ceiling (minimal fcgi x4)",
     "oncehook fcgi x4 normal new", "minimal fcgi x4", "rps"),
    ("oncehook new full x4 / same-work PHP-FPM full",
     "oncehook fcgi x4 full new",
     "php-fpm x4 full new", "rps"),
    ("oncehook new full x4 / same-work Node full",
     "oncehook fcgi x4 full new",
     "node x4 full new", "rps"),
    ("oncehook new full x4 / raw SQLite FULL loop",
     "oncehook fcgi x4 full new", "sqlite loop full", "rps"),
    ("oncehook new normal x4 / raw SQLite NORMAL loop",
     "oncehook fcgi x4 normal new", "sqlite loop normal", "rps"),
    ("raw SQLite FULL loop / fdatasync loop", "sqlite loop full",
     "fdatasync loop", "rps"),
    ("oncehook dup x4 / ceiling (minimal fcgi x4)",
     "oncehook fcgi x4 normal dup", "minimal fcgi x4", "rps"),
    ("oncehook dup x4 / same-work PHP-FPM dup", "oncehook fcgi x4 normal dup",
     "php-fpm x4 normal dup", "rps"),
    ("oncehook dup x4 / same-work Node dup", "oncehook fcgi x4 normal dup",
     "node x4 normal dup", "rps"),
    ("oncehook CGI new / minimal CGI", "oncehook cgi normal new",
     "minimal cgi", "rps"),
    ("oncehook serve x4 (nginx) / lighttpd x4, new normal",
     "oncehook serve x4 normal new", "oncehook fcgi x4 normal new", "rps"),
    ("oncehook new normal: x2 / x1", "oncehook fcgi x2 normal new",
     "oncehook fcgi x1 normal new", "rps"),
    ("oncehook new normal: x4 / x1", "oncehook fcgi x4 normal new",
     "oncehook fcgi x1 normal new", "rps"),
    ("oncehook new full: x4 / x1", "oncehook fcgi x4 full new",
     "oncehook fcgi x1 full new", "rps"),
    ("oncehook new normal / full, x4", "oncehook fcgi x4 normal new",
     "oncehook fcgi x4 full new", "rps"),
    ("server CPU per new event: same-work PHP-FPM / oncehook (x4 normal)",
     "php-fpm x4 normal new", "oncehook fcgi x4 normal new", "server_us"),
    ("server CPU per new event: same-work Node / oncehook (x4 normal)",
     "node x4 normal new", "oncehook fcgi x4 normal new", "server_us"),
    ("new events, full: serve x16 (group commit) / sqlite loop full",
     "oncehook serve x16 full new", "sqlite loop full", "rps"),
    ("new events, full: serve x4 (group commit) / sqlite loop full",
     "oncehook serve x4 full new", "sqlite loop full", "rps"),
    ("new events, full: fcgi x4 / sqlite loop full",
     "oncehook fcgi x4 full new", "sqlite loop full", "rps"),
    ("new events, full: fcgi x8 / sqlite loop full",
     "oncehook fcgi x8 full new", "sqlite loop full", "rps"),
    ("group commit: serve x16 full new, with / without",
     "oncehook serve x16 full new",
     "oncehook serve x16 full new, no group commit", "rps"),
    ("group commit: serve x4 full new, with / without",
     "oncehook serve x4 full new",
     "oncehook serve x4 full new, no group commit", "rps"),
    ("group commit: fcgi x4 full new, with / without",
     "oncehook fcgi x4 full new",
     "oncehook fcgi x4 full new, no group commit", "rps"),
    ("oncehook CGI dup / minimal CGI", "oncehook cgi normal dup",
     "minimal cgi", "rps"),
    ("oncehook CGI new, shared libs / minimal CGI",
     "oncehook cgi normal new, shared libs", "minimal cgi", "rps"),
    ("oncehook CGI dup, shared libs / minimal CGI",
     "oncehook cgi normal dup, shared libs", "minimal cgi", "rps"),
    ("the shipped orders.sql (outbox rows) / the bench's, x4 normal new",
     "oncehook fcgi x4 normal new, shipped orders.sql",
     "oncehook fcgi x4 normal new", "rps"),
    ("server CPU per new event: oncehook / ceiling (x4)",
     "oncehook fcgi x4 normal new", "minimal fcgi x4", "server_us"),
    ("server CPU per duplicate: oncehook / ceiling (x4)",
     "oncehook fcgi x4 normal dup", "minimal fcgi x4", "server_us"),
]

FIGS = ("rps", "p50_ms", "p99_ms", "server_us", "app_us", "other_pct",
        "rss_app_mb", "rss_total_mb", "procs", "wal_mb", "private_app_mb",
        "rss_idle_mb")


def summarise(lines):
    rows = {}
    for r in lines:
        rows.setdefault(r["row"], []).append(r)
    out = {}
    for name, runs in rows.items():
        m = {f: statistics.median(r.get(f, 0) for r in runs) for f in FIGS}
        # The slowest answer of all the runs, not a median.
        m["max_ms"] = max(r.get("max_ms", 0) for r in runs)
        ok = sum(1 for r in runs if r["ok"])
        bad = [r["checks"] for r in runs if not r["ok"]]
        m["checks"] = ("ok %d/%d: %s" % (ok, len(runs), runs[-1]["checks"])
                       if not bad else "%d/%d failed: %s" %
                       (len(bad), len(runs), bad[0]))
        m["ok"] = not bad
        m["runs"] = {r["run"]: r for r in runs}
        out[name] = m
    return out


def table(rows):
    t = ["| row | req/s | p50 ms | p99 ms | max ms | server CPU µs/req | "
         "of which "
         "app | other CPU % | RSS MB per app process (private); idle 2.5 s "
         "later | RSS MB total "
         "| WAL peak MB | checks |",
         "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for name, m in rows.items():
        t.append("| %s | %.0f | %.2f | %.2f | %.0f | %.0f | %.0f | %.0f | "
                 "%s | %.1f | %s | %s |" % (
                     name, m["rps"], m["p50_ms"], m["p99_ms"], m["max_ms"],
                     m["server_us"], m["app_us"], m["other_pct"],
                     "%d × %.1f (%.1f); %.1f" % (m["procs"],
                                                m["rss_app_mb"],
                                                m["private_app_mb"],
                                                m["rss_idle_mb"])
                     if m["procs"] else "-", m["rss_total_mb"],
                     "%.1f" % m["wal_mb"] if m["wal_mb"] else "-",
                     m["checks"].replace("|", "/")))
    return t


def ratios(rows):
    """The ratio of the medians, then, with several runs, the ratio in
    each pass (run n of one row against run n of the other: the rows a
    pass measured minutes apart, not a quarter of an hour), so that a
    ratio's spread is in the report, not only its median."""
    t = []
    for what, a, b, fig in RATIOS:
        if a in rows and b in rows and rows[b][fig]:
            line = "- %s: %.2f" % (what, rows[a][fig] / rows[b][fig])
            ra, rb = rows[a]["runs"], rows[b]["runs"]
            both = sorted(n for n in ra if n in rb and rb[n].get(fig))
            if len(both) > 1:
                line += " (per pass %s)" % ", ".join(
                    "%.2f" % (ra[n].get(fig, 0) / rb[n][fig])
                    for n in both)
            t.append(line)
    return t


def main():
    with open(sys.argv[1]) as f:
        lines = [json.loads(x) for x in f if x.strip()]
    if not lines:
        print("report.py: no results in %s" % sys.argv[1])
        sys.exit(1)
    rows = summarise(lines)
    counts = sorted({len(m["runs"]) for m in rows.values()})
    nruns = " or ".join(str(n) for n in counts)
    text = ["Medians of %s run(s) per row. server CPU: the web server's "
            "and the application's processes (utime+stime); other CPU: "
            "the rest of the machine during the row, in %% of all its "
            "CPUs (high: a contaminated row)." % nruns, ""]
    text += table(rows)
    r = ratios(rows)
    if r:
        text += ["", "Ratios (req/s unless said):", ""] + r
    print("\n".join(text))
    if len(sys.argv) > 2:
        with open(sys.argv[2], "w") as f:
            f.write("\n".join(text) + "\n")


if __name__ == "__main__":
    main()
