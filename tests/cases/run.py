# SPDX-License-Identifier: MIT
"""The request cases: every folder of tests/cases/ with a case.json, fed
to an oncehook binary and compared with what the case expects.

A case is data (tests/cases/README.md): the endpoint's environment, the
requests (method, path, headers, body, how to sign), what each must be
answered, and the rows afterwards.  Each case runs once per store
(SQLite; MariaDB when --mysql-url names one) and, on each, twice:

  plain  as CGI, one process per request, ONCEHOOK_FAST_PATHS=off;
  fast   as two FastCGI processes with the defaults, taking turns: the
         retry answered from a peek, runs of new events sent straight
         to the group-commit writer, the writer itself.

A third store, the in-memory engine of the tests (--fake-bin), answers
every case but those that change the actions' tables between requests;
the rows of an actions file (after.sql) are not asked of it.

Both runs must answer what the case says, and the fast one exactly
what the plain one answered (status and body of every request, the rows
afterwards): the pipeline's contract (src/pipeline/pipeline.h).

Prints TAP.  Standard library only; the MariaDB side goes through the
mariadb command-line client (tests/servers/oncetest/mariadb.py).
"""

import argparse
import base64
import glob
import json
import os
import shutil
import signal
import socket
import sqlite3
import subprocess
import sys
import tempfile
import time
import urllib.parse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "servers"))

from oncetest import fcgiclient, hookclient, mariadb  # noqa: E402

MODES = ("plain", "fast")


class Tap:
    def __init__(self):
        self.n = 0
        self.failed = 0

    def check(self, ok, what, why=()):
        self.n += 1
        if not ok:
            self.failed += 1
        print("%s %d - %s" % ("ok" if ok else "not ok", self.n, what))
        for line in why if not ok else ():
            print("#   " + line)
        sys.stdout.flush()


# -- the stores ---------------------------------------------------------

class SQLite:
    name = "sqlite"

    def __init__(self, tmp):
        self.tmp = tmp

    def prepare(self, run):
        self.path = os.path.join(self.tmp, run + ".sqlite")
        return {"ONCEHOOK_DB": self.path}

    def rows(self, sql, args=()):
        conn = sqlite3.connect(self.path, timeout=10)
        try:
            return ["|".join("NULL" if v is None else str(v) for v in r)
                    for r in conn.execute(sql, args).fetchall()]
        finally:
            conn.close()

    def execute(self, sql):
        conn = sqlite3.connect(self.path, timeout=10, isolation_level=None)
        try:
            conn.executescript(sql)
        finally:
            conn.close()

    def status(self, key):
        r = self.rows("SELECT status FROM events WHERE key = ?", (key,))
        return r[0] if r else None

    def conflicts(self):
        return int(self.rows("SELECT count(*) FROM conflicts")[0])

    def events(self):
        return int(self.rows("SELECT count(*) FROM events")[0])


class Fake:
    """The in-memory engine of the tests (tests/unit/fakestore.c) in a
    build of its own (tests/unit/oncehook-fake), its state in a file
    between processes and its rows as JSON beside it.  It has no SQL:
    its actions are the event's type (one effect each).  So it answers
    every case but those that change an actions file's tables between
    requests (do_sql), and a case's SQL rows are not asked of it."""
    name = "fake"
    sql = False

    def __init__(self, tmp, binary):
        self.tmp = tmp
        self.bin = binary

    @staticmethod
    def takes(case):
        return not any("do_sql" in r for r in case["requests"])

    def prepare(self, run):
        self.path = os.path.join(self.tmp, run + ".fake")
        return {"ONCEHOOK_DB": self.path}

    def state(self):
        with open(self.path + ".json") as f:
            return json.load(f)

    def status(self, key):
        e = self.state()["events"].get(key)
        return e["status"] if e else None

    def conflicts(self):
        return self.state()["conflicts"]

    def events(self):
        return len(self.state()["events"])


class MariaDB:
    """One database; a table prefix per run, the actions' own tables
    dropped before each."""
    name = "mariadb"

    def __init__(self, url, pwfile):
        self.url = url
        self.pwfile = pwfile
        u = urllib.parse.urlsplit(url)
        with open(pwfile) as f:
            pw = f.readline().strip()
        self.my = mariadb.My(urllib.parse.parse_qs(u.query)["socket"][0],
                             u.path.lstrip("/"), u.username, pw)
        self.sql = self.my.lines

    def prepare(self, run):
        self.runs = getattr(self, "runs", 0) + 1
        self.prefix = "c%d_" % self.runs
        tables = self.sql("SELECT table_name FROM information_schema.tables"
                          " WHERE table_schema = DATABASE()")
        if tables:
            self.sql("SET FOREIGN_KEY_CHECKS = 0; DROP TABLE %s" %
                     ", ".join("`%s`" % t for t in tables))
        return {"ONCEHOOK_DB": self.url, "ONCEHOOK_DB_PREFIX": self.prefix,
                "ONCEHOOK_DB_PASSWORD_FILE": self.pwfile}

    def rows(self, sql, args=()):
        return self.sql(sql)

    def execute(self, sql):
        self.sql(sql)

    def status(self, key):
        r = self.sql("SELECT status FROM `%sevents` WHERE event_key = %s" %
                     (self.prefix, mariadb.q(key)))
        return r[0] if r else None

    def conflicts(self):
        return int(self.sql("SELECT count(*) FROM `%sconflicts`" %
                            self.prefix)[0])

    def events(self):
        return int(self.sql("SELECT count(*) FROM `%sevents`" %
                            self.prefix)[0])


# -- sending ------------------------------------------------------------

def expand(case):
    """The case's requests, each "repeat" unrolled ({n} in its body)."""
    out = []
    for rq in case["requests"]:
        n = rq.get("repeat", 1)
        for i in range(1, n + 1):
            r = json.loads(json.dumps(rq).replace("{n}", str(i))) \
                if n > 1 else rq
            if n > 1:
                r["about"] = "%s (%d of %d)" % (rq.get("about", ""), i, n)
            out.append(r)
    return out


def now_ms(rq):
    """{now_ms} in a body: the Unix time in milliseconds, moved by the
    request's sign.t (linear's time is inside the body it signs)."""
    sign = rq.get("sign")
    t = sign.get("t", 0) if isinstance(sign, dict) else 0
    return str(int((time.time() + t) * 1000))


def body_of(rq):
    if "body_text" in rq:
        return rq["body_text"].replace("{now_ms}",
                                       now_ms(rq)).encode("utf-8")
    if "body" in rq:
        body = dict(rq["body"])
        if "pad" in rq:         # a member of that many bytes
            body["pad"] = "x" * rq["pad"]
        return hookclient.dumps(body)
    return b""


def signing(rq, env):
    """The scheme, secret and time a request is signed with, or None
    where "sign" is false."""
    sign = rq.get("sign", rq.get("method", "POST") == "POST")
    if not sign:
        return None
    ep = rq.get("endpoint", "")
    pre = "ONCEHOOK_%s_" % ep.upper() if ep else "ONCEHOOK_"
    scheme = env.get(pre + "SCHEME", env.get("ONCEHOOK_SCHEME"))
    secret = env.get(pre + "SECRET", env.get("ONCEHOOK_SECRET", ""))
    t = None
    if isinstance(sign, dict):
        scheme = sign.get("scheme", scheme)
        secret = sign.get("secret", secret)
        if "t" in sign:
            t = int(time.time()) + sign["t"]
    secret = secret.split()[0] if secret else secret
    return hookclient.SCHEMES.get(scheme), secret, t


def signed_body(rq, env, body):
    """The body as sent: a scheme that signs inside the body (mailgun)
    puts its signature in, its token being the request's "key"."""
    s = signing(rq, env)
    if s is None or s[0] is None:
        return body
    return s[0].sign_body(s[1], body, rq.get("key", ""), s[2])


# The public-key schemes' headers: (signature, timestamp, what joins
# the timestamp to the body, the signature's encoding).
PUBLIC_KEY = {
    "discord": ("X-Signature-Ed25519", "X-Signature-Timestamp", b"", "hex"),
    "telnyx": ("telnyx-signature-ed25519", "telnyx-timestamp", b"|",
               "base64"),
    "sendgrid": ("X-Twilio-Email-Event-Webhook-Signature",
                 "X-Twilio-Email-Event-Webhook-Timestamp", b"", "base64"),
}


def openssl_sign(pem, msg):
    """msg signed with the private key pem (PEM text) by the openssl
    command, not by oncehook: Ed25519's 64 bytes, or ECDSA P-256 over
    SHA-256 in DER.  Both go through files: openssl 3.0 signs Ed25519
    from a file only."""
    with tempfile.TemporaryDirectory() as d:
        key, data = os.path.join(d, "key.pem"), os.path.join(d, "msg")
        with open(key, "w") as f:
            f.write(pem)
        with open(data, "wb") as f:
            f.write(msg)
        text = subprocess.run(["openssl", "pkey", "-in", key, "-noout",
                               "-text_pub"], capture_output=True,
                              check=True).stdout
        cmd = ["openssl", "pkeyutl", "-sign", "-inkey", key, "-rawin",
               "-in", data] if text.startswith(b"ED25519") else \
            ["openssl", "dgst", "-sha256", "-sign", key, data]
        return subprocess.run(cmd, capture_output=True, check=True).stdout


def pk_headers(scheme, pem, body, key, t):
    """A public-key scheme's headers, signed at t (None: now) with the
    private key pem (PEM text); standard's are v1a."""
    t = int(time.time()) if t is None else t
    ts = str(t).encode()
    if scheme == "standard":
        sig = openssl_sign(pem, key.encode() + b"." + ts + b"." + body)
        return [("webhook-id", key), ("webhook-timestamp", str(t)),
                ("webhook-signature",
                 "v1a," + base64.b64encode(sig).decode())]
    hsig, hts, join, enc = PUBLIC_KEY[scheme]
    sig = openssl_sign(pem, ts + join + body)
    return [(hsig, sig.hex() if enc == "hex" else
             base64.b64encode(sig).decode()), (hts, str(t))]


def headers_of(rq, env, body, private=None):
    """The request's headers: signed as its endpoint's scheme says,
    unless "sign" is false; "sign" may name another secret, move the
    timestamp by "t" seconds, sign another body ("body_text") or, for a
    URL-signing scheme, sign another URL ("url").  With a private key
    (the case's "private", or "private" of "sign": PEM text; null: none)
    the public-key schemes are signed, by the openssl command."""
    h = []
    sign = rq.get("sign", rq.get("method", "POST") == "POST")
    if sign:
        ep = rq.get("endpoint", "")
        pre = "ONCEHOOK_%s_" % ep.upper() if ep else "ONCEHOOK_"
        scheme = env.get(pre + "SCHEME", env.get("ONCEHOOK_SCHEME"))
        secret = env.get(pre + "SECRET", env.get("ONCEHOOK_SECRET", ""))
        t = None
        url = env.get(pre + "URL", "")
        if isinstance(sign, dict):
            scheme = sign.get("scheme", scheme)
            secret = sign.get("secret", secret)
            url = sign.get("url", url)
            if "t" in sign:
                t = int(time.time()) + sign["t"]
            if "body_text" in sign:
                body = sign["body_text"].replace(
                    "{now_ms}", now_ms(rq)).encode("utf-8")
            private = sign.get("private", private)
        secret = secret.split()[0] if secret else secret
        if private is not None:
            h += pk_headers(scheme, private, body, rq.get("key", ""), t)
        else:
            sender = hookclient.SCHEMES[scheme]
            # URL-signing schemes sign the endpoint's ONCEHOOK_<NAME>_URL
            # (or "url" of "sign", as a provider with another URL would).
            kw = {"url": url} if getattr(sender, "signs_url", False) \
                else {}
            h += sender.headers(secret, body, rq.get("key", ""),
                                rq.get("type", ""), t, **kw)
    h += list(rq.get("headers", {}).items())
    drop = [d.lower() for d in rq.get("drop_headers", [])]
    return {k: v for k, v in h if k.lower() not in drop}


def cgi_path(rq):
    ep = rq.get("endpoint", "")
    return "/hooks" + ("/" + ep if ep else "") + rq.get("path", "")


class Plain:
    """Each request a CGI process."""

    def __init__(self, binary, env, log):
        self.binary, self.env, self.log = binary, env, log

    def send(self, rq, body, headers):
        params = fcgiclient.cgi_params(
            rq.get("method", "POST"), cgi_path(rq), body, headers,
            content_type=rq.get("content_type", "application/json"))
        env = dict(self.env)
        env.update(params)
        p = subprocess.run([self.binary], input=body, env=env,
                           capture_output=True, timeout=60)
        self.log.write(p.stderr)
        status, hdrs, out = fcgiclient.parse_cgi(p.stdout)
        return status, hdrs, out

    def close(self):
        pass


class Fast:
    """Two FastCGI processes, each on a unix socket of its own, as a web
    server runs them, the requests taking turns (group commit hands new
    events to the writer without a lookup only while two or more
    processes share it); their writer stopped by PID after them."""

    def __init__(self, binary, env, log, tmp):
        self.env = env
        self.socks = []
        self.procs = []
        self.turn = 0
        for i in range(2):
            path = os.path.join(tmp, "fcgi%d.sock" % i)
            if os.path.exists(path):
                os.unlink(path)
            ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            ls.bind(path)
            ls.listen(16)
            self.procs.append(subprocess.Popen(
                [binary], stdin=ls.fileno(), env=env,
                stdout=subprocess.DEVNULL, stderr=log))
            ls.close()
            self.socks.append(path)

    def send(self, rq, body, headers):
        sock = self.socks[self.turn % len(self.socks)]
        self.turn += 1
        r = fcgiclient.request(
            sock, rq.get("method", "POST"), cgi_path(rq), body,
            headers, content_type=rq.get("content_type",
                                         "application/json"))
        return r.status, r.headers, r.body

    def close(self):
        for p in self.procs:
            p.terminate()
        for p in self.procs:
            try:
                p.wait(10)
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        for path in self.socks:
            os.unlink(path)
        db = self.env["ONCEHOOK_DB"].encode()
        for pid in writers(db):
            try:
                os.kill(pid, signal.SIGTERM)
            except OSError:
                pass


def writers(db):
    """The group-commit writers over database db (their environment)."""
    out = []
    for d in glob.glob("/proc/[0-9]*"):
        try:
            with open(d + "/cmdline", "rb") as f:
                argv = f.read().split(b"\0")
            if len(argv) < 2 or argv[1] != b"--shared-writer":
                continue
            with open(d + "/environ", "rb") as f:
                if b"ONCEHOOK_DB=" + db in f.read().split(b"\0"):
                    out.append(int(os.path.basename(d)))
        except OSError:
            pass
    return out


# -- one case -----------------------------------------------------------

def case_env(case, folder, store_env, store):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith("ONCEHOOK_")}
    env.update({"ONCEHOOK_LOG": "warn", "ONCEHOOK_COUNTERS": "off"})
    mine = os.path.join(folder, "actions.mysql.sql")
    acts = mine if store.name == "mariadb" and os.path.exists(mine) else \
        os.path.join(folder, "actions.sql")
    if not os.path.exists(acts):
        acts = os.path.join(HERE, "actions.sql")
    if "ONCEHOOK_ENDPOINTS" not in case.get("env", {}):
        env["ONCEHOOK_ACTIONS"] = acts
    shipped = os.path.join(os.path.dirname(os.path.dirname(HERE)), "sql",
                           "actions", "mysql" if store.name == "mariadb"
                           else "")
    for k, v in case.get("env", {}).items():
        if v.startswith("./"):
            v = os.path.join(folder, v[2:])
        env[k] = v.replace("{actions}", shipped.rstrip("/"))
    env.update(store_env)
    return env


def match(rq, status, headers, body):
    """What differs between an answer and the request's "expect"."""
    want = rq.get("expect", {})
    bad = []
    if "status" in want and status != want["status"]:
        bad.append("status %d, not %d" % (status, want["status"]))
    for k, v in want.get("headers", {}).items():
        if headers.get(k.lower()) != v:
            bad.append("header %s: %r, not %r" % (k, headers.get(k.lower()),
                                                  v))
    for k in want.get("no_headers", []):
        if k.lower() in headers:
            bad.append("header %s present: %r" % (k, headers[k.lower()]))
    if "text" in want:
        text = body.decode("utf-8", "replace") if isinstance(
            body, bytes) else body
        if text != want["text"]:
            bad.append("body %r, not %r" % (text[:200], want["text"]))
    if "json" in want or "json_has" in want or "no_json" in want:
        try:
            got = json.loads(body)
        except ValueError:
            got = None
        if not isinstance(got, dict):
            bad.append("not a JSON object: %r" % body[:200])
        else:
            for k, v in want.get("json", {}).items():
                if got.get(k) != v:
                    bad.append("%s: %r, not %r" % (k, got.get(k), v))
            for k in want.get("no_json", []):
                if k in got:
                    bad.append("%s present: %r" % (k, got[k]))
            for k, v in want.get("json_has", {}).items():
                if v not in str(got.get(k)):
                    bad.append("%s: %r, without %r" % (k, got.get(k), v))
    return bad


def rows_after(case, store):
    """The rows the case asks about, as they are."""
    after = case.get("after", {})
    got = {"events": {k: store.status(k) for k in after.get("events", {})}}
    if "conflicts" in after:
        got["conflicts"] = store.conflicts()
    if "events_total" in after:
        got["events_total"] = store.events()
    if getattr(store, "sql", True):
        got["sql"] = [store.rows(q)[:1] for q, _ in after.get("sql", [])]
    return got


def run_mode(tap, args, name, folder, case, store, mode, tmp):
    """Run the case's requests in one mode; checks; the answers."""
    run = "%s-%s" % (name, mode)
    binary = getattr(store, "bin", args.bin)
    env = case_env(case, folder, store.prepare(run), store)
    logpath = os.path.join(tmp, run + ".log")
    answers = []
    with open(logpath, "wb") as log:
        p = subprocess.run([binary, "init"], env=env, stdout=log,
                           stderr=log, timeout=120)
        if p.returncode != 0:
            tap.check(False, "%s: %s, %s: oncehook init" % (name, store.name,
                                                            mode),
                      tail(logpath))
            return None
        # A configuration broken after init (a variable removed).
        for var in case.get("unset_after_init", []):
            env.pop(var, None)
        if mode == "plain":
            env["ONCEHOOK_FAST_PATHS"] = "off"
            front = Plain(binary, env, log)
        else:
            front = Fast(binary, env, log, tmp)
        try:
            for i, rq in enumerate(expand(case)):
                if "do_sql" in rq:
                    # A change made by hand between two requests (the
                    # operator's fix), not a request.
                    store.execute(rq["do_sql"])
                    continue
                body = signed_body(rq, env, body_of(rq))
                status, hdrs, out = front.send(rq, body, headers_of(
                    rq, env, body, case.get("private")))
                answers.append((status, out.decode("utf-8", "replace")))
                bad = match(rq, status, hdrs, out)
                tap.check(not bad, "%s: %s, %s: %d. %s" % (
                    name, store.name, mode, i + 1, rq.get("about", "")),
                    bad + (["answered %d %r" % (status, out[:200])]
                           if bad else []))
        finally:
            front.close()
    rows = rows_after(case, store)
    after = case.get("after", {})
    for k, v in after.get("events", {}).items():
        tap.check(rows["events"][k] == v, "%s: %s, %s: event %s %s" % (
            name, store.name, mode, k, v or "not stored"),
            ["it is %s" % rows["events"][k]])
    if "conflicts" in after:
        tap.check(rows["conflicts"] == after["conflicts"],
                  "%s: %s, %s: %d conflicts rows" % (
                      name, store.name, mode, after["conflicts"]),
                  ["%d of them" % rows["conflicts"]])
    if "events_total" in after:
        tap.check(rows["events_total"] == after["events_total"],
                  "%s: %s, %s: %d events rows" % (
                      name, store.name, mode, after["events_total"]),
                  ["%d of them" % rows["events_total"]])
    for (q, want), got in zip(after.get("sql", []), rows.get("sql", [])):
        tap.check(got == ([want] if want is not None else []),
                  "%s: %s, %s: %s -> %s" % (name, store.name, mode, q, want),
                  ["it is %r" % got])
    return answers, rows


def tail(path, n=5):
    try:
        with open(path, "rb") as f:
            return f.read().decode("utf-8", "replace").splitlines()[-n:]
    except OSError:
        return []


def no_public_keys(binary):
    """Why the public-key cases cannot run here (no libcrypto in the
    binary, as its selftest says, or no openssl command to sign them),
    or None."""
    if shutil.which("openssl") is None:
        return "no openssl command to sign the requests"
    out = subprocess.run([binary, "selftest"], capture_output=True,
                         timeout=60).stdout.decode("utf-8", "replace")
    for line in out.splitlines():
        if " # SKIP " in line:
            return line.split(" # SKIP ", 1)[1]
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--bin", required=True, help="the oncehook binary")
    ap.add_argument("--mysql-url", help="a MariaDB store (mysql://...)")
    ap.add_argument("--mysql-pw", help="its password file")
    ap.add_argument("--fake-bin", help="the build on the in-memory engine "
                    "(tests/unit/oncehook-fake)")
    ap.add_argument("cases", nargs="*", help="case names (default: all)")
    args = ap.parse_args()
    args.bin = os.path.abspath(args.bin)
    names = args.cases or sorted(
        os.path.basename(os.path.dirname(p))
        for p in glob.glob(os.path.join(HERE, "*", "case.json")))
    tmp = tempfile.mkdtemp(prefix="oncehook-cases-")
    os.chmod(tmp, 0o755)
    stores = [SQLite(tmp)]
    if args.mysql_url:
        stores.append(MariaDB(args.mysql_url, args.mysql_pw))
    if args.fake_bin:
        stores.append(Fake(tmp, os.path.abspath(args.fake_bin)))
    tap = Tap()
    no_pk = no_public_keys(args.bin)
    try:
        for name in names:
            folder = os.path.join(HERE, name)
            with open(os.path.join(folder, "case.json")) as f:
                case = json.load(f)
            if "private" in case and no_pk is not None:
                tap.check(True, "%s # SKIP %s" % (name, no_pk))
                continue
            for store in stores:
                if store.name not in case.get("stores", [store.name]):
                    continue
                if store.name == "fake" and not Fake.takes(case):
                    continue
                got = {m: run_mode(tap, args, name, folder, case, store, m,
                                   tmp) for m in MODES}
                if None in got.values():
                    continue
                diff = ["%d. plain %r, fast %r" % (i + 1, a, b)
                        for i, (a, b) in enumerate(zip(got["plain"][0],
                                                       got["fast"][0]))
                        if a != b]
                if got["plain"][1] != got["fast"][1]:
                    diff.append("rows: plain %r, fast %r" % (
                        got["plain"][1], got["fast"][1]))
                tap.check(not diff, "%s: %s: the fast paths answer as the "
                          "plain path" % (name, store.name), diff)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("1..%d" % tap.n)
    return 1 if tap.failed else 0


if __name__ == "__main__":
    sys.exit(main())
