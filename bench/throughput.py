#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""Throughput of new events under concurrent senders.

usage: throughput.py URL SECRET [SENDERS] [PER_SENDER]

SENDERS threads (default 8) each send PER_SENDER (default 100) new,
distinct signed hmac-sha256 events one after another on new connections.
Prints requests per second and the latency median and 99th percentile
in milliseconds.  Every claim is a write transaction; SQLite serialises
them, so this measures the write path under contention (the baseline
for group commit).
"""

import os
import statistics
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(__file__))
import latency  # noqa: E402  (deliver, payload, hookclient)


def main():
    url, secret = sys.argv[1], sys.argv[2]
    senders = int(sys.argv[3]) if len(sys.argv) > 3 else 8
    per = int(sys.argv[4]) if len(sys.argv) > 4 else 100
    tag = "%x" % int(time.time() * 1000)
    times, errors = [], []
    lock = threading.Lock()

    def sender(s):
        for i in range(per):
            b = latency.payload(s * per + i, tag)
            ms, st = latency.deliver(
                url, b, latency.hookclient.sign_hmac_sha256(secret, b))
            with lock:
                (times if st == 200 else errors).append(ms if st == 200
                                                        else st)

    t0 = time.perf_counter()
    th = [threading.Thread(target=sender, args=(s,)) for s in range(senders)]
    for t in th:
        t.start()
    for t in th:
        t.join()
    wall = time.perf_counter() - t0
    times.sort()
    print("senders %d, events %d, non-200 %d: %.0f req/s, median %.2f ms, "
          "p99 %.2f ms" % (senders, len(times), len(errors),
                           len(times) / wall, statistics.median(times),
                           times[int(len(times) * 0.99) - 1]))


if __name__ == "__main__":
    main()
