#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Pre-signed Stripe-like events for bench/wrk.lua (wrk's Lua has no HMAC).

usage: pool.py SECRET N DIR [SCHEME]

SCHEME stripe (the default) or hmac-sha256.  Writes into DIR:
  pool.tmpl  the 1 KB event body (payment_intent.succeeded, with
             data.object.metadata.order_id) as one line, with @ID@ where
             each event's id goes (the event id evt_@ID@, the payment
             pi_@ID@ and the order ord_@ID@); every id is 16 hex digits,
             so every body has the same length;
  pool.ts    the Unix time all signatures were made at;
  pool.ids   N lines "ID SIG", SIG the hex of
             HMAC-SHA256(SECRET, ts + "." + body): Stripe's v1; under
             hmac-sha256, HMAC-SHA256(SECRET, body);
  pool.scheme  the scheme.
The request is then Stripe-Signature: t=<ts>,v1=<SIG>, or
X-Webhook-Signature: sha256=<SIG> (bench/wrk.lua).
"""

import hashlib
import hmac
import os
import sys
import time

# A PaymentIntent event as Stripe sends one, trimmed and padded to 1 KB.
TEMPLATE = (
    '{"id":"evt_@ID@","object":"event","api_version":"2024-06-20",'
    '"created":@TS@,"type":"payment_intent.succeeded","livemode":false,'
    '"pending_webhooks":1,"request":{"id":null,"idempotency_key":null},'
    '"data":{"object":{"id":"pi_@ID@","object":"payment_intent",'
    '"amount":2000,"amount_capturable":0,"amount_received":2000,'
    '"capture_method":"automatic","confirmation_method":"automatic",'
    '"currency":"eur","customer":null,"description":"Order from the shop",'
    '"latest_charge":"ch_3PQ2Xy2eZvKYlo2C0f7sZk1H",'
    '"metadata":{"order_id":"ord_@ID@"},"payment_method":'
    '"pm_1PQ2Xy2eZvKYlo2CvH8V2mHk","payment_method_types":["card"],'
    '"receipt_email":"jenny.rosen@example.com","status":"succeeded",'
    '"shipping":{"name":"Jenny Rosen","address":{"line1":"510 Townsend St",'
    '"city":"San Francisco","postal_code":"94103","country":"US"}},'
    '"statement_descriptor":null,"transfer_data":null}}}'
)


def main():
    if len(sys.argv) not in (4, 5) or \
            sys.argv[4:] not in ([], ["stripe"], ["hmac-sha256"]):
        sys.exit(__doc__.strip().splitlines()[2])
    secret, n, out = sys.argv[1].encode(), int(sys.argv[2]), sys.argv[3]
    scheme = (sys.argv[4:] or ["stripe"])[0]
    ts = int(time.time())
    tmpl = TEMPLATE.replace("@TS@", str(ts))
    pad = 1024 - len(tmpl.replace("@ID@", "0" * 16))
    if pad > 0:
        tmpl = tmpl.replace('"statement_descriptor":null',
                            '"statement_descriptor":null,"x":"%s"'
                            % ("p" * max(pad - 7, 0)), 1)
    parts = tmpl.split("@ID@")
    base = hmac.new(secret, digestmod=hashlib.sha256)
    prefix = ("%d." % ts).encode() if scheme == "stripe" else b""
    os.makedirs(out, exist_ok=True)
    with open(os.path.join(out, "pool.tmpl"), "w") as f:
        f.write(tmpl + "\n")
    with open(os.path.join(out, "pool.ids.tmp"), "w") as f:
        lines = []
        start = int(time.time() * 1000) & 0xffffffff
        for i in range(n):
            ident = "%08x%08x" % (start, i)
            h = base.copy()
            h.update(prefix)
            h.update(ident.join(parts).encode())
            lines.append("%s %s\n" % (ident, h.hexdigest()))
            if len(lines) == 4096:
                f.writelines(lines)
                lines = []
        f.writelines(lines)
    os.replace(os.path.join(out, "pool.ids.tmp"),
               os.path.join(out, "pool.ids"))
    with open(os.path.join(out, "pool.scheme"), "w") as f:
        f.write(scheme + "\n")
    with open(os.path.join(out, "pool.ts"), "w") as f:
        f.write("%d\n" % ts)


if __name__ == "__main__":
    main()
