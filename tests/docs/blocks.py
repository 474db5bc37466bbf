# SPDX-License-Identifier: MIT
"""The documents' code blocks and links, checked (used by check.py).

Every fenced block of README.md, docs/**/*.md and bench/README.md, and
every literal block (.Bd -literal) of man/*.[58] after a line
'.\\" docs: TAG', carries a tag, and is checked by it:

  sh        bash -n parses it; each oncehook it runs names a command of
            --help; each ONCEHOOK_ name is one oncehook reads; each path
            of the tree it names (tools/..., conf-examples/...) exists.
  env       NAME=value lines (# comments): each name one oncehook reads.
  sql       an excerpt of a file of the tree, or a whole SQLite actions
            file that `oncehook init` and `oncehook check` accept.
  php       an excerpt of a file of the tree, or `php -l` accepts it.
  json      parses.
  nginx apache lighttpd ini cron yaml c
            an excerpt of a file of the tree: its lines, blank lines and
            the blanks around each line aside, appear one after another
            in one file (the server suites run those of conf-examples/).
            A line '...' (or '# ...', '-- ...', '// ...') leaves lines
            out: the parts around it appear in that order in the file.
  text      output, a picture, an HTTP exchange: not checked.

Links ([text](target) and [text](target#anchor)) between them must
resolve: the file exists, and the anchor is one of its headings' slugs.
"""
import json
import os
import re
import shlex
import subprocess
import tempfile

TAGS = {"sh", "env", "sql", "php", "json", "nginx", "apache", "lighttpd",
        "ini", "cron", "yaml", "c", "text"}
EXCERPT_ONLY = {"nginx", "apache", "lighttpd", "ini", "cron", "yaml", "c"}
ELIDE = {"...", "# ...", "-- ...", "// ...", "; ..."}
TREE_DIRS = ("tools", "conf-examples", "sql", "tests", "bench", "man",
             "docs", "debian", "src", "build-aux")


def documents(top):
    """The Markdown documents, relative to top."""
    out = ["README.md"]
    for d, _, files in os.walk(os.path.join(top, "docs")):
        for f in sorted(files):
            if f.endswith(".md"):
                out.append(os.path.relpath(os.path.join(d, f), top))
    for extra in ("bench/README.md", "src/store/README.md"):
        if os.path.exists(os.path.join(top, extra)):
            out.append(extra)
    return sorted(out)


def man_pages(top):
    d = os.path.join(top, "man")
    return sorted("man/" + f for f in os.listdir(d)
                  if re.search(r"\.[1-8]$", f))


def md_blocks(text):
    """(line number, tag, lines) of each fenced block."""
    out = []
    lines = text.split("\n")
    i = 0
    while i < len(lines):
        m = re.match(r"^(\s*)(```+|~~~+)\s*([A-Za-z0-9_+-]*)\s*$", lines[i])
        if not m:
            i += 1
            continue
        indent, fence, tag = m.group(1), m.group(2), m.group(3)
        start = i + 1
        body = []
        i += 1
        while i < len(lines) and not re.match(
                r"^\s*" + re.escape(fence) + r"\s*$", lines[i]):
            ln = lines[i]
            if ln.startswith(indent):
                ln = ln[len(indent):]
            body.append(ln)
            i += 1
        out.append((start, tag, body))
        i += 1
    return out


def roff_text(line):
    return (line.replace("\\e", "\\").replace("\\-", "-")
            .replace("\\&", "").replace("\\(aq", "'").replace("\\(dq", '"'))


def man_blocks(text):
    """(line number, tag, lines) of each .Bd -literal block; tag None if
    the block has no '.\\" docs: TAG' line just before it."""
    out = []
    lines = text.split("\n")
    for i, ln in enumerate(lines):
        if not ln.startswith(".Bd -literal"):
            continue
        tag = None
        for j in (i - 1, i - 2):
            m = re.match(r'^\.\\" docs: (\S+)', lines[j]) if j >= 0 else None
            if m:
                tag = m.group(1)
                break
        body = []
        k = i + 1
        while k < len(lines) and not lines[k].startswith(".Ed"):
            if not lines[k].startswith('.\\"'):
                body.append(roff_text(lines[k]))
            k += 1
        out.append((i + 1, tag, body))
    return out


class Corpus:
    """The tree's text files, as lists of stripped non-blank lines."""

    def __init__(self, top):
        self.files = {}
        try:
            names = subprocess.run(
                ["git", "-C", top, "ls-files"], capture_output=True,
                text=True, check=True).stdout.split("\n")
            toplevel = subprocess.run(
                ["git", "-C", top, "rev-parse", "--show-toplevel"],
                capture_output=True, text=True, check=True).stdout.strip()
            if os.path.realpath(toplevel) != os.path.realpath(top):
                raise OSError("not the tree's own checkout")
        except (OSError, subprocess.CalledProcessError):
            names = []
            for d in TREE_DIRS:
                for base, _, fs in os.walk(os.path.join(top, d)):
                    for f in fs:
                        names.append(os.path.relpath(
                            os.path.join(base, f), top))
        for n in names:
            if not n or n.endswith((".md", ".png")):
                continue
            try:
                with open(os.path.join(top, n), encoding="utf-8") as f:
                    self.files[n] = [ln.strip() for ln in f.read().split("\n")
                                     if ln.strip()]
            except (OSError, UnicodeDecodeError):
                continue

    def find(self, block):
        """The file block is an excerpt of, or None."""
        parts = [[]]
        for ln in block:
            s = ln.strip()
            if s in ELIDE:
                parts.append([])
            elif s:
                parts[-1].append(s)
        parts = [p for p in parts if p]
        if not parts:
            return None
        for name, lines in self.files.items():
            pos = 0
            for p in parts:
                pos = self._at(lines, p, pos)
                if pos < 0:
                    break
                pos += len(p)
            else:
                return name
        return None

    @staticmethod
    def _at(lines, part, start):
        n = len(part)
        first = part[0]
        for i in range(start, len(lines) - n + 1):
            if lines[i] == first and lines[i:i + n] == part:
                return i
        return -1


class Vars:
    """The variables oncehook reads, from the man page's ENVIRONMENT (which
    t_docs holds to src/conf.c's table), and those it sets for others."""

    def __init__(self, top):
        man = open(os.path.join(top, "man/oncehook.8"), encoding="utf-8").read()
        env = man.split(".Sh ENVIRONMENT", 1)[1].split("\n.Sh ", 1)[0]
        self.globals = set()
        self.endpoint = set()
        for m in re.finditer(r"^\.It Ev (.*)$", env, re.M):
            item = m.group(1)
            e = re.match(r"ONCEHOOK_ Ns Ar NAME Ns Ev _(\w+)", item)
            if e:
                self.endpoint.add(e.group(1))
            elif re.match(r"ONCEHOOK_\w+$", item.split()[0]):
                self.globals.add(item.split()[0])
        # What oncehook sets for an outbox command target (src/outbox/sendcmd.c).
        src = open(os.path.join(top, "src/outbox/sendcmd.c"), encoding="utf-8").read()
        self.globals |= set(re.findall(r'"(ONCEHOOK_OUTBOX_[A-Z_]+)=', src))

    def known(self, name):
        if name in self.globals:
            return True
        if re.match(r"ONCEHOOK_OUTBOX_[A-Z0-9_]+_(COMMAND|URL)$", name):
            return True
        for row in self.endpoint:
            if name == "ONCEHOOK_" + row:
                return True
            if re.match(r"ONCEHOOK_[A-Z0-9_]+_" + row + "$", name):
                return True
        return False


WRAPPERS = {"sudo", "env", "runuser", "exec", "nice", "time", "command",
            "setpriv", "su"}
OPS = {";", "&&", "||", "|", "(", ")", "&", "$(", "`", "{", "}", "!",
       "then", "do", "else"}


def commands_run(text):
    """(command word or option, line) for each oncehook run in a shell
    text; word None for a bare `oncehook`."""
    out = []
    for ln in text.split("\n"):
        s = ln.split(" #", 1)[0] if not ln.lstrip().startswith("#") else ""
        try:
            lx = shlex.shlex(s, posix=True, punctuation_chars=";&|()")
            lx.whitespace_split = True
            toks = list(lx)
        except ValueError:
            toks = s.split()
        pos = True
        i = 0
        while i < len(toks):
            t = toks[i]
            if t in OPS or t.startswith("$("):
                pos = True
                i += 1
                continue
            if not pos:
                i += 1
                continue
            if re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", t):
                i += 1
                continue
            if t in WRAPPERS:
                i += 1
                while i < len(toks) and (toks[i].startswith("-") or
                                         re.match(r"^\w+=", toks[i])):
                    if toks[i] in ("-u", "-g", "--user", "--group",
                                   "--reuid", "--regid"):
                        i += 1
                    if toks[i] == "--":
                        i += 1
                        break
                    i += 1
                continue
            pos = False
            if os.path.basename(t.strip("\"'")) == "oncehook":
                j = i + 1
                while j + 1 < len(toks) and toks[j] == "--env-file":
                    j += 2
                word = toks[j] if j < len(toks) else None
                if word is not None and (word in OPS or word == "\\"):
                    word = None
                out.append((word, ln.strip()))
            i += 1
    return out


def check_sh(body, ctx):
    """A list of problems with a shell block."""
    helpcmds, vars_, top = ctx["helpcmds"], ctx["vars"], ctx["top"]
    text = "\n".join(body)
    bad = []
    r = subprocess.run(["bash", "-n"], input=text, capture_output=True,
                       text=True, check=False)
    if r.returncode != 0:
        bad.append("bash -n: " + r.stderr.strip())
    for word, ln in commands_run(text):
        if word is None or word in helpcmds or word in (
                "--help", "-h", "--version"):
            continue
        bad.append(f"oncehook {word}: no such command ({ln})")
    for name in set(re.findall(r"\bONCEHOOK_[A-Z0-9_]*[A-Z0-9]", text)):
        if not vars_.known(name):
            bad.append(f"{name}: not a variable oncehook reads")
    for m in re.finditer(r"(?<![\w./$-])((?:%s)/[\w./+-]*[\w+-])" %
                         "|".join(TREE_DIRS), text):
        p = m.group(1)
        if not os.path.exists(os.path.join(top, p)):
            bad.append(f"{p}: no such file in the tree")
    return bad


def check_env(body, vars_):
    bad = []
    for ln in body:
        s = ln.strip()
        if not s or s.startswith("#"):
            continue
        m = re.match(r"^([A-Za-z_][A-Za-z0-9_]*)=", s)
        if not m:
            bad.append(f"not NAME=value: {s}")
        elif not vars_.known(m.group(1)):
            bad.append(f"{m.group(1)}: not a variable oncehook reads")
    return bad


def check_actions(body, binary):
    """None if oncehook init and check accept body as an actions file."""
    text = "\n".join(body) + "\n"
    if "-- on:" not in text:
        return "not an actions file (no '-- on:' section)"
    with tempfile.TemporaryDirectory(prefix="oncehook-docs.") as d:
        path = os.path.join(d, "actions.sql")
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        env = {k: v for k, v in os.environ.items()
               if not k.startswith("ONCEHOOK_")}
        env.update(ONCEHOOK_DB=os.path.join(d, "docs.db"),
                   ONCEHOOK_SCHEME="hmac-sha256",
                   ONCEHOOK_SECRET="docs-check-secret-0123456789",
                   ONCEHOOK_ACTIONS=path)
        for cmd in ("init", "check"):
            r = subprocess.run([binary, cmd], env=env, capture_output=True,
                               text=True, check=False)
            if r.returncode != 0:
                said = (r.stderr.strip() or r.stdout.strip()).split("\n")
                return f"oncehook {cmd}: {said[-1]}"
    return None


def check_block(tag, body, ctx):
    """A list of problems with one block."""
    if tag is None or tag == "":
        return ["no tag (sh, env, sql, nginx, ... or text)"]
    if tag not in TAGS:
        return [f"unknown tag {tag!r}"]
    if tag == "text":
        return []
    if tag == "sh":
        return check_sh(body, ctx)
    if tag == "env":
        return check_env(body, ctx["vars"])
    if tag == "json":
        try:
            json.loads("\n".join(body))
            return []
        except ValueError as e:
            return [f"not JSON: {e}"]
    if ctx["corpus"].find(body) is not None:
        return []
    if tag == "sql":
        why = check_actions(body, ctx["binary"])
        return [] if why is None else [
            "neither an excerpt of a file of the tree nor an actions file "
            "oncehook accepts: " + why]
    if tag == "php":
        r = subprocess.run(["php", "-l"], input="\n".join(body),
                           capture_output=True, text=True, check=False)
        return [] if r.returncode == 0 else [
            "not an excerpt, and php -l: " + r.stdout.strip()[-200:]]
    return ["not an excerpt of a file of the tree (lines, in order, "
            "of one file)"]


def slug(heading, seen):
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    s = s.replace(" ", "-")
    n = seen.get(s, 0)
    seen[s] = n + 1
    return s if n == 0 else f"{s}-{n}"


def prose(text):
    """The lines of a Markdown text outside its fenced blocks."""
    infence = False
    for ln in text.split("\n"):
        if re.match(r"^\s*(```|~~~)", ln):
            infence = not infence
        elif not infence:
            yield ln


def anchors(text):
    seen = {}
    out = set()
    for ln in prose(text):
        m = re.match(r"^#{1,6}\s+(.*?)\s*#*\s*$", ln)
        if m:
            out.add(slug(m.group(1), seen))
    return out


def links(text):
    """(target) of each inline link outside code blocks and spans."""
    out = []
    for ln in prose(text):
        ln = re.sub(r"`[^`]*`", "", ln)
        for m in re.finditer(r"\]\(([^)\s]+)(?:\s+\"[^\"]*\")?\)", ln):
            out.append(m.group(1))
    return out


def check_link(doc, target, top, cache):
    if re.match(r"^[a-z][a-z0-9+.-]*:", target):
        return None		# http:, https:, mailto:
    path, _, frag = target.partition("#")
    if path:
        full = os.path.normpath(os.path.join(top, os.path.dirname(doc), path))
    else:
        full = os.path.join(top, doc)
    if not os.path.exists(full):
        return f"{target}: no such file"
    if frag:
        if not full.endswith(".md"):
            return None
        if full not in cache:
            cache[full] = anchors(open(full, encoding="utf-8").read())
        if frag not in cache[full]:
            return f"{target}: no heading #{frag} there"
    return None
