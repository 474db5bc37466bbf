# SPDX-License-Identifier: MIT
"""What the Python test programs share (tests/e2e/, tests/deploy/,
tests/cases/, bench/).

- read_env(path): the NAME=value lines a test writes for a server;
- children_of(pid): the live children of a process, from /proc;
- Response: an answer (status, headers with lower-cased names, body,
  the body as JSON or None), whatever carried it (HTTP or FastCGI).

Standard library only.  The programs find the package with
sys.path.insert(0, <tests>/servers), then "from oncetest import ...".
"""

import json
import os
import signal


def read_env(path):
    """The NAME=value lines of a file, as a dict ("#" lines skipped)."""
    env = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if line and not line.startswith("#") and "=" in line:
                k, v = line.split("=", 1)
                env[k] = v
    return env


def children_of(pid):
    """PIDs whose parent is pid, zombies left out, sorted."""
    out = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
        except OSError:
            continue
        # pid (comm) state ppid ...: comm may hold spaces.
        fields = st[st.rfind(")") + 2:].split()
        if len(fields) > 1 and fields[1] == str(pid) and fields[0] != "Z":
            out.append(int(d))
    return sorted(out)


class Response:
    """status, headers (lower-cased names), body (bytes), json (or None)."""

    kind = "HTTP"

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
        return "%s %d %r %r" % (self.kind, self.status, self.headers.get(
            "content-type"), self.body[:300])


def sigkill(pid):
    """SIGKILL to pid: True, or False if it had ended already."""
    try:
        os.kill(pid, signal.SIGKILL)
        return True
    except ProcessLookupError:
        return False


def comm(pid):
    """A process's name (/proc/PID/comm), or None if it is gone."""
    try:
        with open("/proc/%d/comm" % pid) as f:
            return f.read().strip()
    except OSError:
        return None
