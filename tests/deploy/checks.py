# SPDX-License-Identifier: MIT
"""Checks of a deployment that the delivery scenarios (tests/e2e/
scenarios.py) do not make: what the web server's own configuration adds
in front of oncehook.  Run by tests/e2e-apache.sh and tests/e2e-nginx.sh.

    checks.py CHECK... --url URL --env FILE [--probe URL]

URL is where the endpoints live (http://127.0.0.1:PORT/hooks); FILE the
ONCEHOOK_* variables (NAME=value lines) the server gives oncehook; the
endpoint "shop" (hmac-sha256) is used.  The checks:

  routing      /hooks/shop/ (trailing slash) and /hooks/shop?x=1 reach
               endpoint shop; /hooks/nope is oncehook's 404
  early        404 (unknown endpoint) and 415 (text/plain), which oncehook
               answers before reading the body, arrive whole with a body
               of 256 KiB
  limits       a body of exactly ONCEHOOK_MAX_BODY bytes is processed (the
               server's limit is not smaller); one byte more is refused
               413 with oncehook's JSON; chunked, one byte more is
               refused; nothing stored for the refused ones
  htaccess     GET /hooks/.htaccess is 403 and shows no secret; GET
               /hooks/ lists nothing
  auth-absent, auth-present
               the CGI probe at --probe reports whether an Authorization
               header reached it (HTTP_AUTHORIZATION)
  unavailable  with the backend stopped: 503, JSON, Retry-After

Prints "ok - checks: ..." or "not ok - checks: ..." lines (the shell
numbers them), "#" lines saying what differed.  Exit status 0, 1 if a
check failed, 2 on a harness error.  Standard library only; requests are
signed here with Python's hmac.
"""

import argparse
import hashlib
import hmac
import http.client
import json
import os
import sqlite3
import sys
import time
import traceback
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "servers"))

from oncetest.testkit import Response as Resp, read_env  # noqa: E402

PAYLOAD_TOO_LARGE = "payload_too_large"


class Checker:
    def __init__(self, a):
        self.a = a
        u = urllib.parse.urlsplit(a.url)
        self.host = u.hostname
        self.port = u.port or 80
        self.base = u.path.rstrip("/")
        self.env = read_env(a.env)
        self.secret = self.env["ONCEHOOK_SHOP_SECRET"].split()[0]
        self.db = self.env["ONCEHOOK_DB"]
        self.maxbody = int(self.env.get("ONCEHOOK_MAX_BODY", "1048576"))
        self.failed = 0
        self.failures = []
        self.seq = 0

    # -- plumbing --------------------------------------------------------

    def request(self, method, path, body=None, headers=None,
                chunked=False):
        try:
            return self._request(method, path, body, headers, chunked)
        except (OSError, http.client.HTTPException) as e:
            # What a provider sees: no usable answer.
            return Resp(0, {}, ("no answer: %r" % e).encode())

    def _request(self, method, path, body, headers, chunked):
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            h = {"Connection": "close"}
            h.update(headers or {})
            if chunked:
                conn.putrequest(method, path)
                for k, v in h.items():
                    conn.putheader(k, v)
                conn.putheader("Transfer-Encoding", "chunked")
                conn.endheaders()
                try:
                    for i in range(0, len(body), 65536):
                        part = body[i:i + 65536]
                        conn.send(b"%x\r\n%s\r\n" % (len(part), part))
                    conn.send(b"0\r\n\r\n")
                except OSError:
                    pass        # refused early: read the answer
            else:
                conn.request(method, path, body=body, headers=h)
            r = conn.getresponse()
            return Resp(r.status, {k.lower(): v for k, v in
                                   r.getheaders()}, r.read())
        finally:
            conn.close()

    def post(self, path, body, **kw):
        sig = "sha256=" + hmac.new(self.secret.encode(), body,
                                   hashlib.sha256).hexdigest()
        return self.request("POST", path, body, {
            "Content-Type": "application/json",
            "X-Webhook-Signature": sig}, **kw)

    def key(self, tag):
        self.seq += 1
        return "deploy-%s-%d-%d" % (tag, int(time.time() * 1000), self.seq)

    def body(self, key, size=None):
        obj = {"eventId": key, "type": "webhook.ping", "pad": ""}
        b = json.dumps(obj, separators=(",", ":")).encode()
        if size is not None:
            obj["pad"] = "x" * (size - len(b))
            b = json.dumps(obj, separators=(",", ":")).encode()
            assert len(b) == size
        return b

    def rows(self, key):
        conn = sqlite3.connect(self.db, timeout=10)
        try:
            return conn.execute("SELECT count(*) FROM events WHERE "
                                "endpoint = 'shop' AND key = ?",
                                (key,)).fetchone()[0]
        finally:
            conn.close()

    def check(self, cond, what):
        if not cond:
            self.failures.append(what)
        return cond

    def json_error(self, r, status, error, what):
        ok = self.check(r.status == status, "%s: status %d, want %d: %r"
                        % (what, r.status, status, r))
        ct = (r.header("content-type") or "").split(";")[0].strip()
        ok &= self.check(ct == "application/json",
                         "%s: Content-Type %r" % (what, ct))
        ok &= self.check(isinstance(r.json, dict) and
                         (error is None or r.json.get("error") == error),
                         "%s: body %r, want error %r" % (what, r.body[:200],
                                                          error))
        return ok

    def run(self, name, fn):
        self.failures = []
        try:
            fn()
        except Exception:
            self.failures.append("exception:\n" + traceback.format_exc())
        if self.failures:
            self.failed += 1
            print("not ok - checks: %s" % name)
            for f in self.failures:
                for line in str(f).splitlines():
                    print("#   " + line)
        else:
            print("ok - checks: %s" % name)
        sys.stdout.flush()

    # -- checks ------------------------------------------------------------

    def routing(self):
        for suffix in ("/shop/", "/shop?x=1"):
            k = self.key("route")
            r = self.post(self.base + suffix, self.body(k))
            if self.check(r.status == 200 and isinstance(r.json, dict) and
                          r.json.get("status") == "processed",
                          "POST %s: %r, want 200 processed"
                          % (self.base + suffix, r)):
                self.check(self.rows(k) == 1, "%s: no event row for %s"
                           % (suffix, k))
        r = self.post(self.base + "/nope", self.body(self.key("route")))
        self.json_error(r, 404, "unknown_endpoint", "POST /nope")
        r = self.request("GET", self.base + "/stripe")
        self.json_error(r, 405, "method_not_allowed", "GET /stripe")

    def early(self):
        """Answers oncehook gives before reading the body (unknown
        endpoint, wrong content type), with a body of 256 KiB."""
        k = self.key("early")
        body = self.body(k, 256 * 1024)
        r = self.post(self.base + "/nope", body)
        self.json_error(r, 404, "unknown_endpoint", "256 KiB to /nope")
        sig = "sha256=" + hmac.new(self.secret.encode(), body,
                                   hashlib.sha256).hexdigest()
        r = self.request("POST", self.base + "/shop", body, {
            "Content-Type": "text/plain", "X-Webhook-Signature": sig})
        self.json_error(r, 415, "unsupported_media_type",
                        "256 KiB as text/plain")
        self.check(self.rows(k) == 0, "an event row for %s" % k)

    def limits(self):
        k = self.key("max")
        r = self.post(self.base + "/shop", self.body(k, self.maxbody))
        if self.check(r.status == 200 and isinstance(r.json, dict) and
                      r.json.get("status") == "processed",
                      "body of exactly %d bytes: %r, want 200 processed"
                      % (self.maxbody, r)):
            self.check(self.rows(k) == 1, "no event row for %s" % k)
        k = self.key("over")
        r = self.post(self.base + "/shop", self.body(k, self.maxbody + 1))
        self.json_error(r, 413, PAYLOAD_TOO_LARGE,
                        "body of %d bytes" % (self.maxbody + 1))
        self.check(self.rows(k) == 0, "an event row for %s" % k)
        k = self.key("chunked")
        r = self.post(self.base + "/shop", self.body(k, self.maxbody + 1),
                      chunked=True)
        print("#   chunked, %d bytes: %r" % (self.maxbody + 1, r))
        self.check(r.status >= 400, "chunked body of %d bytes: %r, want "
                   "refused" % (self.maxbody + 1, r))
        self.check(self.rows(k) == 0, "an event row for %s" % k)

    def htaccess(self):
        r = self.request("GET", self.base + "/.htaccess")
        self.check(r.status == 403, "GET /.htaccess: %r, want 403" % r)
        for name, v in self.env.items():
            if "SECRET" in name:
                for s in v.split():
                    self.check(s.encode() not in r.body,
                               "GET /.htaccess shows %s" % name)
        self.check(b"ONCEHOOK_" not in r.body,
                   "GET /.htaccess shows the configuration")
        r = self.request("GET", self.base + "/")
        self.check(r.status in (403, 404), "GET %s/: %r, want 403 or 404"
                   % (self.base, r))
        self.check(b"oncehook.cgi" not in r.body,
                   "GET %s/ lists the directory" % self.base)

    def auth(self, want):
        u = urllib.parse.urlsplit(self.a.probe)
        r = self.request("GET", u.path, headers={
            "Authorization": "Bearer deploy-probe-token"})
        got = r.body.decode("latin-1").strip()
        self.check(r.status == 200, "probe: %r" % r)
        self.check(got == want, "HTTP_AUTHORIZATION %s, want %s (%r)"
                   % (got, want, r))

    def unavailable(self):
        r = self.post(self.base + "/shop", self.body(self.key("down")))
        self.json_error(r, 503, None, "backend stopped")
        ra = r.header("retry-after") or ""
        self.check(ra.isdigit() and int(ra) > 0,
                   "backend stopped: Retry-After %r" % ra)


TITLES = {
    "routing": "/hooks/shop/ and /hooks/shop?x=1 reach endpoint shop; "
               "/hooks/nope 404 and GET 405 are oncehook's JSON",
    "early": "answers given before the body is read (404 unknown "
             "endpoint, 415) arrive whole with a 256 KiB body",
    "limits": "a body of exactly ONCEHOOK_MAX_BODY is processed; one byte "
              "more 413 with JSON payload_too_large; chunked one byte more "
              "refused; nothing stored",
    "htaccess": "the .htaccess is not served (403, no secret) and the "
                "directory is not listed",
    "auth-absent": "Authorization does not reach a CGI program by default",
    "auth-present": "Authorization reaches the CGI program as "
                    "HTTP_AUTHORIZATION",
    "unavailable": "backend stopped -> 503 with JSON and Retry-After, not "
                   "the server's 502 page",
}


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("checks", nargs="+", choices=sorted(TITLES))
    ap.add_argument("--url", required=True)
    ap.add_argument("--env", required=True)
    ap.add_argument("--probe")
    ap.add_argument("--label", default="")
    a = ap.parse_args()
    try:
        c = Checker(a)
    except (OSError, KeyError, ValueError) as e:
        print("# harness error: %s" % e)
        return 2
    for name in a.checks:
        fn = {"routing": c.routing, "limits": c.limits, "early": c.early,
              "htaccess": c.htaccess,
              "auth-absent": lambda: c.auth("absent"),
              "auth-present": lambda: c.auth("present"),
              "unavailable": c.unavailable}[name]
        title = TITLES[name]
        if a.label:
            title = "%s: %s" % (a.label, title)
        c.run(title, fn)
    return 1 if c.failed else 0


if __name__ == "__main__":
    sys.exit(main())
