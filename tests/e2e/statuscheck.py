# SPDX-License-Identifier: MIT
"""The counters and the status endpoint through a real web server.

Run by tests/e2e-lighttpd.sh, tests/e2e-apache.sh and tests/e2e-nginx.sh
against a running server whose oncehook has ONCEHOOK_STATUS_TOKEN set
(env file: the ONCEHOOK_* variables of the filled example).  Prints TAP
lines "ok - ..." / "not ok - ..." (the caller numbers them).

  statuscheck.py mix     --url U --env F --bin B --label L [--as USER]
      401 without or with a wrong token (WWW-Authenticate), 200 with
      Bearer and with Basic; a known mix of deliveries (new, duplicate,
      conflict, each refusal the web server lets through, an unknown
      endpoint) counted exactly in the JSON, the Prometheus text
      (promtool check metrics) and `oncehook stats --json`; a forged
      flood writes nothing to the database (sizes, PRAGMA data_version).
      Keeps the last JSON in F.snapshot for:
  statuscheck.py restart --url U --env F --bin B --label L [--as USER]
      after the server restarted: the counts are still there; then a
      corrupt counters file is rebuilt by the next delivery, which is
      processed as usual.
  statuscheck.py page    --url U --env F --label L --shot PNG
      the HTML page in headless Chromium: a screenshot, and what a person
      sees there (endpoint names, health, counts) read from its DOM.
  statuscheck.py off     --url U --label L
      the token unset: /status is an unknown endpoint (404).
  statuscheck.py park    --url U --env F --bin B --label L [--as USER]
      an action failing while a flag row exists (type e2e.flagged,
      tests/e2e/actions-e2e.sql): 500, 500, then 200 parked; list,
      stats --check critical; the flag removed, replay applies it once;
      the provider's retry is then already_processed.

Standard library only (and promtool, chromium when there).
"""

import argparse
import base64
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "servers"))

from oncetest import hookclient, testkit  # noqa: E402

failed = 0


def tap(ok, what, detail=None):
    global failed
    print("%s - %s" % ("ok" if ok else "not ok", what))
    if not ok:
        failed += 1
        if detail is not None:
            for line in str(detail).splitlines()[:30]:
                print("#   " + line)
    sys.stdout.flush()
    return ok


class Ctx:
    def __init__(self, a):
        self.a = a
        self.label = a.label
        self.env = testkit.read_env(a.env) if a.env else {}
        self.client = hookclient.Client(a.url)
        self.token = self.env.get("ONCEHOOK_STATUS_TOKEN", "")

    def status(self, accept=None, auth="bearer", method="GET"):
        h = []
        if accept:
            h.append(("Accept", accept))
        if auth == "bearer":
            h.append(("Authorization", "Bearer " + self.token))
        elif auth == "basic":
            h.append(("Authorization", "Basic " + base64.b64encode(
                ("monitor:" + self.token).encode()).decode()))
        elif auth:
            h.append(("Authorization", auth))
        return self.client.request(method, self.client.path("status"),
                                   b"", h)

    def secret(self, name):
        return self.env["ONCEHOOK_%s_SECRET" % name.upper()].split()[0]

    def run_stats(self, *args):
        """oncehook stats as the backends' user, with the server's
        variables: (exit code, stdout)."""
        return self.run_cmd("stats", *args)

    def sql(self, sql):
        """Run sql on the database as the backends' user."""
        cmd = [sys.executable, "-c", "import sqlite3, sys\n"
               "c = sqlite3.connect(sys.argv[1], isolation_level=None, "
               "timeout=10)\nprint(c.execute(sys.argv[2]).fetchall())",
               self.env["ONCEHOOK_DB"], sql]
        if self.a.as_user:
            cmd = ["setpriv", "--reuid=" + self.a.as_user, "--regid=" +
                   self.a.as_group, "--clear-groups", "--"] + cmd
        p = subprocess.run(cmd, capture_output=True, timeout=60)
        return p.stdout.decode().strip()

    def run_cmd(self, *args):
        """oncehook COMMAND as the backends' user, with the server's
        variables: (exit code, stdout)."""
        cmd = [self.a.bin] + list(args)
        if self.a.as_user:
            cmd = ["setpriv", "--reuid=" + self.a.as_user, "--regid=" +
                   self.a.as_group, "--clear-groups", "--"] + cmd
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("ONCEHOOK_")}
        env.update(self.env)
        p = subprocess.run(cmd, env=env, capture_output=True, timeout=60)
        return p.returncode, p.stdout.decode("utf-8", "replace")


def outcomes(doc):
    """{(endpoint, outcome): n} from a status JSON document."""
    out = {}
    for e in doc["endpoints"] + [doc["unrouted"]]:
        for k, v in e["outcomes"].items():
            out[(e["name"], k)] = v
    return out


def prom_outcomes(text):
    out = {}
    for m in re.finditer(r'^oncehook_requests_total\{endpoint="([^"]*)",'
                         r'outcome="([^"]*)"\} (\d+)$', text, re.M):
        out[(m.group(1), m.group(2))] = int(m.group(3))
    return out


def delta(after, before):
    return {k: v - before.get(k, 0) for k, v in after.items()
            if v != before.get(k, 0)}


def the_mix(c):
    """Send the known mix; return the expected count increases."""
    cl = c.client
    shop = cl.path("shop")
    sec = c.secret("shop")
    run = "%d%d" % (os.getpid(), int(time.time() * 1000) % 100000)
    body = lambda k, n=0: hookclient.dumps(  # noqa: E731
        {"eventId": "st-%s-%s" % (run, k), "type": "webhook.ping",
         "data": {"n": n}})
    want = {}

    def add(ep, outcome, n=1):
        want[(ep, outcome)] = want.get((ep, outcome), 0) + n

    seen = []
    for k in ("a", "b", "c"):
        seen.append(cl.post_hmac(shop, sec, body(k)).status)
    add("shop", "processed", 3)
    for k in ("a", "b"):
        seen.append(cl.post_hmac(shop, sec, body(k)).status)
    add("shop", "already_processed", 2)
    seen.append(cl.post_hmac(shop, sec, body("a", 1)).status)
    add("shop", "key_conflict")
    seen.append(cl.post_hmac(shop, "not-the-secret", body("d")).status)
    add("shop", "invalid_signature")
    bad = b'{"eventId": "st-x", "type": '
    seen.append(cl.post_hmac(shop, sec, bad).status)
    add("shop", "malformed_json")
    nokey = hookclient.dumps({"object": "event", "type": "charge.failed"})
    seen.append(cl.post_stripe(cl.path("stripe"), c.secret("stripe"),
                               nokey).status)
    add("stripe", "missing_key")
    seen.append(cl.request("GET", shop).status)
    add("shop", "method_not_allowed")
    seen.append(cl.post_hmac(shop, sec, body("e"),
                             content_type="text/plain").status)
    add("shop", "unsupported_media_type")
    sb = hookclient.SCHEMES["stripe"].body("evt_st_%s" % run,
                                           "payment_intent.succeeded")
    seen.append(cl.post_stripe(cl.path("stripe"), c.secret("stripe"), sb,
                               t=int(time.time()) - 3600).status)
    add("stripe", "stale_timestamp")
    seen.append(cl.post_hmac(cl.path("nope-%s" % run), sec,
                             body("f")).status)
    add("(none)", "unknown_endpoint")
    expect = [200] * 5 + [422, 401, 400, 400, 405, 415, 400, 404]
    tap(seen == expect, "%s: the mix answered as expected (%s)" %
        (c.label, seen), "want %s" % expect)
    return want


def cmd_mix(c):
    r = c.status(auth=None)
    tap(r.status == 401 and (r.header("www-authenticate") or "")
        .startswith('Basic realm="oncehook"') and isinstance(r.json, dict)
        and r.json.get("error") == "unauthorized",
        "%s: status without a token: 401 with WWW-Authenticate Basic" %
        c.label, r)
    r = c.status(auth="Bearer wrong-token-0123456789")
    r2 = c.status(auth="Basic " + base64.b64encode(b"u:wrong").decode())
    tap(r.status == 401 and r2.status == 401,
        "%s: a wrong Bearer or Basic token: 401" % c.label, (r, r2))
    r = c.status(auth="basic")
    tap(r.status == 200 and isinstance(r.json, dict) and
        "endpoints" in r.json, "%s: Basic with the token as password "
        "(any user): 200 JSON" % c.label, r)
    r = c.status(method="POST")
    tap(r.status == 405 and r.header("allow") == "GET, HEAD",
        "%s: POST to status: 405, Allow: GET, HEAD" % c.label, r)
    before = c.status()
    if not tap(before.status == 200 and before.header("content-type") ==
               "application/json" and isinstance(before.json, dict),
               "%s: Bearer: 200, the JSON document" % c.label, before):
        return
    want = the_mix(c)
    after = c.status()
    got = delta(outcomes(after.json), outcomes(before.json))
    tap(got == want, "%s: the JSON counts the mix exactly (%d outcomes)" %
        (c.label, len(want)), "got  %s\nwant %s" % (sorted(got.items()),
                                                    sorted(want.items())))
    r = c.status(accept="text/plain")
    tap(r.status == 200 and (r.header("content-type") or "").startswith(
        "text/plain; version=0.0.4"), "%s: Accept: text/plain: the "
        "Prometheus text format 0.0.4" % c.label, r)
    pt = shutil.which("promtool")
    if pt:
        p = subprocess.run([pt, "check", "metrics"], input=r.body,
                           capture_output=True, timeout=60)
        tap(p.returncode == 0, "%s: promtool check metrics accepts it" %
            c.label, p.stdout.decode() + p.stderr.decode())
    else:
        tap(False, "%s: promtool is installed (tools/deps.sh)" % c.label)
    tap(prom_outcomes(r.body.decode()) == outcomes(after.json),
        "%s: the Prometheus counters equal the JSON ones" % c.label)
    rc, out = c.run_stats("--json")
    try:
        st = json.loads(out)
        same = outcomes(st) == outcomes(after.json)
    except ValueError:
        same = False
    tap(rc == 0 and same, "%s: oncehook stats --json counts the same" %
        c.label, out[:800])
    rc, out = c.run_stats()
    tap(rc == 0 and re.search(r"^ENDPOINT +HEALTH +HOUR", out, re.M) and
        re.search(r"^shop +(healthy|degraded|failing|idle) ", out, re.M),
        "%s: oncehook stats prints the table" % c.label, out)
    flood(c)
    last = c.status()
    with open(c.a.env + ".snapshot", "w", encoding="utf-8") as f:
        json.dump(last.json, f)


# Reads PRAGMA data_version before and after, on one connection, as the
# backends' user (so no file of the database changes owner).
WATCH = r"""
import sqlite3, sys
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
print(conn.execute("PRAGMA data_version").fetchone()[0], flush=True)
sys.stdin.readline()
print(conn.execute("PRAGMA data_version").fetchone()[0], flush=True)
"""


def sizes(db):
    out = []
    for s in ("", "-wal"):
        try:
            st = os.stat(db + s)
            out.append((s, st.st_size, st.st_mtime_ns))
        except OSError:
            out.append((s, None, None))
    return out


def flood(c):
    db = c.env["ONCEHOOK_DB"]
    cmd = [sys.executable, "-c", WATCH, db]
    if c.a.as_user:
        cmd = ["setpriv", "--reuid=" + c.a.as_user, "--regid=" +
               c.a.as_group, "--clear-groups", "--"] + cmd
    w = subprocess.Popen(cmd, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                         text=True)
    v0 = w.stdout.readline().strip()
    s0 = sizes(db)
    before = outcomes(c.status().json)
    shop = c.client.path("shop")
    n = 200
    codes = set()
    for i in range(n):
        body = hookclient.dumps({"eventId": "forged-%d" % i,
                                 "type": "order.paid"})
        codes.add(c.client.post_hmac(shop, "forged-secret", body).status)
    s1 = sizes(db)
    w.stdin.write("\n")
    w.stdin.flush()
    v1 = w.stdout.readline().strip()
    w.wait(timeout=30)
    got = delta(outcomes(c.status().json), before)
    tap(codes == {401} and got == {("shop", "invalid_signature"): n},
        "%s: %d forged requests: each 401, each counted" % (c.label, n),
        (codes, got))
    tap(v0 != "" and v0 == v1 and s0 == s1, "%s: ... and the database "
        "and its WAL untouched (sizes, mtimes, PRAGMA data_version %s)" %
        (c.label, v0), "before %s %s\nafter  %s %s" % (v0, s0, v1, s1))


def cmd_restart(c):
    with open(c.a.env + ".snapshot", encoding="utf-8") as f:
        snap = json.load(f)
    now = c.status()
    tap(now.status == 200 and outcomes(now.json) == outcomes(snap),
        "%s: after a restart, the counts are all there" % c.label,
        delta(outcomes(now.json), outcomes(snap)) if now.json else now)
    path = c.env["ONCEHOOK_DB"] + "-counters"
    with open(path, "r+b") as f:
        f.write(b"this is not a counters file" * 10)
    sec = c.secret("shop")
    body = hookclient.dumps({"eventId": "after-corrupt-%d" % os.getpid(),
                             "type": "webhook.ping"})
    r = c.client.post_hmac(c.client.path("shop"), sec, body)
    tap(r.status == 200 and r.json.get("status") == "processed",
        "%s: a corrupt counters file: the delivery is processed" %
        c.label, r)
    now = c.status()
    o = outcomes(now.json) if now.json else {}
    tap(now.status == 200 and o.get(("shop", "processed")) == 1 and
        sum(o.values()) == 1, "%s: ... the file rebuilt, counting again "
        "from that delivery" % c.label, now)


def dom_text(html):
    t = re.sub(r"<(script|style)[^>]*>.*?</\1>", " ", html, flags=re.S)
    t = re.sub(r"<[^>]+>", " ", t)
    return re.sub(r"\s+", " ", t)


def cmd_page(c):
    chrome = shutil.which("chromium") or shutil.which("chromium-browser")
    if not chrome:
        tap(False, "%s: chromium is installed (tools/deps.sh)" % c.label)
        return
    # A refusal to see on the page, with its reason.
    c.client.post_hmac(c.client.path("shop"), "forged-secret",
                       hookclient.dumps({"eventId": "page-forged"}))
    u = c.a.url.replace("http://", "http://monitor:%s@" % c.token, 1)
    u = u.rstrip("/") + "/status"
    profile = tempfile.mkdtemp(prefix="oncehook-chrome.")
    base = [chrome, "--headless", "--no-sandbox", "--disable-gpu",
            "--disable-dev-shm-usage", "--no-first-run",
            "--user-data-dir=" + profile]
    p = subprocess.run(base + ["--dump-dom", u], capture_output=True,
                       timeout=120)
    dom = p.stdout.decode("utf-8", "replace")
    text = dom_text(dom)
    doc = c.status().json
    shop = [e for e in doc["endpoints"] if e["name"] == "shop"][0]
    names = all(e["name"] in text for e in doc["endpoints"])
    tap("oncehook status" in text and names and
        re.search(r"shop hmac-sha256 (healthy|degraded|failing|idle)", text)
        and "<svg" in dom, "%s: Chromium shows the page: every endpoint, "
        "shop's health, the chart" % c.label, text[:1500] or p.stderr)
    tap(("%d processed" % shop["total"]["processed"]) in text and
        ("%d refused" % shop["total"]["refused"]) in text and
        "invalid_signature no signature matched" in text, "%s: ... with shop's counts and the "
        "last failure's reason as a person reads them" % c.label,
        text[:1500])
    tap("<script" not in dom and not re.search(r'(src|href)="https?:',
                                               dom),
        "%s: ... no script, no external asset" % c.label)
    p = subprocess.run(base + ["--screenshot=" + c.a.shot,
                               "--window-size=412,1600", "--hide-scrollbars",
                               u], capture_output=True, timeout=120)
    ok = os.path.exists(c.a.shot) and os.path.getsize(c.a.shot) > 5000
    tap(ok, "%s: a phone-sized screenshot kept at %s" % (c.label, c.a.shot),
        p.stderr.decode()[-800:])
    shutil.rmtree(profile, ignore_errors=True)


def cmd_park(c):
    """A failing action parks its event after PARK_AFTER (3) attempts;
    replay applies it once the cause is gone (SPEC section 12)."""
    cl = c.client
    shop = cl.path("shop")
    sec = c.secret("shop")
    key = "park-%d-%d" % (os.getpid(), int(time.time()))
    body = hookclient.dumps({"eventId": key, "type": "e2e.flagged"})
    c.sql("INSERT INTO e2e_flag VALUES ('statuscheck park')")
    seen = []
    for _ in range(4):
        r = cl.post_hmac(shop, sec, body)
        seen.append((r.status, (r.json or {}).get("status") or
                     (r.json or {}).get("error")))
    want = [(500, "action_failed"), (500, "action_failed"),
            (200, "parked"), (200, "parked")]
    tap(seen == want, "%s: a failing action: 500, 500, then 200 parked, "
        "and parked again on the next delivery" % c.label,
        "got %s" % seen)
    effects = lambda: c.sql("SELECT count(*) FROM e2e_flagged WHERE "  # noqa
                            "key = '%s'" % key)
    tap(effects() == "[(0,)]" and "failed" in c.sql(
        "SELECT status, attempts FROM events WHERE key = '%s'" % key),
        "%s: ... stored as failed, no effect" % c.label,
        c.sql("SELECT status, attempts, last_error FROM events WHERE "
              "key = '%s'" % key))
    rc, out = c.run_cmd("list", "--status", "failed")
    tap(rc == 0 and key in out, "%s: list --status failed shows it" %
        c.label, out)
    rc, out = c.run_cmd("stats", "--check")
    tap(rc == 2 and out.startswith("CRITICAL: ") and
        "failed (parked or failing)" in out, "%s: stats --check: exit 2, CRITICAL, "
        "parked events named" % c.label, out)
    c.sql("DELETE FROM e2e_flag")
    rc, out = c.run_cmd("replay", "--endpoint", "shop", key)
    tap(rc == 0 and out.startswith("replayed") and effects() == "[(1,)]",
        "%s: the cause gone, replay applies it once (exit %d)" %
        (c.label, rc), out)
    r = cl.post_hmac(shop, sec, body)
    rc, out = c.run_cmd("replay", "--endpoint", "shop", key)
    tap(r.status == 200 and (r.json or {}).get("status") ==
        "already_processed" and rc == 0 and out.startswith("processed")
        and effects() == "[(1,)]", "%s: then the provider's retry is "
        "already_processed, a second replay runs nothing: one effect" %
        c.label, (r, out))


def cmd_off(c):
    r = c.client.request("GET", c.client.path("status"), b"",
                         [("Authorization", "Bearer x" * 4)])
    tap(r.status == 404, "%s: token unset: /status is 404" % c.label, r)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("cmd", choices=["mix", "restart", "page", "off",
                                    "park"])
    ap.add_argument("--url", required=True)
    ap.add_argument("--env")
    ap.add_argument("--bin")
    ap.add_argument("--label", required=True)
    ap.add_argument("--as", dest="as_user")
    ap.add_argument("--group", dest="as_group", default="nogroup")
    ap.add_argument("--shot")
    a = ap.parse_args()
    c = Ctx(a)
    {"mix": cmd_mix, "restart": cmd_restart, "page": cmd_page,
     "off": cmd_off, "park": cmd_park}[a.cmd](c)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
