"""tests/e2e/scenarios.py behind a web server that enforces the body
limit itself.

    scenarios_front.py --server-body-limit BYTES [scenarios.py options]

The shipped Apache and nginx examples refuse a body over
ONCEHOOK_MAX_BODY by its Content-Length, before oncehook runs (413 with
oncehook's JSON body: tests/deploy/checks.py "limits" checks it), so that
mod_fcgid and nginx never buffer it.  Such a request leaves no line in
oncehook's log, and scenario 13 counts one line per request it sent.
This wrapper runs the scenarios unchanged, except that a request whose
body is over BYTES is not counted as one oncehook answers: scenario 13
then also checks that oncehook did not see it.

Also: behind nginx and Apache mod_proxy_fcgi, scenario 10's reload is a
restart of the backend (tests/deploy/supervise.py), and while it starts
the web server itself answers 503 with a JSON body (the shipped
examples' error pages).  scenarios.py counts every JSON answer to its
probe as one of oncehook's; here only oncehook's own answers count (they
carry "Cache-Control: no-store", the server's pages do not).

(Flags of scenarios.py itself would be better; this stands in for them.)
"""

import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "e2e"))

import scenarios  # noqa: E402


def main():
    argv = sys.argv[1:]
    limit = None
    if "--server-body-limit" in argv:
        i = argv.index("--server-body-limit")
        limit = int(argv[i + 1])
        del argv[i:i + 2]
    if limit is not None:
        post = scenarios.Suite.post_shop

        def post_shop(self, body, *a, **kw):
            r = post(self, body, *a, **kw)
            if len(body) > limit:
                self.requests -= 1      # the web server answered
            return r

        scenarios.Suite.post_shop = post_shop

    request = scenarios.hookclient.Client.request

    def reload_server(self):
        """As Suite.reload_server, counting oncehook's answers only."""
        client = self.http
        suite = self

        def probe(method, path, *a, **kw):
            r = request(client, method, path, *a, **kw)
            if r.json is not None and r.header("cache-control") != "no-store":
                suite.requests -= 1     # counted by the caller: not ours
            return r

        client.request = probe
        try:
            return reload(self)
        finally:
            del client.request

    reload = scenarios.Suite.reload_server
    scenarios.Suite.reload_server = reload_server
    sys.argv = [os.path.join(HERE, "..", "e2e", "scenarios.py")] + argv
    return scenarios.main()


if __name__ == "__main__":
    sys.exit(main())
