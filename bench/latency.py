#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Time signed deliveries to a running oncehook, one at a time.

usage: latency.py URL SECRET [N]

URL is an hmac-sha256 endpoint (e.g. http://127.0.0.1:8080/hooks/shop).
Sends N new events (each a claim and an orders write, one transaction),
N retries of one known event (answered from a read), and N forged
requests (refused before the database), each on a new connection as a
provider would, and prints the median, 90th percentile and mean of each
kind in milliseconds, and the ratios to a new event.  The client signs
with the test suite's independent signer (tests/servers/oncetest/hookclient.py).
"""

import http.client
import os
import statistics
import sys
import time
import urllib.parse

sys.path.insert(0, os.path.join(os.path.dirname(__file__), "..", "tests",
                                "servers"))
from oncetest import hookclient  # noqa: E402


def deliver(url, body, signature):
    u = urllib.parse.urlsplit(url)
    t0 = time.perf_counter()
    c = http.client.HTTPConnection(u.hostname, u.port, timeout=30)
    c.request("POST", u.path, body, {
        "Content-Type": "application/json",
        "X-Webhook-Signature": signature,
    })
    r = c.getresponse()
    r.read()
    c.close()
    return (time.perf_counter() - t0) * 1000.0, r.status


def payload(i, tag):
    return hookclient.dumps({
        "eventId": "evt_bench_%s_%d" % (tag, i),
        "type": "payment.success",
        "metadata": {"orderId": "bench-%s-%d" % (tag, i)},
        "transaction": {"id": "tx_%d" % i, "amount": 10, "currency": "EUR"},
    })


def main():
    url, secret = sys.argv[1], sys.argv[2]
    n = int(sys.argv[3]) if len(sys.argv) > 3 else 200
    tag = "%x" % int(time.time() * 1000)
    kinds = {}
    times = []
    for i in range(n):
        b = payload(i, tag)
        ms, st = deliver(url, b, hookclient.sign_hmac_sha256(secret, b))
        assert st == 200, st
        times.append(ms)
    kinds["new event"] = times
    b = payload(0, tag)
    sig = hookclient.sign_hmac_sha256(secret, b)
    times = []
    for _ in range(n):
        ms, st = deliver(url, b, sig)
        assert st == 200, st
        times.append(ms)
    kinds["retry"] = times
    times = []
    for _ in range(n):
        ms, st = deliver(url, b, "sha256=" + "0" * 64)
        assert st == 401, st
        times.append(ms)
    kinds["forged"] = times

    base = statistics.median(kinds["new event"])
    print("%-10s %8s %8s %8s %8s" % ("kind", "median", "p90", "mean",
                                     "ratio"))
    for k, v in kinds.items():
        v = sorted(v)
        med = statistics.median(v)
        print("%-10s %8.2f %8.2f %8.2f %8.2f" % (
            k, med, v[int(len(v) * 0.9)], statistics.mean(v), med / base))


if __name__ == "__main__":
    main()
