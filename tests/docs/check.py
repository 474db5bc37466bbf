# SPDX-License-Identifier: MIT
"""The documentation against the binary's own tables (TAP).

check.py ONCEHOOK_BIN TOP_SRCDIR

Also every code block and link of the documents (blocks.py says how), and
README.md kept a door: at most 300 lines.
"""
import os
import re
import subprocess
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blocks  # noqa: E402

n = 0
failed = 0


def check(cond, what, detail=""):
    global n, failed
    n += 1
    if cond:
        print(f"ok {n} - {what}")
    else:
        failed += 1
        print(f"not ok {n} - {what}")
        for line in str(detail).splitlines():
            print(f"#   {line}")


def man_synopsis(text):
    """{command: 'args'} from the mdoc SYNOPSIS (.Nm starts a line)."""
    sec = text.split(".Sh SYNOPSIS", 1)[1].split("\n.Sh ", 1)[0]
    out = {}
    for chunk in sec.split("\n.Nm")[1:]:
        words = []
        name = None
        for line in chunk.strip().splitlines():
            toks = line.split()
            if not toks:
                continue
            if toks[0] == ".Cm" and name is None:
                name = toks[1]
                continue
            opt = toks[0] == ".Op"
            if opt:
                toks = toks[1:]
            else:
                toks = [t.lstrip(".") if t.startswith(".") else t
                        for t in toks]
                toks[0] = "." + toks[0]
            parts = []
            i = 0
            while i < len(toks):
                t = toks[i].lstrip(".")
                if t == "Fl":
                    parts.append("-" + toks[i + 1])
                    i += 2
                elif t == "Ar":
                    parts.append(toks[i + 1].upper())
                    i += 2
                else:
                    parts.append(t)
                    i += 1
            word = " ".join(parts)
            words.append(f"[{word}]" if opt else word)
        if name is not None:
            out[name] = " ".join(words)
    return out


def help_synopsis(text):
    out = {}
    for line in text.splitlines():
        m = re.match(r"^(?:usage:)?\s+oncehook (\S+)(.*)$", line)
        if not m or m.group(1).startswith("-"):
            continue
        rest = m.group(2)
        if rest.startswith(" ") and not rest.startswith("  "):
            args = re.split(r"\s{2,}", rest.strip())[0]
        else:
            args = ""
        out[m.group(1)] = args
    return out


def layout(top):
    """docs/hacking.md's source layout names every file under src/, and
    no other."""
    import glob
    doc = "docs/hacking.md"
    readme = open(f"{top}/{doc}", encoding="utf-8").read()
    sec = readme.split("\n## Source code layout\n", 1)[1].split("\n## ")[0]
    named = set(re.findall(r"`(src/[A-Za-z0-9_./]+\.[ch])`", sec))
    files = {os.path.relpath(f, top)
             for f in glob.glob(f"{top}/src/**/*.[ch]", recursive=True)}
    check(not files - named, f"{doc}'s source layout names every file in "
          "src/", "missing: %s" % sorted(files - named))
    extra = {f for f in named - files if f != "src/migrations.c"}
    check(not extra, f"{doc}'s source layout names no file that is not in "
          "src/", "not there: %s" % sorted(extra))


def documents(binary, top, helpcmds):
    """Every code block and every link of the documents."""
    ctx = {"binary": binary, "top": top, "helpcmds": helpcmds,
           "vars": blocks.Vars(top), "corpus": blocks.Corpus(top)}
    cache = {}

    def each_block(name, bs, kind):
        bad = [f"{name}:{line}: {kind} ({tag}): {why}"
               for line, tag, body in bs
               for why in blocks.check_block(tag, body, ctx)]
        check(not bad, f"{name}: each of its {len(bs)} {kind}s passes its "
              "check", "\n".join(bad))

    for doc in blocks.documents(top):
        text = open(f"{top}/{doc}", encoding="utf-8").read()
        each_block(doc, blocks.md_blocks(text), "code block")
        ls = blocks.links(text)
        bad = [f"{doc}: {why}" for why in
               (blocks.check_link(doc, tg, top, cache) for tg in ls) if why]
        check(not bad, f"{doc}: each of its {len(ls)} links resolves",
              "\n".join(bad))
    for page in blocks.man_pages(top):
        text = open(f"{top}/{page}", encoding="utf-8").read()
        each_block(page, blocks.man_blocks(text), "literal block")
        refs = re.findall(r"^\.Xr (oncehook[\w-]*) (\d)", text, re.M)
        bad = [f"{n}({s})" for n, s in refs
               if not os.path.exists(f"{top}/man/{n}.{s}")]
        check(not bad, f"{page}: the oncehook pages it names exist",
              "missing: " + ", ".join(bad))
    n = sum(1 for _ in open(f"{top}/README.md", encoding="utf-8"))
    check(n <= 300, f"README.md is a door: {n} lines (at most 300)")


def main():
    binary, top = sys.argv[1], sys.argv[2]
    helptext = subprocess.run([binary, "--help"], capture_output=True,
                              text=True, check=False).stdout
    man = open(f"{top}/man/oncehook.8", encoding="utf-8").read()
    h = help_synopsis(helptext)
    m = man_synopsis(man)
    check(len(h) > 0, "--help lists commands", helptext)
    check(sorted(h) == sorted(m),
          "--help and the man page's SYNOPSIS name the same commands",
          f"--help: {sorted(h)}\nman:    {sorted(m)}")
    for name in sorted(set(h) & set(m)):
        check(h[name] == m[name], f"{name}: same arguments in --help "
              "and the man page", f"--help: {h[name]!r}\nman:    {m[name]!r}")
    layout(top)
    documents(binary, top, set(h))
    print(f"1..{n}")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
