# SPDX-License-Identifier: MIT
"""A webhook sender for the oncehook end-to-end tests.

It signs requests itself, with Python's hmac module, as the providers
document their schemes; it shares no code with oncehook:

- hmac-sha256: X-Webhook-Signature: sha256=<hex HMAC-SHA256(secret, body)>
- stripe: Stripe-Signature: t=<unix>,v1=<hex HMAC-SHA256(secret,
  "<t>.<body>")>, the whsec_ secret used as its UTF-8 bytes, prefix
  included (as Stripe's own libraries do).
- github: X-Hub-Signature-256: sha256=<hex HMAC-SHA256(secret, body)>.
- standard (Standard Webhooks) and svix: webhook-id, webhook-timestamp,
  webhook-signature: v1,<base64 HMAC-SHA256(key, "<id>.<t>.<body>")>
  (svix-id, svix-timestamp, svix-signature for Svix), the key being the
  base64 after "whsec_" decoded.
- shopify: X-Shopify-Hmac-Sha256: <base64 HMAC-SHA256(secret, body)>.
- slack: X-Slack-Request-Timestamp: <t>, X-Slack-Signature:
  v0=<hex HMAC-SHA256(secret, "v0:<t>:<body>")>.
- paddle: Paddle-Signature: ts=<t>;h1=<hex HMAC-SHA256(secret,
  "<t>:<body>")>.
- gitlab: X-Gitlab-Token: <the secret itself>.
- zoom: x-zm-request-timestamp: <t>, x-zm-signature:
  v0=<hex HMAC-SHA256(secret, "v0:<t>:<body>")>.
- razorpay: X-Razorpay-Signature: <hex HMAC-SHA256(secret, body)>.
- woocommerce: X-WC-Webhook-Signature: <base64 HMAC-SHA256(secret,
  body)>.
- mollie: X-Mollie-Signature: sha256=<hex HMAC-SHA256(secret, body)>.
- linear: Linear-Signature: <hex HMAC-SHA256(secret, body)>, the time
  being the body's webhookTimestamp (Unix milliseconds).
- webflow: x-webflow-timestamp: <Unix ms>, x-webflow-signature: <hex
  HMAC-SHA256(secret, "<ms>:<body>")>.
- vercel: x-vercel-signature: <hex HMAC-SHA1(secret, body)>.
- cashfree: x-webhook-timestamp: <Unix ms>, x-webhook-signature:
  <base64 HMAC-SHA256(secret, "<ms><body>")>.
- basic: Authorization: Basic <base64 of the secret, user:password>.
- mailgun: no header; the body gets a member "signature": {"timestamp":
  "<t>", "token": "<the key>", "signature": <hex HMAC-SHA256(secret,
  "<t><token>")>} put first (sign_body()).
- twilio: X-Twilio-Signature: <base64 HMAC-SHA1(auth token, URL + each
  form parameter's name and value, sorted by name then value, a
  repeated name and value once)>; the body a form.  A JSON body: the URL
  with ?bodySHA256=<hex SHA-256 of the body> appended, alone.
- square: x-square-hmacsha256-signature: <base64 HMAC-SHA256(key,
  notification URL + body)>.

SCHEMES holds, for each scheme, a sender: the payload such a provider
sends (with the event's key and type where the provider puts them in
the JSON) and the headers it adds (signature, timestamp, and the key
and type where the provider puts them in headers).

Standard library only.
"""

import base64
import hashlib
import hmac
import http.client
import json
import os
import sqlite3
import sys
import time
import urllib.parse

from . import testkit


def _mac(key, msg):
    return hmac.new(key, msg, hashlib.sha256)


def sign_hmac_sha256(secret, body):
    """The X-Webhook-Signature value for body (bytes) under secret (str)."""
    return "sha256=" + _mac(secret.encode("utf-8"), body).hexdigest()


def sign_stripe(secret, body, t=None):
    """The Stripe-Signature value for body (bytes) at Unix time t."""
    if t is None:
        t = int(time.time())
    signed = str(t).encode("ascii") + b"." + body
    return "t=%d,v1=%s" % (t, _mac(secret.encode("utf-8"),
                                   signed).hexdigest())


def sign_github(secret, body):
    """The X-Hub-Signature-256 value."""
    return "sha256=" + _mac(secret.encode("utf-8"), body).hexdigest()


def whsec_key(secret):
    """The key bytes of a Standard Webhooks / Svix secret: the base64
    after an optional "whsec_", padded or not."""
    s = secret[6:] if secret.startswith("whsec_") else secret
    return base64.b64decode(s + "=" * (-len(s) % 4), validate=True)


def sign_standard(secret, msg_id, t, body):
    """The webhook-signature (or svix-signature) value."""
    signed = ("%s.%d." % (msg_id, t)).encode("utf-8") + body
    return "v1," + base64.b64encode(_mac(whsec_key(secret),
                                         signed).digest()).decode("ascii")


def sign_shopify(secret, body):
    """The X-Shopify-Hmac-Sha256 value."""
    return base64.b64encode(_mac(secret.encode("utf-8"),
                                 body).digest()).decode("ascii")


def sign_slack(secret, t, body):
    """The X-Slack-Signature value for X-Slack-Request-Timestamp t."""
    signed = ("v0:%d:" % t).encode("ascii") + body
    return "v0=" + _mac(secret.encode("utf-8"), signed).hexdigest()


def sign_paddle(secret, t, body):
    """The Paddle-Signature value."""
    signed = ("%d:" % t).encode("ascii") + body
    return "ts=%d;h1=%s" % (t, _mac(secret.encode("utf-8"),
                                    signed).hexdigest())


def sign_zoom(secret, t, body):
    """The x-zm-signature value for x-zm-request-timestamp t."""
    signed = ("v0:%d:" % t).encode("ascii") + body
    return "v0=" + _mac(secret.encode("utf-8"), signed).hexdigest()


def zoom_encrypted_token(secret, plain_token):
    """What Zoom expects back for a url_validation's plainToken."""
    return _mac(secret.encode("utf-8"),
                plain_token.encode("utf-8")).hexdigest()


def sign_twilio(secret, url, body):
    """The X-Twilio-Signature value for the form body (bytes) posted to
    url, as Twilio's libraries compute it."""
    # Latin-1 both ways keeps every decoded byte as it is (UTF-8 or not)
    # and sorts names and values as bytes.
    pairs = urllib.parse.parse_qsl(body.decode("latin-1"),
                                   keep_blank_values=True,
                                   encoding="latin-1")
    signed = url.encode("utf-8") + "".join(
        k + v for k, v in sorted(set(pairs))).encode("latin-1")
    return base64.b64encode(hmac.new(secret.encode("utf-8"), signed,
                                     hashlib.sha1).digest()).decode()


def sign_square(secret, url, body):
    """The x-square-hmacsha256-signature value for body posted to url."""
    return base64.b64encode(_mac(secret.encode("utf-8"),
                                 url.encode("utf-8") + body).digest()
                            ).decode()


def dumps(obj):
    """A payload as a sender serialises it: compact JSON, as bytes."""
    return json.dumps(obj, separators=(",", ":")).encode("utf-8")


class Scheme:
    """A provider's sender.  body() is a payload carrying the event's key
    and type where this provider puts them in the JSON (variant makes
    another payload with the same key); headers() signs it at Unix time
    t and adds the key and type where this provider puts them in
    headers.  sig is the header that carries the signature, encoding
    "hex", "base64" or "token" (gitlab: the secret itself)."""

    name = None
    timestamped = False
    sig = None
    encoding = "hex"

    def body(self, key, typ, variant=0):
        raise NotImplementedError

    def headers(self, secret, body, key, typ, t=None):
        raise NotImplementedError

    def sign_body(self, secret, body, key, t=None):
        """The body as sent: the same bytes, except for a provider that
        signs inside it (mailgun)."""
        return body


class HmacSha256(Scheme):
    name, sig = "hmac-sha256", "X-Webhook-Signature"

    def body(self, key, typ, variant=0):
        return dumps({"eventId": key, "type": typ,
                      "data": {"n": variant}})

    def headers(self, secret, body, key, typ, t=None):
        return [("X-Webhook-Signature", sign_hmac_sha256(secret, body))]


class Stripe(Scheme):
    name, sig, timestamped = "stripe", "Stripe-Signature", True

    def body(self, key, typ, variant=0):
        return dumps({"id": key, "object": "event", "type": typ,
                      "api_version": "2024-06-20",
                      "data": {"object": {"id": "cus_%d" % variant,
                                          "object": "customer"}}})

    def headers(self, secret, body, key, typ, t=None):
        return [("Stripe-Signature", sign_stripe(secret, body, t))]


class GitHub(Scheme):
    name, sig = "github", "X-Hub-Signature-256"

    def body(self, key, typ, variant=0):
        # Real deliveries differ in content (here the head commit).
        return dumps({"zen": "Keep it logically awesome.",
                      "hook_id": 12345678 + variant,
                      "head_commit": {"id": key},
                      "repository": {"full_name": "octo/e2e"}})

    def headers(self, secret, body, key, typ, t=None):
        # X-GitHub-Hook-ID, which scopes the key (HOOKID:DELIVERY), is
        # left to the requests about it (tests/cases/github-hook-ids).
        return [("X-GitHub-Event", typ), ("X-GitHub-Delivery", key),
                ("User-Agent", "GitHub-Hookshot/e2e"),
                ("X-Hub-Signature-256", sign_github(secret, body))]


class Standard(Scheme):
    name, sig, timestamped, encoding = ("standard", "webhook-signature",
                                        True, "base64")
    prefix = "webhook"

    def body(self, key, typ, variant=0):
        return dumps({"type": typ, "timestamp": "2026-01-01T00:00:00Z",
                      "data": {"id": "obj_%d" % variant}})

    def headers(self, secret, body, key, typ, t=None):
        if t is None:
            t = int(time.time())
        p = self.prefix
        return [(p + "-id", key), (p + "-timestamp", str(t)),
                (p + "-signature", sign_standard(secret, key, t, body))]


class Svix(Standard):
    name, sig = "svix", "svix-signature"
    prefix = "svix"


class Shopify(Scheme):
    name, sig, encoding = "shopify", "X-Shopify-Hmac-Sha256", "base64"

    def body(self, key, typ, variant=0):
        return dumps({"id": 820982911946154508 + variant,
                      "admin_graphql_api_id": "gid://shopify/Order/" + key,
                      "email": "jon@example.com", "total_price": "254.98"})

    def headers(self, secret, body, key, typ, t=None):
        return [("X-Shopify-Topic", typ),
                ("X-Shopify-Shop-Domain", "e2e.myshopify.com"),
                ("X-Shopify-API-Version", "2025-01"),
                ("X-Shopify-Webhook-Id", key), ("X-Shopify-Event-Id", key),
                ("X-Shopify-Hmac-Sha256", sign_shopify(secret, body))]


class Slack(Scheme):
    name, sig, timestamped = "slack", "X-Slack-Signature", True

    def body(self, key, typ, variant=0):
        return dumps({"token": "unused", "team_id": "T061EG9R6",
                      "api_app_id": "A0PNCHHK2", "type": "event_callback",
                      "event": {"type": typ, "channel": "C2147483705",
                                "text": "hello %d" % variant,
                                "ts": "1355517523.000005"},
                      "event_id": key, "event_time": 1355517523})

    def headers(self, secret, body, key, typ, t=None):
        if t is None:
            t = int(time.time())
        return [("X-Slack-Request-Timestamp", str(t)),
                ("X-Slack-Signature", sign_slack(secret, t, body))]


class Paddle(Scheme):
    name, sig, timestamped = "paddle", "Paddle-Signature", True

    def body(self, key, typ, variant=0):
        return dumps({"event_id": key, "event_type": typ,
                      "occurred_at": "2026-01-01T00:00:00.000000Z",
                      "notification_id": "ntf_%d" % variant,
                      "data": {"id": "txn_%d" % variant,
                               "status": "completed"}})

    def headers(self, secret, body, key, typ, t=None):
        if t is None:
            t = int(time.time())
        return [("Paddle-Signature", sign_paddle(secret, t, body))]


class GitLab(Scheme):
    name, sig, encoding = "gitlab", "X-Gitlab-Token", "token"

    def body(self, key, typ, variant=0):
        return dumps({"object_kind": "push", "event_name": "push",
                      "checkout_sha": "%040x" % variant, "ref": key,
                      "project": {"path_with_namespace": "e2e/hooks"}})

    def headers(self, secret, body, key, typ, t=None):
        return [("X-Gitlab-Event", typ), ("X-Gitlab-Event-UUID", key),
                ("X-Gitlab-Instance", "https://gitlab.example.com"),
                ("X-Gitlab-Token", secret)]


class Zoom(Scheme):
    """Zoom's events carry no id: oncehook keys them by the hash of the
    body, so the key goes into the payload (the meeting's uuid) and a
    variant is another event."""
    name, sig, timestamped = "zoom", "x-zm-signature", True

    def body(self, key, typ, variant=0):
        return dumps({"event": typ, "event_ts": 1658940993000 + variant,
                      "payload": {"account_id": "D8cJuqWVQ623CI4Q8yQK0Q",
                                  "object": {"uuid": key,
                                             "id": "8969008401%d" % variant,
                                             "topic": "oncehook e2e"}}})

    def headers(self, secret, body, key, typ, t=None):
        if t is None:
            t = int(time.time())
        return [("x-zm-request-timestamp", str(t)),
                ("x-zm-signature", sign_zoom(secret, t, body))]


def _hex(secret, msg, algo=hashlib.sha256):
    return hmac.new(secret.encode("utf-8"), msg, algo).hexdigest()


def _b64(secret, msg):
    return base64.b64encode(_mac(secret.encode("utf-8"),
                                 msg).digest()).decode("ascii")


class Razorpay(Scheme):
    name, sig = "razorpay", "X-Razorpay-Signature"

    def body(self, key, typ, variant=0):
        return dumps({"entity": "event", "account_id": "acc_e2e",
                      "event": typ, "contains": ["payment"],
                      "payload": {"payment": {"entity": {
                          "id": "pay_%d" % variant, "amount": 5000}}},
                      "created_at": 1700000000})

    def headers(self, secret, body, key, typ, t=None):
        return [("X-Razorpay-Event-Id", key),
                ("X-Razorpay-Signature", _hex(secret, body))]


class WooCommerce(Scheme):
    name, sig, encoding = ("woocommerce", "X-WC-Webhook-Signature",
                           "base64")

    def body(self, key, typ, variant=0):
        return dumps({"id": 727 + variant, "status": "processing",
                      "total": "29.35", "currency": "EUR"})

    def headers(self, secret, body, key, typ, t=None):
        return [("X-WC-Webhook-Source", "https://shop.example.com/"),
                ("X-WC-Webhook-Topic", typ),
                ("X-WC-Webhook-Resource", typ.split(".")[0]),
                ("X-WC-Webhook-Event", typ.split(".")[-1]),
                ("X-WC-Webhook-ID", "1"),
                ("X-WC-Webhook-Delivery-ID", key),
                ("X-WC-Webhook-Signature", _b64(secret, body))]


class Mollie(Scheme):
    name, sig = "mollie", "X-Mollie-Signature"

    def body(self, key, typ, variant=0):
        return dumps({"resource": "event", "id": key, "type": typ,
                      "entityId": "pl_%d" % variant,
                      "createdAt": "2026-01-01T00:00:00+00:00"})

    def headers(self, secret, body, key, typ, t=None):
        return [("X-Mollie-Signature", "sha256=" + _hex(secret, body))]


class Linear(Scheme):
    """The time is in the body: body() stamps it now (t moves it)."""
    name, sig, timestamped = "linear", "Linear-Signature", True

    def body(self, key, typ, variant=0, t=None):
        ms = int((time.time() if t is None else t) * 1000)
        return dumps({"action": "create", "type": typ,
                      "data": {"id": "iss_%d" % variant},
                      "webhookTimestamp": ms})

    def headers(self, secret, body, key, typ, t=None):
        return [("Linear-Delivery", key), ("Linear-Event", typ),
                ("Linear-Signature", _hex(secret, body))]


class Webflow(Scheme):
    name, sig, timestamped = "webflow", "x-webflow-signature", True

    def body(self, key, typ, variant=0):
        return dumps({"triggerType": typ,
                      "payload": {"id": key, "n": variant}})

    def headers(self, secret, body, key, typ, t=None):
        ms = "%d" % int((time.time() if t is None else t) * 1000)
        return [("x-webflow-timestamp", ms),
                ("x-webflow-signature",
                 _hex(secret, ms.encode("ascii") + b":" + body))]


class Vercel(Scheme):
    name, sig = "vercel", "x-vercel-signature"

    def body(self, key, typ, variant=0):
        return dumps({"id": key, "type": typ, "createdAt": 1700000000000,
                      "payload": {"deployment": {"id": "dpl_%d" %
                                                 variant}}})

    def headers(self, secret, body, key, typ, t=None):
        return [("x-vercel-signature", _hex(secret, body, hashlib.sha1))]


class Cashfree(Scheme):
    name, sig, timestamped, encoding = ("cashfree", "x-webhook-signature",
                                        True, "base64")

    def body(self, key, typ, variant=0):
        return dumps({"data": {"order": {"order_id": key},
                               "payment": {"cf_payment_id": variant}},
                      "event_time": "2026-01-01T00:00:00+05:30",
                      "type": typ})

    def headers(self, secret, body, key, typ, t=None):
        ms = "%d" % int((time.time() if t is None else t) * 1000)
        return [("x-webhook-timestamp", ms), ("x-webhook-version",
                                               "2025-01-01"),
                ("x-webhook-signature",
                 _b64(secret, ms.encode("ascii") + body))]


class Basic(Scheme):
    """Postmark, Chargebee, Adyen: HTTP Basic auth, the secret being
    user:password."""
    name, sig, encoding = "basic", "Authorization", "token"

    def body(self, key, typ, variant=0):
        return dumps({"id": key, "event_type": typ,
                      "content": {"n": variant}})

    def headers(self, secret, body, key, typ, t=None):
        cred = base64.b64encode(secret.encode("utf-8")).decode("ascii")
        return [("Authorization", "Basic " + cred)]


def sign_mailgun(secret, t, token):
    return _mac(secret.encode("utf-8"),
                ("%d%s" % (t, token)).encode("utf-8")).hexdigest()


class Mailgun(Scheme):
    """The signature inside the body, over timestamp and token only."""
    name, sig, timestamped = "mailgun", None, True

    def body(self, key, typ, variant=0):
        return dumps({"event-data": {"id": "ev-%d" % variant,
                                     "event": typ or "delivered"}})

    def headers(self, secret, body, key, typ, t=None):
        return []

    def sign_body(self, secret, body, key, t=None):
        if t is None:
            t = int(time.time())
        obj = json.loads(body)
        out = {"signature": {"timestamp": str(t), "token": key,
                             "signature": sign_mailgun(secret, t, key)}}
        out.update(obj)
        return dumps(out)


class Twilio(Scheme):
    """Form bodies, the URL signed: headers() wants url=."""
    name, sig, encoding = "twilio", "X-Twilio-Signature", "base64"
    signs_url = True
    content_type = "application/x-www-form-urlencoded"

    def body(self, key, typ, variant=0):
        return urllib.parse.urlencode(
            [("MessageSid", "SM%032d" % variant), ("MessageStatus", typ),
             ("AccountSid", "AC" + "0" * 32), ("To", "+15005550006"),
             ("Body", "hello %d" % variant)]).encode("ascii")

    def headers(self, secret, body, key, typ, t=None, url=""):
        h = [("I-Twilio-Idempotency-Token", key)] if key else []
        if body.startswith(b"{"):
            # A JSON body: Twilio signs the URL with the body's SHA-256
            # appended as bodySHA256 (the request's query string).
            url += "%sbodySHA256=%s" % ("&" if "?" in url else "?",
                                        hashlib.sha256(body).hexdigest())
            body = b""
        return h + [("X-Twilio-Signature", sign_twilio(secret, url, body))]


class Square(Scheme):
    name, sig, encoding = ("square", "x-square-hmacsha256-signature",
                           "base64")
    signs_url = True

    def body(self, key, typ, variant=0):
        return dumps({"merchant_id": "MLEFBHHSJGVHD", "type": typ,
                      "event_id": key,
                      "created_at": "2026-01-01T00:00:00Z",
                      "data": {"type": "payment", "id": "p_%d" % variant}})

    def headers(self, secret, body, key, typ, t=None, url=""):
        return [("x-square-hmacsha256-signature",
                 sign_square(secret, url, body))]


SCHEMES = {s.name: s for s in (HmacSha256(), Stripe(), GitHub(), Standard(),
                               Svix(), Shopify(), Slack(), Paddle(),
                               GitLab(), Zoom(), Razorpay(),
                               WooCommerce(), Mollie(), Linear(),
                               Webflow(), Vercel(), Cashfree(), Basic(),
                               Mailgun(), Twilio(), Square())}


class Response(testkit.Response):
    """What came back: status, headers (lower-cased names), body, JSON."""

    def from_oncehook(self):
        """Whether this is oncehook's own answer, not a page of the web
        server in front of it: a JSON object with "Cache-Control:
        no-store", which oncehook sends with every answer (src/front/resp.c)
        and the shipped examples' JSON error pages (Apache's
        ErrorDocument, nginx's error_page) do not."""
        cc = (self.header("cache-control") or "").strip().lower()
        return isinstance(self.json, dict) and cc == "no-store"

class Client:
    """One new connection per request, as a provider's retries come.
    Paths are relative to the base URL's path: path("stripe") is
    /hooks/stripe for http://127.0.0.1:8080/hooks."""

    def __init__(self, base_url, port=None, timeout=20):
        if port is not None:            # the older form: Client(host, port)
            base_url = "http://%s:%d" % (base_url, port)
        u = urllib.parse.urlsplit(base_url)
        if u.scheme != "http" or not u.hostname:
            raise ValueError("want a base URL http://HOST:PORT/PATH, got %r"
                             % base_url)
        self.host = u.hostname
        self.port = u.port or 80
        self.prefix = u.path.rstrip("/")
        self.timeout = timeout

    def path(self, endpoint):
        return "%s/%s" % (self.prefix, endpoint)

    def request(self, method, path, body=b"", headers=None):
        """headers: a dict or a list of (name, value); a str value is
        sent as Latin-1, as http.client does, bytes as they are."""
        conn = http.client.HTTPConnection(self.host, self.port,
                                          timeout=self.timeout)
        try:
            hdrs = [("Connection", "close")]
            if isinstance(headers, dict):
                headers = list(headers.items())
            hdrs += headers or []
            conn.putrequest(method, path, skip_accept_encoding=True)
            for k, v in hdrs:
                conn.putheader(k, v)
            if method != "GET":
                conn.putheader("Content-Length", str(len(body)))
            conn.endheaders(body if method != "GET" else None)
            r = conn.getresponse()
            data = r.read()
            return Response(r.status, {k.lower(): v for k, v in
                                       r.getheaders()}, data)
        finally:
            conn.close()

    def post(self, path, body, headers=None,
             content_type="application/json"):
        h = [("Content-Type", content_type)]
        if isinstance(headers, dict):
            headers = list(headers.items())
        h += headers or []
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
