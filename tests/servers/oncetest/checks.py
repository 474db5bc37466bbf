# SPDX-License-Identifier: MIT
"""The checks of one scenario, for the scenario scripts (tests/e2e/):
every failure is kept, with what was expected and what came back.
Standard library only."""


def tap_scenario(owner, label, name, fn, most=30):
    """Run fn() as one TAP test, "label: name", for a load script's
    owner (its .failures, emptied first and filled by its checks, and
    its .failed, counted): an exception is a failure; at most `most`
    failures are printed."""
    import sys
    import traceback
    owner.failures = []
    try:
        fn()
    except Exception:
        owner.failures.append("exception:\n" + traceback.format_exc())
    if owner.failures:
        owner.failed += 1
        print("not ok - %s: %s" % (label, name))
        for f in owner.failures[:most]:
            for line in str(f).splitlines():
                print("#   " + line)
        if len(owner.failures) > most:
            print("#   ... and %d more" % (len(owner.failures) - most))
    else:
        print("ok - %s: %s" % (label, name))
    sys.stdout.flush()


class Failed(Exception):
    """A check failed hard enough that the scenario cannot go on."""


class Checks:
    """The checks of one scenario: every failure is kept, with what was
    expected and what came back."""

    def __init__(self):
        self.failures = []

    def true(self, cond, what):
        if not cond:
            self.failures.append(what)
        return bool(cond)

    def eq(self, got, want, what):
        if got != want:
            self.failures.append("%s: got %r, want %r" % (what, got, want))
            return False
        return True

    def must(self, cond, what):
        if not self.true(cond, what):
            raise Failed(what)

    def response(self, r, code, what, **fields):
        """Status, Content-Type: application/json, a JSON object body,
        and the given fields of it (a value, or True for "a non-empty
        string").  Returns the JSON object (or {})."""
        ok = self.eq(r.status, code, "%s: status" % what)
        ct = r.header("content-type") or ""
        ok &= self.true(ct.split(";")[0].strip() == "application/json",
                        "%s: Content-Type is %r, want application/json"
                        % (what, ct))
        body = r.json if isinstance(r.json, dict) else None
        ok &= self.true(body is not None, "%s: body is not a JSON object: %r"
                        % (what, r.body[:200]))
        body = body or {}
        for k, v in fields.items():
            if v is True:
                ok &= self.true(isinstance(body.get(k), str) and body[k],
                                "%s: body field %r missing or empty in %r"
                                % (what, k, body))
            else:
                ok &= self.eq(body.get(k), v, "%s: body field %r" % (what, k))
        if code >= 400:
            ok &= self.true(isinstance(body.get("error"), str) and
                            body["error"], "%s: no \"error\" in the body %r"
                            % (what, body))
            ok &= self.true("status" not in body or body["status"] not in
                            ("processed", "already_processed"),
                            "%s: an error says %r" % (what, body))
        if not ok:
            self.failures.append("%s: response was %r" % (what, r))
        return body


class Tap:
    """A request script's TAP lines, "label: what", and its failures."""

    def __init__(self, label):
        self.label = label
        self.failed = 0

    def check(self, what, bad, r=None):
        """One test: ok if bad (the list of what went wrong) is empty,
        else not ok with each, and r's answer (a hookclient reply)."""
        if not bad:
            print("ok - %s: %s" % (self.label, what))
            return True
        self.failed += 1
        print("not ok - %s: %s" % (self.label, what))
        for b in bad:
            print("#   %s" % b)
        if r is not None:
            print("#   answer: %d %s" % (r.status, r.body[:300]))
        return False

    def skip(self, what, why):
        print("ok - %s: %s # SKIP %s" % (self.label, what, why))


def expect(r, status, fields):
    """What is wrong with reply r against status and JSON fields."""
    bad = []
    if r.status != status:
        bad.append("status %d, want %d" % (r.status, status))
    for k, v in fields.items():
        got = r.json.get(k) if isinstance(r.json, dict) else None
        if got != v:
            bad.append("%s: %r, want %r" % (k, got, v))
    return bad
