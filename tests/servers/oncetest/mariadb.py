# SPDX-License-Identifier: MIT
"""A MariaDB server of the tests', read and written with the mariadb
command-line client (tests/e2e/mariadb_scenarios.py, tests/cases/run.py).
Standard library only."""

import shutil
import subprocess


def q(v):
    """An SQL literal."""
    if v is None:
        return "NULL"
    if isinstance(v, int):
        return str(v)
    return "'" + str(v).replace("\\", "\\\\").replace("'", "''") + "'"


def unescape(s):
    if s == "NULL":
        return None
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            out.append({"n": "\n", "t": "\t", "0": "\0", "\\": "\\"}
                       .get(n, n))
            i += 2
        else:
            out.append(c)
            i += 1
    return "".join(out)


class My:
    """Queries with the mariadb client over the server's unix socket: as
    root, or as user with password."""

    def __init__(self, socket, database, user="root", password=None):
        self.cmd = [shutil.which("mariadb") or shutil.which("mysql") or
                    "mariadb", "--no-defaults", "--socket=" + socket,
                    # UTF-8 whatever the locale (LC_ALL=C: latin1).
                    "--default-character-set=utf8mb4",
                    "-u", user] + (["-p" + password] if password else []) + \
            ["-B", database]

    def run(self, sql, check=True):
        p = subprocess.run(self.cmd + ["-e", sql], stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, timeout=60)
        if check and p.returncode != 0:
            raise RuntimeError("mariadb: %s: %s" % (
                sql[:200], p.stderr.decode("utf-8", "replace").strip()))
        return p

    def lines(self, sql):
        """Each row of sql's answer, its columns joined by "|" as they
        come (NULL as NULL), no header."""
        out = self.run(sql).stdout.decode("utf-8", "replace").splitlines()
        return [ln.replace("\t", "|") for ln in out[1:]]

    def rows(self, sql):
        out = self.run(sql).stdout.decode("utf-8", "replace").splitlines()
        if not out:
            return []
        head = out[0].split("\t")
        return [dict(zip(head, [unescape(v) for v in ln.split("\t")]))
                for ln in out[1:]]

    def one(self, sql):
        r = self.rows(sql)
        return r[0] if r else None

    def scalar(self, sql):
        r = self.rows(sql)
        if not r:
            return None
        v = list(r[0].values())[0]
        try:
            return int(v)
        except (TypeError, ValueError):
            return v
