#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Instructions (or CPU) per new event in a steady process, for the
new-event path's records (docs/design/025, 027-029).

Runs "oncehook serve --workers 1 --no-work --no-deliver" (a worker, the
writer, the supervisor) under valgrind --tool=callgrind
--trace-children=yes, sends N1 new events one at a time over FastCGI,
stops it and sums every process's count; then the same with N2 events.
(Ir(N2) - Ir(N1)) / (N2 - N1) is the cost of one new event, start-up and
stop left out.  With --cpu, no valgrind: utime+stime of serve and its
children instead (the machine's load shows in it; instructions do not).

usage: tools/serve-instructions.py BIN [--scheme stripe|hmac-sha256]
           [--actions FILE] [--sync normal|full] [--n1 N] [--n2 N] [--cpu]
  --actions FILE  an actions file, and bodies that carry an order
                  (sql/actions/orders.sql records it and its outbox row);
                  default: one insert into a table of its own, and the
                  smallest bodies
"""

import argparse
import glob
import hashlib
import hmac
import os
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                "..", "tests", "servers"))
from oncetest import fcgiclient  # noqa: E402

SECRET = "whsec_bench"


def event(scheme, i, order):
    """Body and headers of new event i, as the scheme's sender signs it;
    order: a body that carries an order (else the smallest)."""
    if scheme == "stripe":
        t = str(int(time.time()))
        if order:
            body = ('{"id":"evt_%d","type":"payment_intent.succeeded",'
                    '"data":{"object":{"id":"pi_%d","amount":1999,'
                    '"currency":"eur","receipt_email":"a@example.com",'
                    '"metadata":{"order_id":"o%d"}}}}' % (i, i, i)).encode()
        else:
            body = ('{"id":"evt_%d","type":"payment_intent.succeeded",'
                    '"data":{"object":{"id":"pi_%d"}}}' % (i, i)).encode()
        sig = hmac.new(SECRET.encode(), t.encode() + b"." + body,
                       hashlib.sha256).hexdigest()
        return body, {"Stripe-Signature": "t=%s,v1=%s" % (t, sig)}
    if order:
        body = ('{"id":"evt_%d","type":"payment.success","metadata":'
                '{"orderId":"o%d"},"transaction":{"id":"tx%d","amount":100,'
                '"currency":"EUR"},"customer":{"customerEmail":'
                '"a@example.com"}}' % (i, i, i)).encode()
    else:
        body = ('{"eventId":"evt_%d","type":"order.paid","data":{"n":%d}}'
                % (i, i)).encode()
    sig = hmac.new(SECRET.encode(), body, hashlib.sha256).hexdigest()
    return body, {"X-Webhook-Signature": "sha256=" + sig}


def total(a, n):
    """Instructions (or CPU microseconds) of a serve that took n events."""
    d = tempfile.mkdtemp(prefix="oncehook-si-")
    try:
        actions = a.actions
        if actions is None:
            actions = d + "/a.sql"
            with open(actions, "w") as f:
                f.write("CREATE TABLE IF NOT EXISTS paid (k TEXT NOT NULL);\n"
                        "-- on: *\nINSERT INTO paid (k) VALUES (:key);\n")
        env = {"ONCEHOOK_SCHEME": a.scheme, "ONCEHOOK_SECRET": SECRET,
               "ONCEHOOK_ACTIONS": os.path.abspath(actions),
               "ONCEHOOK_DB": d + "/db.sqlite",
               "ONCEHOOK_SYNCHRONOUS": a.sync, "PATH": "/usr/bin:/bin"}
        subprocess.run([a.bin, "init"], env=env, capture_output=True,
                       check=True)
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        addr = "127.0.0.1:%d" % port
        vg = [] if a.cpu else ["valgrind", "--tool=callgrind",
                               "--trace-children=yes",
                               "--callgrind-out-file=" + d + "/cg.%p"]
        ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        p = subprocess.Popen(vg + [a.bin, "serve", "--listen", addr,
                                   "--workers", "1", "--no-work",
                                   "--no-deliver"], env=env,
                             stdout=subprocess.DEVNULL,
                             stderr=subprocess.DEVNULL)
        for _ in range(600):
            try:
                socket.create_connection(("127.0.0.1", port)).close()
                break
            except OSError:
                time.sleep(0.1)
        for i in range(n):
            body, h = event(a.scheme, 10000 + i, a.actions is not None)
            h["Content-Type"] = "application/json"
            r = fcgiclient.request(addr, "POST", "/hooks/x", body, h)
            if r.status != 200:
                p.kill()
                sys.exit("serve-instructions: event %d: %d %r"
                         % (i, r.status, r.body))
        p.send_signal(signal.SIGTERM)
        p.wait()
        ru1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        if a.cpu:
            return (ru1.ru_utime + ru1.ru_stime - ru0.ru_utime -
                    ru0.ru_stime) * 1e6
        tot = 0
        for f in glob.glob(d + "/cg.*"):
            with open(f) as fh:
                for line in fh:
                    if line.startswith(("summary:", "totals:")):
                        tot += int(line.split()[1])
                        break
        return tot
    finally:
        shutil.rmtree(d, ignore_errors=True)


def main():
    ap = argparse.ArgumentParser(usage=__doc__.split("usage: ")[1])
    ap.add_argument("bin")
    ap.add_argument("--scheme", default="stripe",
                    choices=("stripe", "hmac-sha256"))
    ap.add_argument("--actions")
    ap.add_argument("--sync", default="normal", choices=("normal", "full"))
    ap.add_argument("--n1", type=int, default=50)
    ap.add_argument("--n2", type=int, default=250)
    ap.add_argument("--cpu", action="store_true")
    a = ap.parse_args()
    if not a.cpu and shutil.which("valgrind") is None:
        sys.exit("serve-instructions: needs valgrind")
    t1, t2 = total(a, a.n1), total(a, a.n2)
    print("%s %s %s: %.1f %s per new event (N %d..%d)"
          % (a.bin, a.scheme, a.sync, (t2 - t1) / (a.n2 - a.n1),
             "us CPU" if a.cpu else "instructions", a.n1, a.n2))


if __name__ == "__main__":
    main()
