#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""oncehook tests (tests/paypal.sh): PayPal's scheme through a real
deployment, its signing certificate fetched from a local HTTPS server
that stands for PayPal's certificate host.

PayPal signs "transmission id|transmission time|webhook id|CRC-32 of
the body in decimal" with RSA-SHA256 (PKCS#1 v1.5) under the key of the
certificate it names in PAYPAL-CERT-URL.  This sender signs as PayPal
documents it, with Python alone (sign()); it shares no code with
oncehook.  One delivery is signed by "oncehook sign" too, to hold the
two to the same bytes.

The certificates (made by tests/paypal.sh with the openssl CLI in PKI):
  ca.pem          the test CA (ONCEHOOK_TEST_CERT_CA)
  tls.pem/.key    the HTTPS server's, for 127.0.0.1 and localhost
  sign.key        PayPal's signing key; every leaf below but
                  other.key's holds its public key, so a refusal is the
                  certificate's own fault, never the signature's
  valid.pem       issued to messageverificationcerts.paypal.com by the CA
  chain.pem       the same name, issued by an intermediate CA: leaf and
                  intermediate in one file, as PayPal serves them
  sandbox.pem     issued to messageverificationcerts.sandbox.paypal.com
  expired.pem     the same name by the CA, valid in January 2020 only
  wrongname.pem   by the CA, to messageverificationcerts.example.com
  otherca.pem     the right name, by another CA
  selfsigned.pem  the right name, self-signed
  other.key       another key (with valid.pem's URL: no match)
  planted.pem     the right name, self-signed, other.key's: put in the
                  cache directory as if fetched (the host serves valid.pem)

Commands:

  paypal.py conf lighttpd|env FILE ACTIONS --secret ID --hosts HOSTS
                 --ca CA
      Replace, in a filled example, the example's endpoints by one,
      "paypal" (scheme paypal, its webhook id ID, running ACTIONS), and
      set ONCEHOOK_TEST_CERT_HOSTS and ONCEHOOK_TEST_CERT_CA.
  paypal.py bulk --pki PKI --secret ID --count N --out FILE
      Sign N events with sign.key (the certificate URL left to send).
  paypal.py send --label LABEL --url BASE --db SQLITE --pki PKI
                 --secret ID --port P --port2 P2 --log LOG --bin ONCEHOOK
                 --tmp DIR --bulk FILE
      Serve the certificates over HTTPS on 127.0.0.1:P (listed) and
      127.0.0.1:P2 (not listed), counting the GETs per path; send the
      deliveries to BASE/paypal; check the answers, the GETs, the
      database, the log LOG and the certificate cache.

For each deployment ("send"):
  valid       -> 200 processed, again -> 200 already_processed, one GET
  signed by "oncehook sign", a chain through an intermediate, the
  sandbox's certificate -> 200
  certificate URL off the host list (another host, the listed one as
  user info, another port, another path, http), a certificate not
  chaining to the CA (another CA, self-signed), expired, issued to
  another name, the body changed after signing (CRC), another key,
  PAYPAL-AUTH-ALGO not SHA256withRSA, a webhook id not configured, no
  PAYPAL-CERT-URL, a certificate put in the cache directory (self-
  signed, another key) -> 401 invalid_signature; signed 4 days ago ->
  400 stale_timestamp; none stored, the off-list URLs never fetched,
  the log's why= naming each certificate's fault
  the certificate host down -> 503 certificate_unavailable with
  Retry-After, nothing stored; the host back -> the same delivery 200
  processed
  N events, one certificate URL new to the deployment, sent over 4
  connections at once (several processes miss the cache together) ->
  each 200 processed, the URL fetched exactly once, each event applied
  once
  the cache directory (<db>-certs) 0700, its files 0600: one per
  certificate accepted, named by the SHA-256 of its URL, holding what
  the host served, and fetch.lock.

Prints "ok - LABEL: ..." / "not ok - LABEL: ..." lines; exits 0, 1 if a
check failed, 2 on a usage error, 3 on a harness error.
"""

import base64
import concurrent.futures
import datetime
import hashlib
import http.client
import http.server
import json
import multiprocessing
import os
import re
import ssl
import stat
import subprocess
import sys
import threading
import time
import uuid
import zlib

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "servers"))
from oncetest import hookclient  # noqa: E402
from oncetest.checks import Tap, expect  # noqa: E402

CERTS = "/v1/notifications/certs/"
ENDPOINT = "paypal"
OTHER_WEBHOOK_ID = "3XK21962TS5478712"   # a webhook id not configured
STALE_S = 4 * 86400                      # past the 3 days of tolerance
SENDERS = 4                              # connections sending the bulk


# -- PayPal's signature, from the documentation ---------------------------

def der_items(b):
    """The TLVs of a DER SEQUENCE's contents: [(tag, bytes)]."""
    out = []
    i = 0
    while i < len(b):
        tag = b[i]
        n = b[i + 1]
        i += 2
        if n & 0x80:
            k = n & 0x7F
            n = int.from_bytes(b[i:i + k], "big")
            i += k
        out.append((tag, b[i:i + n]))
        i += n
    return out


def rsa_key(path):
    """The private numbers (n, d, p, q, dp, dq, qinv) of a PEM RSA key,
    PKCS#8 ("PRIVATE KEY") or PKCS#1 ("RSA PRIVATE KEY")."""
    with open(path, encoding="ascii") as f:
        text = f.read()
    m = re.search(r"-----BEGIN ([A-Z ]+)-----(.*?)-----END", text, re.S)
    der = base64.b64decode("".join(m.group(2).split()))
    (tag, body), = der_items(der)
    items = der_items(body)
    if items[1][0] == 0x30:     # PKCS#8: the key in an OCTET STRING
        (tag, body), = der_items(items[2][1])
        items = der_items(body)
    n, e, d, p, q, dp, dq, qinv = [int.from_bytes(v, "big")
                                   for _, v in items[1:9]]
    return n, d, p, q, dp, dq, qinv


# DigestInfo of SHA-256 (RFC 8017, 9.2, note 1).
SHA256_INFO = bytes.fromhex("3031300d060960864801650304020105000420")


def rsa_sign(key, msg):
    """RSASSA-PKCS1-v1_5 with SHA-256 (RFC 8017, 8.2.1)."""
    n, d, p, q, dp, dq, qinv = key
    k = (n.bit_length() + 7) // 8
    t = SHA256_INFO + hashlib.sha256(msg).digest()
    em = b"\x00\x01" + b"\xff" * (k - len(t) - 3) + b"\x00" + t
    m = int.from_bytes(em, "big")
    s1 = pow(m, dp, p)
    s2 = pow(m, dq, q)
    s = s2 + q * ((qinv * (s1 - s2)) % p)
    return s.to_bytes(k, "big")


def iso(t):
    return datetime.datetime.fromtimestamp(
        t, datetime.timezone.utc).strftime("%Y-%m-%dT%H:%M:%SZ")


def new_event():
    """A PayPal event body with a new id: (id, body bytes)."""
    u = uuid.uuid4().hex.upper()
    eid = "WH-%s-%s" % (u[:17], u[17:])
    body = json.dumps({
        "id": eid, "event_version": "1.0",
        "create_time": "2026-01-01T00:00:00.000Z",
        "resource_type": "capture",
        "event_type": "PAYMENT.CAPTURE.COMPLETED",
        "summary": "Payment completed for $ 7.47 USD",
        "resource": {"id": "42311647XV020574X", "status": "COMPLETED",
                     "amount": {"currency_code": "USD", "value": "7.47"}},
    }, separators=(",", ":")).encode("utf-8")
    return eid, body


def sign(key, webhook_id, body, cert_url, t=None, tid=None):
    """PayPal's headers for body, as a list of (name, value)."""
    t = int(time.time()) if t is None else t
    tid = tid or str(uuid.uuid1())
    ts = iso(t)
    msg = "%s|%s|%s|%d" % (tid, ts, webhook_id, zlib.crc32(body))
    return [("Content-Type", "application/json"),
            ("PAYPAL-TRANSMISSION-ID", tid),
            ("PAYPAL-TRANSMISSION-TIME", ts),
            ("PAYPAL-TRANSMISSION-SIG",
             base64.b64encode(rsa_sign(key, msg.encode())).decode()),
            ("PAYPAL-CERT-URL", cert_url),
            ("PAYPAL-AUTH-ALGO", "SHA256withRSA")]


def with_header(headers, name, value):
    return [(k, value if k == name else v) for k, v in headers]


# -- conf ---------------------------------------------------------------

def cmd_conf(a):
    if a.format == "lighttpd":
        line_re = re.compile(r'^(\s*)"(ONCEHOOK_[A-Z0-9_]+)" => "(.*)",?\s*$')

        def fmt_line(indent, k, val):
            return '%s"%s" => "%s",\n' % (indent, k, val)
    elif a.format == "env":
        line_re = re.compile(r'^()(ONCEHOOK_[A-Z0-9_]+)="?(.*?)"?\s*$')

        def fmt_line(indent, k, val):
            if " " in val:
                val = '"%s"' % val
            return "%s=%s\n" % (k, val)
    else:
        raise SystemExit("paypal.py conf: lighttpd or env, not %s" % a.format)
    with open(a.file, encoding="utf-8") as f:
        lines = f.readlines()
    old = None
    for ln in lines:
        m = line_re.match(ln)
        if m and m.group(2) == "ONCEHOOK_ENDPOINTS":
            old = [e.strip() for e in m.group(3).split(",") if e.strip()]
    if not old:
        raise SystemExit("paypal.py: %s: no ONCEHOOK_ENDPOINTS" % a.file)
    prefixes = tuple("ONCEHOOK_%s_" % e.upper() for e in old)
    mine = [("ONCEHOOK_ENDPOINTS", ENDPOINT),
            ("ONCEHOOK_TEST_CERT_HOSTS", a.hosts),
            ("ONCEHOOK_TEST_CERT_CA", a.ca),
            ("ONCEHOOK_PAYPAL_SCHEME", "paypal"),
            ("ONCEHOOK_PAYPAL_SECRET", a.secret),
            ("ONCEHOOK_PAYPAL_ACTIONS", a.actions)]
    out = []
    for ln in lines:
        m = line_re.match(ln)
        if not m:
            out.append(ln)
        elif m.group(2) == "ONCEHOOK_ENDPOINTS":
            out += [fmt_line(m.group(1), k, v) for k, v in mine]
        elif not m.group(2).startswith(prefixes):
            out.append(ln)
    with open(a.file, "w", encoding="utf-8") as f:
        f.writelines(out)
    return 0


# -- bulk ---------------------------------------------------------------

_key = None


def _sign_one(args):
    webhook_id, t = args
    eid, body = new_event()
    return {"id": eid, "body": body.decode("utf-8"),
            "headers": sign(_key, webhook_id, body, "{url}", t)}


def _init(path):
    global _key
    _key = rsa_key(path)


def cmd_bulk(a):
    t = int(time.time())
    with multiprocessing.Pool(2, _init, (os.path.join(a.pki, "sign.key"),)) \
            as pool:
        out = pool.map(_sign_one, [(a.secret, t)] * a.count, 50)
    with open(a.out, "w", encoding="utf-8") as f:
        json.dump(out, f)
    return 0


# -- the certificate host -----------------------------------------------

class CertHost:
    """PayPal's certificate host: the files of www ({path: bytes}) over
    HTTPS on 127.0.0.1:port, each GET counted by path (all ports)."""

    def __init__(self, pki, www, ports):
        self.ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        self.ctx.load_cert_chain(os.path.join(pki, "tls.pem"),
                                 os.path.join(pki, "tls.key"))
        self.www = www
        self.ports = ports
        self.gets = {}
        self.lock = threading.Lock()
        self.servers = []

    def count(self, path):
        with self.lock:
            return self.gets.get(path, 0)

    def start(self):
        host = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                with host.lock:
                    host.gets[self.path] = host.gets.get(self.path, 0) + 1
                data = host.www.get(self.path)
                self.send_response(200 if data is not None else 404)
                self.send_header("Content-Type", "application/x-pem-file")
                self.send_header("Content-Length", str(len(data or b"")))
                self.end_headers()
                self.wfile.write(data or b"")

            def log_message(self, *args):
                pass

        for port in self.ports:
            s = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
            s.socket = self.ctx.wrap_socket(s.socket, server_side=True)
            threading.Thread(target=s.serve_forever, args=(0.05,),
                             daemon=True).start()
            self.servers.append(s)

    def stop(self):
        for s in self.servers:
            s.shutdown()
            s.server_close()
        self.servers = []


# -- send ---------------------------------------------------------------

def oncehook_sign(a, body, cert_url):
    """Headers from "oncehook sign --key sign.key --cert-url URL"."""
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"),
           "ONCEHOOK_DB": os.path.join(a.tmp, "unused.db"),
           "ONCEHOOK_ENDPOINTS": ENDPOINT,
           "ONCEHOOK_PAYPAL_SCHEME": "paypal",
           "ONCEHOOK_PAYPAL_SECRET": a.secret}
    f = os.path.join(a.tmp, "paypal-body.json")
    with open(f, "wb") as fh:
        fh.write(body)
    p = subprocess.run([a.bin, "sign", "--endpoint", ENDPOINT, "--key",
                        os.path.join(a.pki, "sign.key"), "--cert-url",
                        cert_url, f], env=env, capture_output=True,
                       text=True, timeout=30)
    if p.returncode != 0:
        raise RuntimeError("oncehook sign: exit %d: %s"
                           % (p.returncode, p.stderr.strip()))
    headers = [("Content-Type", "application/json")]
    for ln in p.stdout.splitlines():
        k, sep, v = ln.partition(": ")
        if not sep:
            raise RuntimeError("oncehook sign printed %r" % ln)
        if k.lower() != "content-type":
            headers.append((k, v))
    return headers


def send_bulk(client, deliveries, url):
    """Send every delivery, the certificate URL filled in, over SENDERS
    keep-alive connections whose first requests leave together (at a
    cold cache: several processes miss at once).  The answers, in
    order: [(status, json or None)]."""
    path = client.path(ENDPOINT)
    start = threading.Barrier(SENDERS)

    def post(conn, d):
        body = d["body"].encode("utf-8")
        hdrs = [(k, url if v == "{url}" else v) for k, v in d["headers"]]
        for attempt in (0, 1):
            try:
                conn.putrequest("POST", path, skip_accept_encoding=True)
                for k, v in hdrs:
                    conn.putheader(k, v)
                conn.putheader("Content-Length", str(len(body)))
                conn.endheaders(body)
                r = conn.getresponse()
                data = r.read()
                if r.getheader("Connection", "").lower() == "close":
                    conn.close()
                try:
                    j = json.loads(data)
                except ValueError:
                    j = None
                return r.status, j
            except (http.client.HTTPException, ConnectionError):
                # The server closed the kept-alive connection: again, on
                # a new one (a refused request is never half-applied).
                conn.close()
                if attempt:
                    raise

    def worker(part):
        conn = http.client.HTTPConnection(client.host, client.port,
                                          timeout=60)
        try:
            conn.connect()
            start.wait(30)
            return [post(conn, d) for d in part]
        finally:
            conn.close()

    parts = [deliveries[i::SENDERS] for i in range(SENDERS)]
    with concurrent.futures.ThreadPoolExecutor(SENDERS) as ex:
        results = list(ex.map(worker, parts))
    # Back in the order of the deliveries.
    answers = [None] * len(deliveries)
    for i, res in enumerate(results):
        answers[i::SENDERS] = res
    return answers


def cmd_send(a):
    t = Tap(a.label)
    pki = a.pki
    key = rsa_key(os.path.join(pki, "sign.key"))
    other = rsa_key(os.path.join(pki, "other.key"))

    def pem(name):
        with open(os.path.join(pki, name), "rb") as f:
            return f.read()

    listed = "https://127.0.0.1:%d" % a.port
    www = {CERTS + "CERT-valid": pem("valid.pem"),
           CERTS + "CERT-chain": pem("chain.pem"),
           CERTS + "CERT-sandbox": pem("sandbox.pem"),
           CERTS + "CERT-expired": pem("expired.pem"),
           CERTS + "CERT-wrongname": pem("wrongname.pem"),
           CERTS + "CERT-otherca": pem("otherca.pem"),
           CERTS + "CERT-selfsigned": pem("selfsigned.pem"),
           CERTS + "CERT-offhost": pem("valid.pem"),
           CERTS + "CERT-offport": pem("valid.pem"),
           CERTS + "CERT-late": pem("valid.pem"),
           CERTS + "CERT-bulk": pem("valid.pem"),
           CERTS + "CERT-planted": pem("valid.pem"),
           "/v1/other/CERT-offpath": pem("valid.pem")}
    host = CertHost(pki, www, [a.port, a.port2])
    host.start()
    client = hookclient.Client(a.url)
    db = hookclient.Db(a.db)
    path = client.path(ENDPOINT)
    applied = []        # the event ids that must be stored, once each

    def post(body, headers):
        return client.request("POST", path, body, headers)

    def url(name, base=listed):
        return base + CERTS + name

    def ok200(what, r, eid, status="processed"):
        bad = expect(r, 200, {"status": status})
        k = r.json.get("key") if isinstance(r.json, dict) else None
        if not bad and not (isinstance(k, str) and eid in k):
            bad.append("key %r does not hold the event's id %s" % (k, eid))
        t.check(what, bad, r)

    def gets(what, path_, want):
        n = host.count(path_)
        t.check("%s: %s fetched %d time%s" % (what, path_, want,
                                               "" if want == 1 else "s"),
                [] if n == want else ["%d GETs" % n])

    try:
        # The valid delivery, and PayPal's retry of it.
        eid, body = new_event()
        h = sign(key, a.secret, body, url("CERT-valid"))
        ok200("valid delivery (signed as PayPal documents) -> 200 processed",
              post(body, h), eid)
        ok200("the same delivery again -> 200 already_processed",
              post(body, h), eid, "already_processed")
        applied.append(eid)
        gets("the valid certificate", CERTS + "CERT-valid", 1)

        eid, body = new_event()
        try:
            h = oncehook_sign(a, body, url("CERT-valid"))
            ok200("a delivery signed by \"oncehook sign --key --cert-url\" "
                  "-> 200 processed", post(body, h), eid)
            applied.append(eid)
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
            t.check("oncehook sign signs a PayPal delivery", [str(e)])

        eid, body = new_event()
        ok200("a certificate issued by an intermediate CA, served with it "
              "-> 200 processed",
              post(body, sign(key, a.secret, body, url("CERT-chain"))), eid)
        applied.append(eid)

        eid, body = new_event()
        ok200("a certificate issued to PayPal's sandbox's name -> 200 "
              "processed",
              post(body, sign(key, a.secret, body, url("CERT-sandbox"))),
              eid)
        applied.append(eid)

        # Refused: each a new event, nothing of it stored.
        refused = []

        def refuse(what, body, headers, status=401,
                   error="invalid_signature"):
            r = post(body, headers)
            t.check("%s -> %d %s" % (what, status, error),
                    expect(r, status, {"error": error}), r)
            refused.append(what)

        localhost = "https://localhost:%d" % a.port
        cases = [
            ("certificate URL on a host off the list (localhost)",
             url("CERT-offhost", localhost)),
            ("certificate URL naming the listed host as user info "
             "(listed@localhost)",
             url("CERT-offhost", "https://127.0.0.1:%d@localhost:%d"
                 % (a.port, a.port))),
            ("certificate URL on a port off the list",
             url("CERT-offport", "https://127.0.0.1:%d" % a.port2)),
            ("certificate URL outside /v1/notifications/certs/",
             listed + "/v1/other/CERT-offpath"),
            ("certificate URL over http", url("CERT-valid").replace(
                "https://", "http://")),
            ("certificate by another CA", url("CERT-otherca")),
            ("self-signed certificate", url("CERT-selfsigned")),
            ("expired certificate", url("CERT-expired")),
            ("certificate issued to another name", url("CERT-wrongname")),
        ]
        for what, u in cases:
            eid, body = new_event()
            refuse(what, body, sign(key, a.secret, body, u))
        eid, body = new_event()
        h = sign(key, a.secret, body, url("CERT-valid"))
        refuse("the body changed after signing (CRC-32)",
               body.replace(b"7.47", b"7.48"), h)
        eid, body = new_event()
        refuse("signed by another key",
               body, sign(other, a.secret, body, url("CERT-valid")))
        eid, body = new_event()
        refuse("PAYPAL-AUTH-ALGO SHA1withRSA (the signature SHA-256's)",
               body, with_header(sign(key, a.secret, body,
                                      url("CERT-valid")),
                                 "PAYPAL-AUTH-ALGO", "SHA1withRSA"))
        eid, body = new_event()
        refuse("signed for a webhook id not configured",
               body, sign(key, OTHER_WEBHOOK_ID, body, url("CERT-valid")))
        eid, body = new_event()
        refuse("no PAYPAL-CERT-URL", body,
               [(k, v) for k, v in sign(key, a.secret, body,
                                        url("CERT-valid"))
                if k != "PAYPAL-CERT-URL"])
        eid, body = new_event()
        refuse("signed 4 days ago", body,
               sign(key, a.secret, body, url("CERT-valid"),
                    int(time.time()) - STALE_S), 400, "stale_timestamp")
        # What the cache holds is checked as if just fetched: a
        # certificate put there (not chaining, another key) is fetched
        # again, and the delivery signed with its key refused.
        cache = a.db + "-certs"
        planted = url("CERT-planted")
        fn = os.path.join(cache, hashlib.sha256(
            planted.encode()).hexdigest() + ".pem")
        st = os.stat(cache)
        with open(fn, "wb") as f:
            f.write(pem("planted.pem"))
        os.chmod(fn, 0o600)
        os.chown(fn, st.st_uid, st.st_gid)
        eid, body = new_event()
        refuse("signed with the key of a certificate put in the cache",
               body, sign(other, a.secret, body, planted))
        gets("put in the cache, not trusted there", CERTS + "CERT-planted",
             1)
        for p in ("CERT-offhost", "CERT-offport"):
            gets("off the host list", CERTS + p, 0)
        gets("off the path", "/v1/other/CERT-offpath", 0)

        # The host down: 503 and Retry-After, nothing stored; back: 200.
        eid, body = new_event()
        h = sign(key, a.secret, body, url("CERT-late"))
        host.stop()
        r = post(body, h)
        bad = expect(r, 503, {"error": "certificate_unavailable"})
        ra = r.headers.get("retry-after", "")
        if not (ra.isdigit() and int(ra) > 0):
            bad.append("Retry-After: %r" % ra)
        t.check("the certificate host down -> 503 certificate_unavailable "
                "with Retry-After", bad, r)
        n = db.scalar("SELECT count(*) FROM events WHERE key LIKE ?",
                      ("%" + eid + "%",))
        t.check("the host down: nothing stored", [] if n == 0 else
                ["%d events" % n])
        host.start()
        ok200("the host back: the same delivery -> 200 processed",
              post(body, h), eid)
        applied.append(eid)
        gets("the host back", CERTS + "CERT-late", 1)

        eid, body = new_event()
        # PayPal never names a certificate it lacks: a forgery, 401,
        # not an outage that would show the endpoint failing.
        refuse("a certificate URL the host does not have (404)", body,
               sign(key, a.secret, body, url("CERT-missing")), 401,
               "invalid_signature")

        # Many events, one certificate: fetched once.
        with open(a.bulk, encoding="utf-8") as f:
            bulk = json.load(f)
        t0 = time.time()
        answers = send_bulk(client, bulk, url("CERT-bulk"))
        dt = time.time() - t0
        bad = ["event %d: %s %r" % (i, s, j) for i, (s, j) in
               enumerate(answers) if s != 200 or not isinstance(j, dict) or
               j.get("status") != "processed"]
        t.check("%d events (one certificate URL new to the deployment, "
                "%d connections at once) -> each 200 processed"
                % (len(bulk), SENDERS), bad[:5])
        print("# %d deliveries in %.1f s (%.0f/s)"
              % (len(bulk), dt, len(bulk) / dt if dt else 0))
        gets("%d events" % len(bulk), CERTS + "CERT-bulk", 1)
        applied += [d["id"] for d in bulk]
    finally:
        host.stop()

    # The database: the events applied once each, the refused none.
    rows = db.rows("SELECT key, status FROM events WHERE endpoint = ?",
                   (ENDPOINT,))
    effects = db.rows("SELECT key FROM scheme_effects WHERE endpoint = ?",
                      (ENDPOINT,))
    bad = []
    keys = {}
    for r in rows:
        m = re.search(r"WH-[0-9A-F]{17}-[0-9A-F]{15}", r["key"])
        keys[m.group(0) if m else r["key"]] = r
        if r["status"] != "processed":
            bad.append("event %s: status %s" % (r["key"], r["status"]))
    if sorted(keys) != sorted(applied) or len(rows) != len(applied):
        bad.append("%d events, want %d: %d not stored, %d not wanted"
                   % (len(rows), len(applied),
                      len(set(applied) - set(keys)),
                      len(set(keys) - set(applied))))
    per = {}
    for e in effects:
        per[e["key"]] = per.get(e["key"], 0) + 1
    twice = [k for k, c in per.items() if c != 1]
    if len(effects) != len(applied) or twice or \
            set(per) != {r["key"] for r in rows}:
        bad.append("%d effects for %d events (%d keys applied more than "
                   "once)" % (len(effects), len(applied), len(twice)))
    t.check("the database: %d events, each applied once; the %d refused "
            "deliveries none" % (len(applied), len(refused)), bad[:5])

    # The log says why each certificate was refused.
    try:
        with open(a.log, encoding="utf-8", errors="replace") as f:
            log = f.read()
    except OSError as e:
        log = ""
        print("# %s" % e)
    for why in ("certificate URL not on PayPal's hosts",
                "signing certificate not trusted (no chain to a known CA)",
                "signing certificate expired",
                "signing certificate not issued to PayPal",
                "PAYPAL-AUTH-ALGO is not SHA256withRSA"):
        t.check("the log says why=\"%s\"" % why,
                [] if ('why="%s"' % why) in log else ["not in %s" % a.log])
    for secret in ("PRIVATE KEY", a.secret):
        t.check("the log holds no %s" % ("private key" if secret ==
                                          "PRIVATE KEY" else "webhook id"),
                [] if secret not in log else ["found in %s" % a.log])

    # The cache: a directory 0700, a file 0600 per URL, named by its
    # SHA-256, holding what the host served.
    cache = a.db + "-certs"
    bad = []
    try:
        st = os.stat(cache)
        if not stat.S_ISDIR(st.st_mode) or stat.S_IMODE(st.st_mode) != 0o700:
            bad.append("%s: mode %o" % (cache, st.st_mode))
        want = {hashlib.sha256(url(n).encode()).hexdigest() + ".pem": n
                for n in ("CERT-valid", "CERT-chain", "CERT-sandbox",
                          "CERT-planted", "CERT-late", "CERT-bulk")}
        files = sorted(os.listdir(cache))
        if files != sorted(list(want) + ["fetch.lock"]):
            bad.append("files %s, want %s and fetch.lock"
                       % (files, sorted(want)))
        for fn in files:
            p = os.path.join(cache, fn)
            m = stat.S_IMODE(os.lstat(p).st_mode)
            if not stat.S_ISREG(os.lstat(p).st_mode) or m != 0o600:
                bad.append("%s: mode %o" % (fn, os.lstat(p).st_mode))
            elif fn in want:
                with open(p, "rb") as f:
                    if f.read() != www[CERTS + want[fn]]:
                        bad.append("%s: not what the host served" % fn)
    except OSError as e:
        bad.append(str(e))
    t.check("the certificate cache: <db>-certs 0700, a file 0600 per "
            "certificate URL accepted (named by its SHA-256) and its lock",
            bad)
    return 1 if t.failed else 0


def main(argv):
    import argparse
    p = argparse.ArgumentParser(prog="paypal.py")
    sub = p.add_subparsers(dest="cmd", required=True)
    c = sub.add_parser("conf")
    c.add_argument("format")
    c.add_argument("file")
    c.add_argument("actions")
    c.add_argument("--secret", required=True)
    c.add_argument("--hosts", required=True)
    c.add_argument("--ca", required=True)
    b = sub.add_parser("bulk")
    b.add_argument("--pki", required=True)
    b.add_argument("--secret", required=True)
    b.add_argument("--count", type=int, default=1000)
    b.add_argument("--out", required=True)
    d = sub.add_parser("send")
    for o in ("label", "url", "db", "pki", "secret", "log", "bin", "tmp",
              "bulk"):
        d.add_argument("--" + o, required=True)
    d.add_argument("--port", type=int, required=True)
    d.add_argument("--port2", type=int, required=True)
    a = p.parse_args(argv)
    if a.cmd == "conf":
        return cmd_conf(a)
    if a.cmd == "bulk":
        return cmd_bulk(a)
    return cmd_send(a)


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv[1:]))
    except (OSError, ValueError, KeyError) as e:
        print("# paypal.py: %s: %s" % (type(e).__name__, e))
        sys.exit(3)
