# SPDX-License-Identifier: MIT
"""A minimal FastCGI client, for the oncehook tests that talk to
"oncehook serve" without a web server in between (tests/serve.sh).

It plays the web server's part: one new connection per request, a
FCGI_BEGIN_REQUEST (responder, no keep-alive), the CGI variables as
FCGI_PARAMS, the body as FCGI_STDIN, then it reads FCGI_STDOUT until
FCGI_END_REQUEST and parses the CGI response ("Status:" and the other
headers, a blank line, the body).  The body can be sent in parts, with
pauses, to keep a request in flight.  Standard library only.

The protocol: https://fastcgi-archives.github.io/FastCGI_Specification.html
"""

import os
import socket
import struct
import sys
import time

from . import testkit

VERSION = 1
BEGIN_REQUEST, ABORT_REQUEST, END_REQUEST = 1, 2, 3
PARAMS, STDIN, STDOUT, STDERR = 4, 5, 6, 7
RESPONDER = 1
MAXREC = 65535


class Incomplete(Exception):
    """The connection ended before FCGI_END_REQUEST: what a web server
    reports as 502 Bad Gateway."""


class Response(testkit.Response):
    """status, headers (lower-cased names), body (bytes), json (or None),
    stderr (bytes the application sent on FCGI_STDERR)."""

    kind = "FCGI"

    def __init__(self, status, headers, body, stderr=b""):
        super().__init__(status, headers, body)
        self.stderr = stderr


def record(rtype, content=b"", rid=1):
    pad = (8 - len(content) % 8) % 8
    return struct.pack("!BBHHBB", VERSION, rtype, rid, len(content), pad,
                       0) + content + b"\0" * pad


def stream(rtype, data, rid=1):
    """data as records of type rtype, then the empty record that ends
    the stream."""
    out = b""
    for i in range(0, len(data), MAXREC):
        out += record(rtype, data[i:i + MAXREC], rid)
    return out + record(rtype, b"", rid)


def _len(n):
    return bytes([n]) if n < 128 else struct.pack("!I", n | 0x80000000)


def encode_params(params):
    out = b""
    for k, v in params.items():
        k = k.encode() if isinstance(k, str) else k
        v = v.encode() if isinstance(v, str) else v
        out += _len(len(k)) + _len(len(v)) + k + v
    return out


def parse_cgi(out):
    """Status, headers and body of a CGI response."""
    sep = out.find(b"\r\n\r\n")
    seplen = 4
    if sep < 0:
        sep = out.find(b"\n\n")
        seplen = 2
    if sep < 0:
        raise Incomplete("no end of headers in %r" % out[:200])
    headers = {}
    for line in out[:sep].decode("latin-1").splitlines():
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    status = 200
    if "status" in headers:
        status = int(headers["status"].split()[0])
    return status, headers, out[sep + seplen:]


def connect(addr, timeout=30):
    """addr: "HOST:PORT" or a unix socket path."""
    if addr.startswith("/"):
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.settimeout(timeout)
        s.connect(addr)
        return s
    host, port = addr.rsplit(":", 1)
    return socket.create_connection((host, int(port)), timeout)


def cgi_params(method, path, body, headers, script_name="/hooks",
               content_type="application/json"):
    """The variables a web server sets for path under script_name (nginx
    with fastcgi_split_path_info, Apache ScriptAlias); a query string
    after '?' is QUERY_STRING."""
    uri = path
    path, _, query = path.partition("?")
    p = {
        "GATEWAY_INTERFACE": "CGI/1.1",
        "SERVER_PROTOCOL": "HTTP/1.1",
        "SERVER_SOFTWARE": "oncehook-tests",
        "REQUEST_METHOD": method,
        "REQUEST_URI": uri,
        "SCRIPT_NAME": script_name,
        "PATH_INFO": path[len(script_name):] if
        path.startswith(script_name) else path,
        "QUERY_STRING": query,
        "REMOTE_ADDR": "127.0.0.1",
        "SERVER_NAME": "localhost",
        "SERVER_PORT": "80",
    }
    if method != "GET":
        p["CONTENT_TYPE"] = content_type
        p["CONTENT_LENGTH"] = str(len(body))
    for k, v in (headers or {}).items():
        p["HTTP_" + k.upper().replace("-", "_")] = v
    return p


class Request:
    """One request on its own connection, sent in steps so that a test
    can hold it in flight: begin() sends the parameters and the first
    part of the body; finish() sends the rest and reads the answer."""

    def __init__(self, addr, params, body, timeout=30):
        self.addr = addr
        self.params = params
        self.body = body
        self.timeout = timeout
        self.sock = None
        self.sent = 0
        self.pending = b""      # unsent parameters (begin(head=...))

    def begin(self, first=None, head=None):
        """Connect, send the parameters and first bytes of the body
        (all of it if first is None); with head, only the first head
        bytes of the request's opening and parameters records."""
        self.sock = connect(self.addr, self.timeout)
        data = record(BEGIN_REQUEST, struct.pack("!HB5x", RESPONDER, 0))
        data += stream(PARAMS, encode_params(self.params))
        if head is not None:
            self.sock.sendall(data[:head])
            self.pending = data[head:]
            return
        n = len(self.body) if first is None else first
        for i in range(0, n, MAXREC):
            data += record(STDIN, self.body[i:min(n, i + MAXREC)])
        self.sock.sendall(data)
        self.sent = n

    def local_port(self):
        return self.sock.getsockname()[1] if self.sock else None

    def finish(self):
        try:
            rest = self.body[self.sent:]
            self.sock.sendall(self.pending + (stream(STDIN, rest) if rest
                                              else record(STDIN, b"")))
            return self.read()
        finally:
            self.sock.close()

    def read(self):
        buf = b""
        out = b""
        err = b""
        while True:
            while len(buf) < 8 or len(buf) < 8 + struct.unpack(
                    "!H", buf[4:6])[0] + buf[6]:
                try:
                    chunk = self.sock.recv(65536)
                except ConnectionResetError as e:
                    raise Incomplete("connection reset: %s" % e)
                if not chunk:
                    raise Incomplete("connection closed after %d bytes "
                                     "of output" % len(out))
                buf += chunk
            _, rtype, _, clen, plen, _ = struct.unpack("!BBHHBB", buf[:8])
            content = buf[8:8 + clen]
            buf = buf[8 + clen + plen:]
            if rtype == STDOUT:
                out += content
            elif rtype == STDERR:
                err += content
            elif rtype == END_REQUEST:
                status, headers, body = parse_cgi(out)
                return Response(status, headers, body, err)


def request(addr, method, path, body=b"", headers=None, slow=None,
            timeout=30, **kw):
    """Send one request, return its Response; raises Incomplete (or
    OSError) where a web server would answer 502.  slow=(n, seconds):
    send n bytes of the body, wait, send the rest."""
    r = Request(addr, cgi_params(method, path, body, headers, **kw), body,
                timeout)
    if slow:
        r.begin(slow[0])
        time.sleep(slow[1])
    else:
        r.begin()
    return r.finish()
