# SPDX-License-Identifier: MIT
"""oncetest: the one Python client package of oncehook's tests and
benchmark tools.

- hookclient: a webhook sender that signs as each provider does, an
  HTTP client, and a reader of the SQLite file;
- fcgiclient: a FastCGI client (a web server's side of the protocol);
- testkit: what they share (Response, read_env, children_of, comm);
- checks: a scenario's checks (Checks, Failed);
- mariadb: a test server through the mariadb client (My, q);
- myproxy: a fault proxy between a client and a MariaDB server that
  cuts the connection at a COMMIT (FaultProxy).

Standard library only.  A program finds it with
sys.path.insert(0, <tests>/servers), then "from oncetest import ...".
"""
