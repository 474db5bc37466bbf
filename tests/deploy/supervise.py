# SPDX-License-Identifier: MIT
"""Run a FastCGI backend the way an init system does, for the oncehook
deployment tests: start it, restart it on SIGUSR1 ("systemctl restart
oncehook"), stop it on SIGTERM or SIGINT.

    python3 supervise.py [--detaching] -- COMMAND...

The end-to-end scenarios (tests/e2e/scenarios.py, mode "fastcgi") make
the database read-only and then send a signal to the process they were
given (--reload-signal, default SIGUSR1, to --server-pid), expecting
every child of that process to be replaced by new ones (lighttpd and
Apache do that on a graceful restart); then they wait for oncehook to
answer again.  Behind nginx or Apache mod_proxy_fcgi,
oncehook is not the web server's child: this process stands in for
systemd, and its one child is the backend:

- without --detaching, COMMAND itself ("oncehook serve ...", which has
  its workers as children);
- with --detaching, for a COMMAND that starts processes in the
  background and exits (spawn-fcgi -F N): a holder process that runs
  COMMAND as a Linux child subreaper (PR_SET_CHILD_SUBREAPER), so that
  the processes it leaves are re-parented to the holder, and stops them
  all when told to.  A restart replaces the holder, so the scenarios see
  one child go and a new one come, never a half-started set.

Stopping sends SIGTERM and waits (up to 20 s, then SIGKILL); a backend
that dies by itself is started again (Restart=on-failure).  Exit status
0, or the command's own when it failed.  Standard library only.
"""

import ctypes
import os
import signal
import subprocess
import sys
import time

PR_SET_CHILD_SUBREAPER = 36


def log(msg):
    sys.stderr.write("supervise[%d]: %.3f %s\n" % (os.getpid(), time.time(),
                                                    msg))
    sys.stderr.flush()


def children():
    # Standalone on purpose: the tests copy this file next to the binary
    # it supervises, away from tests/servers/oncetest.
    """PIDs whose parent is this process, zombies left out."""
    me = str(os.getpid())
    pids = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
        except OSError:
            continue
        fields = st[st.rfind(")") + 2:].split()
        if len(fields) > 1 and fields[1] == me and fields[0] != "Z":
            pids.append(int(d))
    return pids


def reap():
    """Collect exited children; their wait statuses, by PID."""
    done = {}
    while True:
        try:
            pid, status = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            break
        if pid == 0:
            break
        done[pid] = status
    return done


def stop_all(timeout=20):
    """SIGTERM every child (again for those that appear meanwhile:
    re-parented ones), wait for all; SIGKILL what is left."""
    deadline = time.time() + timeout
    done = {}
    signalled = set()
    while time.time() < deadline:
        done.update(reap())
        pids = children()
        if not pids:
            return done
        for pid in pids:
            if pid not in signalled:
                try:
                    os.kill(pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
                signalled.add(pid)
        time.sleep(0.02)
    for pid in children():
        os.kill(pid, signal.SIGKILL)
    time.sleep(0.05)
    done.update(reap())
    return done


def holder(cmd):
    """The --detaching child: run cmd as a subreaper, keep what it
    leaves, stop it all on SIGTERM.  Never returns."""
    stop = []
    signal.signal(signal.SIGTERM, lambda s, f: stop.append(s))
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0:
        log("prctl(PR_SET_CHILD_SUBREAPER) failed")
        os._exit(2)
    p = subprocess.Popen(cmd)
    while p.poll() is None and not stop:
        time.sleep(0.02)
    rc = p.returncode
    if rc:
        log("%s exited with %d" % (cmd[0], rc))
    while not stop:
        reap()
        time.sleep(0.05)
    stop_all()
    os._exit(0 if not rc else 1)


class Supervisor:
    def __init__(self, cmd, detaching):
        self.cmd = cmd
        self.detaching = detaching
        self.pid = None
        self.status = 0
        self.restart = False
        self.stop = False

    def start(self):
        if self.detaching:
            pid = os.fork()
            if pid == 0:
                holder(self.cmd)
            self.pid = pid
        else:
            self.pid = subprocess.Popen(self.cmd).pid

    def stop_child(self):
        done = stop_all()
        if self.pid in done:
            self.status = os.waitstatus_to_exitcode(done[self.pid])
        self.pid = None

    def run(self):
        def on_usr1(sig, frame):
            self.restart = True

        def on_stop(sig, frame):
            self.stop = True

        signal.signal(signal.SIGUSR1, on_usr1)
        signal.signal(signal.SIGTERM, on_stop)
        signal.signal(signal.SIGINT, on_stop)
        self.start()
        while not self.stop:
            if self.restart:
                self.restart = False
                log("restart: stopping %s" % self.pid)
                self.stop_child()
                self.start()
                log("restart: started %s" % self.pid)
                continue
            done = reap()
            if self.pid in done:
                self.status = os.waitstatus_to_exitcode(done[self.pid])
                log("%s exited with %d; starting it again"
                    % (self.cmd[0], self.status))
                time.sleep(0.2)
                self.start()
            time.sleep(0.02)
        self.stop_child()
        return self.status if self.status >= 0 else 128 - self.status


def main(argv):
    detaching = False
    while argv and argv[0] != "--":
        if argv[0] == "--detaching":
            detaching = True
            argv = argv[1:]
        else:
            sys.stderr.write(__doc__)
            return 2
    cmd = argv[1:]
    if not cmd:
        sys.stderr.write(__doc__)
        return 2
    return Supervisor(cmd, detaching).run()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
