# SPDX-License-Identifier: MIT
"""A fault proxy for the MariaDB/MySQL client/server protocol, for the
tests that cut oncehook's connection at the instant of a COMMIT
(tests/commitfault.sh).

It listens on 127.0.0.1, and relays each connection it accepts to the
server packet by packet (the protocol's framing: a 3-byte little-endian
length, a sequence id, the payload).  It reads what goes by only to
find the client's COMMITs:

- COM_QUERY (0x03) whose text is COMMIT (any case, comments and white
  space around it, "WORK" after it, a ";" at the end; what an
  executable comment /*! ... */ holds counts as text);
- COM_STMT_EXECUTE (0x17) of a statement prepared from such a text: the
  COM_STMT_PREPARE (0x16) is noted and its statement id read from the
  server's answer (an id of 0xffffffff, MariaDB's "the statement just
  prepared", counts too); COM_STMT_CLOSE forgets it.

A client's packet with sequence id 0 is a command: the connection
phase's packets have higher ids.  The answer to a command is the
server's next packet with sequence id 1 once the answers to the earlier
commands have begun (a COMMIT's answer is one OK or ERR packet).

Armed (arm(moment, nth)), it counts the COMMITs of every connection
from then on and, at the nth, cuts both sides of that connection (the
client's and the server's sockets closed), then disarms:

  before      the COMMIT is not sent on: the server never sees it, its
              transaction rolls back when it finds the client gone;
  unanswered  the COMMIT is sent on, the server's answer read (so the
              commit happened) and not passed on: the client cannot
              know whether it committed;
  answered    the answer is passed on, then the cut: the commit is
              known; the cut meets the client's next statement, or its
              idle connection.

The proxy speaks clear text only: the server's greeting is passed on
without its CLIENT_SSL and compression capability bits, so that a
client never asks for TLS or compression (a client configured to
require TLS then refuses the server: set ONCEHOOK_DB_TLS=off).  With
version, the greeting names that server version instead of the
server's own, as some proxies do (tests/mariadb.sh: a MariaDB reported
as MySQL 8.0).

Use it in a test program (FaultProxy(...).start(), arm(), stats()), or
run it:

  python3 myproxy.py --upstream 127.0.0.1:3306 [--listen 127.0.0.1:0]
      [--control PATH] [--arm MOMENT[:N]] [--version STRING]

which prints the port it listens on, then relays until killed; with
--control it takes lines on that unix socket: "arm MOMENT [N]",
"disarm", "stats" (each answered with one JSON line).

Standard library only.
"""

import argparse
import json
import os
import re
import select
import socket
import struct
import sys
import threading

MOMENTS = ("before", "unanswered", "answered")

COM_QUIT, COM_QUERY = 0x01, 0x03
COM_STMT_PREPARE, COM_STMT_EXECUTE = 0x16, 0x17
COM_STMT_SEND_LONG_DATA, COM_STMT_CLOSE = 0x18, 0x19
# Commands the server does not answer.
UNANSWERED = (COM_QUIT, COM_STMT_SEND_LONG_DATA, COM_STMT_CLOSE)

CLIENT_COMPRESS = 0x00000020
CLIENT_SSL = 0x00000800
CLIENT_ZSTD = 0x04000000        # MySQL's zstd compression

# MariaDB runs what an executable comment holds (/*! ... */, /*M! ... */,
# a version number first).
_EXECUTABLE = re.compile(rb"/\*M?!\d*(.*?)\*/", re.S)
_COMMENTS = re.compile(rb"/\*.*?\*/|(?:--[ \t\x00-\x1f\x7f]|#)[^\n]*"
                       rb"(?:\n|$)", re.S)
_COMMIT = re.compile(rb"\s*COMMIT(?:\s+WORK)?\s*;?\s*", re.I)


def is_commit(text):
    """Whether SQL text (bytes) is a COMMIT, comments aside."""
    text = _EXECUTABLE.sub(lambda m: b" " + m.group(1) + b" ", text)
    return _COMMIT.fullmatch(_COMMENTS.sub(b" ", text)) is not None


def strip_greeting(payload, version=None):
    """The server's greeting (protocol 10) without the TLS and
    compression capability bits, its server version version if given;
    other payloads as they are."""
    if not payload or payload[0] != 10:
        return payload
    end = payload.find(b"\0", 1)
    if end < 0:
        return payload
    if version is not None:
        payload = b"\x0a" + version.encode() + payload[end:]
        end = 1 + len(version.encode())
    lo = end + 1 + 4 + 8 + 1           # version, thread id, scramble, 0
    if len(payload) < lo + 2:
        return payload
    p = bytearray(payload)
    low = struct.unpack_from("<H", p, lo)[0]
    struct.pack_into("<H", p, lo, low & ~(CLIENT_SSL | CLIENT_COMPRESS))
    hi = lo + 2 + 1 + 2                # charset, status
    if len(p) >= hi + 2:
        high = struct.unpack_from("<H", p, hi)[0]
        struct.pack_into("<H", p, hi, high & ~(CLIENT_ZSTD >> 16))
    return bytes(p)


def _packets(buf):
    """Complete packets at the front of buf: [(seq, payload, raw)], and
    the rest."""
    out = []
    while len(buf) >= 4:
        n = buf[0] | buf[1] << 8 | buf[2] << 16
        if len(buf) < 4 + n:
            break
        out.append((buf[3], bytes(buf[4:4 + n]), bytes(buf[:4 + n])))
        buf = buf[4 + n:]
    return out, buf


def _frame(seq, payload):
    n = len(payload)
    return bytes((n & 0xff, n >> 8 & 0xff, n >> 16 & 0xff, seq)) + payload


class _Conn:
    """One client's connection and its server connection."""

    def __init__(self, proxy, no, client, server):
        self.proxy, self.no = proxy, no
        self.client, self.server = client, server
        self.greeted = False
        self.waiting = []       # answered commands: [kind, cut]
        self.commits = set()    # ids of statements prepared from COMMIT
        self.last_prepared = None

    def run(self):
        cbuf = sbuf = b""
        socks = [self.client, self.server]
        try:
            while True:
                r, _, _ = select.select(socks, [], [], 1.0)
                if self.proxy.stopping:
                    return
                for s in r:
                    data = s.recv(65536)
                    if not data:
                        return
                    if s is self.client:
                        pk, cbuf = _packets(cbuf + data)
                        for seq, payload, raw in pk:
                            if not self.from_client(seq, payload, raw):
                                return
                    else:
                        pk, sbuf = _packets(sbuf + data)
                        for seq, payload, raw in pk:
                            if not self.from_server(seq, payload, raw):
                                return
        except OSError:
            return
        finally:
            self.cut()

    def cut(self):
        for s in (self.client, self.server):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
            s.close()

    def from_client(self, seq, payload, raw):
        """Pass a client's packet on; False: cut now."""
        if seq == 0 and payload:
            cmd, kind = payload[0], None
            if cmd == COM_QUERY and is_commit(payload[1:]):
                kind = "commit"
            elif cmd == COM_STMT_PREPARE:
                kind = "prepare-commit" if is_commit(payload[1:]) else \
                    "prepare"
            elif cmd == COM_STMT_EXECUTE and len(payload) >= 5:
                sid = struct.unpack_from("<I", payload, 1)[0]
                if sid in self.commits or (sid == 0xffffffff and
                                           self.last_prepared == "commit"):
                    kind = "commit"
            elif cmd == COM_STMT_CLOSE and len(payload) >= 5:
                self.commits.discard(struct.unpack_from("<I", payload,
                                                        1)[0])
            if cmd == COM_STMT_PREPARE:
                self.last_prepared = "commit" if kind == \
                    "prepare-commit" else "other"
            cut = None
            if kind == "commit":
                cut = self.proxy._commit_seen(self.no)
                if cut == "before":
                    return False
            if cmd not in UNANSWERED:
                self.waiting.append([kind, cut])
        self.server.sendall(raw)
        return True

    def from_server(self, seq, payload, raw):
        """Pass a server's packet on; False: cut now."""
        if not self.greeted:
            self.greeted = True
            self.client.sendall(_frame(seq, strip_greeting(
                payload, self.proxy.version)))
            return True
        if seq == 1 and self.waiting:
            kind, cut = self.waiting.pop(0)
            if kind == "prepare-commit" and payload[:1] == b"\0" and \
                    len(payload) >= 5:
                self.commits.add(struct.unpack_from("<I", payload, 1)[0])
            if cut == "unanswered":
                return False
            if cut == "answered":
                self.client.sendall(raw)
                return False
        self.client.sendall(raw)
        return True


class FaultProxy:
    """The proxy: start() listens (on listen, a (host, port); port 0
    picks one) and relays to upstream; the port is self.port."""

    def __init__(self, upstream, listen=("127.0.0.1", 0), version=None):
        self.upstream = upstream
        self.version = version  # the greeting's, if not the server's
        self.lock = threading.Lock()
        self.cond = threading.Condition(self.lock)
        self.stopping = False
        self.armed = None       # (moment, nth)
        self.counted = 0        # COMMITs since armed
        self.commits = 0        # COMMITs in all
        self.connections = 0
        self.cuts = []          # (moment, connection number)
        self.ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.ls.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        self.ls.bind(listen)
        self.ls.listen(64)
        self.port = self.ls.getsockname()[1]

    def start(self):
        threading.Thread(target=self._accept, daemon=True).start()
        return self

    def stop(self):
        self.stopping = True
        try:
            self.ls.close()
        except OSError:
            pass

    def arm(self, moment, nth=1):
        """Cut at the nth COMMIT from now (of any connection), once."""
        if moment not in MOMENTS or nth < 1:
            raise ValueError("arm: %r %r" % (moment, nth))
        with self.lock:
            self.armed = (moment, nth)
            self.counted = 0

    def disarm(self):
        with self.lock:
            self.armed = None

    def stats(self):
        with self.lock:
            return {"commits": self.commits, "connections": self.connections,
                    "cuts": list(self.cuts),
                    "armed": list(self.armed) if self.armed else None}

    def wait_cut(self, n, timeout=10):
        """Wait until n cuts were made in all; whether they were."""
        with self.cond:
            return self.cond.wait_for(lambda: len(self.cuts) >= n, timeout)

    def _commit_seen(self, no):
        """A COMMIT of connection no: the moment to cut it at, or None."""
        with self.lock:
            self.commits += 1
            if self.armed is None:
                return None
            self.counted += 1
            moment, nth = self.armed
            if self.counted < nth:
                return None
            self.armed = None
            self.cuts.append((moment, no))
            self.cond.notify_all()
            return moment

    def _accept(self):
        while not self.stopping:
            try:
                c, _ = self.ls.accept()
            except OSError:
                return
            try:
                s = socket.create_connection(self.upstream, 10)
            except OSError:
                c.close()
                continue
            for x in (c, s):
                x.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                x.settimeout(None)
            with self.lock:
                self.connections += 1
                no = self.connections
            threading.Thread(target=_Conn(self, no, c, s).run,
                             daemon=True).start()


def _control(proxy, path):
    """Lines on a unix socket: arm MOMENT [N] | disarm | stats."""
    if os.path.exists(path):
        os.unlink(path)
    ls = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    ls.bind(path)
    ls.listen(8)
    while True:
        c, _ = ls.accept()
        with c, c.makefile("rw") as f:
            for line in f:
                w = line.split()
                try:
                    if w[:1] == ["arm"] and len(w) in (2, 3):
                        proxy.arm(w[1], int(w[2]) if len(w) == 3 else 1)
                    elif w != ["disarm"] and w != ["stats"]:
                        raise ValueError("want arm MOMENT [N], disarm or "
                                         "stats")
                    if w == ["disarm"]:
                        proxy.disarm()
                    ans = proxy.stats()
                except (ValueError, IndexError) as e:
                    ans = {"error": str(e)}
                f.write(json.dumps(ans) + "\n")
                f.flush()


def _addr(s):
    host, port = s.rsplit(":", 1)
    return host, int(port)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--upstream", required=True, type=_addr)
    ap.add_argument("--listen", default="127.0.0.1:0", type=_addr)
    ap.add_argument("--control")
    ap.add_argument("--arm", help="MOMENT[:N]")
    ap.add_argument("--version", help="the server version it reports")
    a = ap.parse_args()
    p = FaultProxy(a.upstream, a.listen, a.version)
    if a.arm:
        m, _, n = a.arm.partition(":")
        p.arm(m, int(n or 1))
    print(p.port, flush=True)
    p.start()
    if a.control:
        _control(p, a.control)
    else:
        threading.Event().wait()


if __name__ == "__main__":
    sys.exit(main())
