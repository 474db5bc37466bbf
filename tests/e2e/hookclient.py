"""A webhook sender for the oncehook end-to-end tests.

It signs requests itself, with Python's hmac module, as the providers
document their schemes; it shares no code with oncehook:

- hmac-sha256: X-Webhook-Signature: sha256=<hex HMAC-SHA256(secret, body)>
- stripe: Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret,
  "<t>.<body>")>, the whsec_ secret used as its UTF-8 bytes, prefix
  included (as Stripe's own libraries do).

Standard library only.
"""

import hashlib
import hmac
import http.client
import json
import sqlite3
import time


def sign_hmac_sha256(secret, body):
    """The X-Webhook-Signature value for body (bytes) under secret (str)."""
    mac = hmac.new(secret.encode("utf-8"), body, hashlib.sha256)
    return "sha256=" + mac.hexdigest()


def sign_stripe(secret, body, t=None):
    """The Stripe-Signature value for body (bytes) at Unix time t."""
    if t is None:
        t = int(time.time())
    signed = str(t).encode("ascii") + b"." + body
    mac = hmac.new(secret.encode("utf-8"), signed, hashlib.sha256)
    return "t=%d,v1=%s" % (t, mac.hexdigest())


def dumps(obj):
    """A payload as a sender serialises it: compact JSON, as bytes."""
    return json.dumps(obj, separators=(",", ":")).encode("utf-8")


class Response:
    """What came back: status, headers (lower-cased names), body, JSON."""

    def __init__(self, status, headers, body):
        self.status = status
        self.headers = headers
        self.body = body
        try:
            self.json = json.loads(body.decode("utf-8"))
        except (ValueError, UnicodeDecodeError):
            self.json = None

    def header(self, name):
        return self.headers.get(name.lower())

    def __repr__(self):
        return "HTTP %d %s %r" % (self.status, self.headers.get(
            "content-type"), self.body[:300])


class Client:
    """One new connection per request, as a provider's retries come."""

    def __init__(self, host, port, timeout=20):
        self.host = host
        self.port = port
        self.timeout = timeout

    def request(self, method, path, body=b"", headers=None):
        conn = http.client.HTTPConnection(self.host, self.port,
                                          timeout=self.timeout)
        try:
            hdrs = {"Connection": "close"}
            hdrs.update(headers or {})
            if method == "GET":
                conn.request(method, path, headers=hdrs)
            else:
                conn.request(method, path, body=body, headers=hdrs)
            r = conn.getresponse()
            data = r.read()
            return Response(r.status, {k.lower(): v for k, v in
                                       r.getheaders()}, data)
        finally:
            conn.close()

    def post(self, path, body, headers=None,
             content_type="application/json"):
        h = {"Content-Type": content_type}
        h.update(headers or {})
        return self.request("POST", path, body, h)

    def post_hmac(self, path, secret, body, headers=None, **kw):
        h = {"X-Webhook-Signature": sign_hmac_sha256(secret, body)}
        h.update(headers or {})
        return self.post(path, body, h, **kw)

    def post_stripe(self, path, secret, body, t=None, headers=None, **kw):
        h = {"Stripe-Signature": sign_stripe(secret, body, t)}
        h.update(headers or {})
        return self.post(path, body, h, **kw)


class Db:
    """Reads (and, for the scenarios that need it, writes) the database
    file directly with Python's sqlite3, one connection per call."""

    def __init__(self, path):
        self.path = path

    def connect(self, timeout=10):
        conn = sqlite3.connect(self.path, timeout=timeout,
                               isolation_level=None)
        conn.row_factory = sqlite3.Row
        return conn

    def rows(self, sql, args=()):
        conn = self.connect()
        try:
            return [dict(r) for r in conn.execute(sql, args).fetchall()]
        finally:
            conn.close()

    def one(self, sql, args=()):
        r = self.rows(sql, args)
        return r[0] if r else None

    def scalar(self, sql, args=()):
        conn = self.connect()
        try:
            r = conn.execute(sql, args).fetchone()
            return r[0] if r else None
        finally:
            conn.close()

    def execute(self, sql):
        conn = self.connect()
        try:
            conn.executescript(sql)
        finally:
            conn.close()
