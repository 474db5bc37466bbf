# SPDX-License-Identifier: MIT
"""The basic (HTTP Basic auth) and mailgun schemes through a real web
server.

Run by tests/e2e-lighttpd.sh and tests/e2e-nginx.sh against a running
server whose oncehook has a "postmark" endpoint of the basic scheme and
a "mailgun" endpoint of the mailgun scheme.  Prints TAP lines "ok - ..."
/ "not ok - ..." (the caller numbers them).

  basic_mailgun.py LABEL URL DB PAIR KEY LOG...

Deliveries signed as the providers sign (oncetest.hookclient) are
processed once; a retry is already_processed, a Mailgun retry signed
anew (another token, the same event data) too, and the first token with
other event data is 422 key_conflict; a wrong password or key, no
Authorization and a stale Mailgun timestamp are refused with nothing
stored; neither secret is in the logs (LOG..., where oncehook's stderr
goes).
"""

import os
import sys
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "servers"))

from oncetest import hookclient  # noqa: E402

label, url, db, pair, key = sys.argv[1:6]
logs = sys.argv[6:]
http = hookclient.Client(url)
failed = 0


def stored(endpoint, k):
    return hookclient.Db(db).scalar(
        "SELECT count(*) FROM events WHERE endpoint = ? AND key = ?",
        (endpoint, k))


def check(ok, what, r):
    global failed
    print("%s - %s: %s" % ("ok" if ok else "not ok", label, what))
    if not ok:
        failed += 1
        print("#   got %r" % (r,))


def answer(r):
    j = r.json if isinstance(r.json, dict) else {}
    return r.status, j.get("status") or j.get("error")


basic = hookclient.SCHEMES["basic"]
body = basic.body("ev_e2e_1", "subscription_created")
r = http.post(http.path("postmark"), body, basic.headers(pair, body, "", ""))
check(answer(r) == (200, "processed") and stored("postmark", "ev_e2e_1") == 1,
      "basic: processed", r)
r = http.post(http.path("postmark"), body, basic.headers(pair, body, "", ""))
check(answer(r) == (200, "already_processed"),
      "basic: its retry already_processed", r)
body2 = basic.body("ev_e2e_2", "subscription_created")
r = http.post(http.path("postmark"), body2,
              basic.headers(pair + "x", body2, "", ""))
check(answer(r) == (401, "invalid_signature"), "basic: wrong password 401", r)
r = http.post(http.path("postmark"), body2, [])
check(answer(r) == (401, "invalid_signature") and
      stored("postmark", "ev_e2e_2") == 0,
      "basic: no Authorization 401, nothing stored", r)

mg = hookclient.SCHEMES["mailgun"]


def send(token, data, k=key, t=None):
    return http.post(http.path("mailgun"), mg.sign_body(k, data, token, t))


ev = mg.body("", "delivered", 1)
r = send("e2e-tok-1", ev)
check(answer(r) == (200, "processed") and stored("mailgun", "e2e-tok-1") == 1,
      "mailgun: processed, keyed by its token", r)
r = send("e2e-tok-1", ev)
check(answer(r) == (200, "already_processed"),
      "mailgun: its retry already_processed", r)
r = send("e2e-tok-2", ev)
check(answer(r) == (200, "already_processed") and
      stored("mailgun", "e2e-tok-2") == 0,
      "mailgun: its retry signed anew (another token) already_processed", r)
r = send("e2e-tok-1", mg.body("", "failed", 2))
check(answer(r) == (422, "key_conflict"),
      "mailgun: the first token with other event data 422 key_conflict", r)
r = send("e2e-tok-3", mg.body("", "opened", 3), k="key-not-this-one-0123456")
check(answer(r) == (401, "invalid_signature"), "mailgun: another key 401", r)
r = send("e2e-tok-3", mg.body("", "opened", 3), t=int(time.time()) - 40000)
check(answer(r) == (400, "stale_timestamp") and
      stored("mailgun", "e2e-tok-3") == 0,
      "mailgun: 40000 s old 400 stale_timestamp, nothing stored", r)
text = ""
for log in logs:
    if os.path.exists(log):
        with open(log, encoding="utf-8", errors="replace") as f:
            text += f.read()
check(logs != [] and pair.split(":", 1)[1] not in text and key not in text,
      "basic and mailgun: no secret in the log", "")
sys.exit(1 if failed else 0)
