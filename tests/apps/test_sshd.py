# SPDX-License-Identifier: BSD-3-Clause
#
# Debian's OpenSSH sshd, started by the test as an unprivileged user on
# 127.0.0.1 and a free high port, authenticates through pam_matrix under
# libpam_wrapper.so; nss_wrapper and uid_wrapper (Debian's libnss-wrapper,
# libuid-wrapper) provide the account, as cwrap users (libssh) do.
#
# Why sshd runs with its real, unprivileged uid (uid_wrapper not in root
# mode): as soon as sshd believes it is root it insists on its privilege
# separation chroot (/run/sshd on Debian, owned by root) and chroot(2)s
# into it, which no unprivileged process can do; we must not create system
# directories.  An unprivileged sshd skips the chroot and can log in one
# account: its own uid.  So the test user "alice" exists only in the
# nss_wrapper passwd file, with sshd's uid, a home below the test
# directory and /bin/sh; when the suite runs as root, sshd is started as
# nobody:nogroup.  The client is Debian's ssh; passwords come from an
# SSH_ASKPASS script (SSH_ASKPASS_REQUIRE=force), which also records every
# prompt so the test can tell the password method from keyboard-interactive
# (whose prompt is pam_matrix's own "Password: ").
#
# Teardown proves that nothing outlives the server: this process is made a
# child subreaper, so sshd's per-connection processes (which setsid and
# rename themselves) are adopted by us when orphaned; after stopping sshd
# none of them may remain and the config path may match no process.  They
# end with _exit, so the last one's runtime directory is left to the next
# wrapped process: after one more (sweep_dead_dirs), the wrapper's TMPDIR
# must be empty.
import os
import signal
import socket
import subprocess

import pytest

from conftest import (HANG, NOBODY_UID, NOGROUP_GID, cmdline, cwrap_lib,
                      live_descendants, need_program, preload, run,
                      sweep_dead_dirs,
                      set_subreaper, wait_until)

SSHD = "/usr/sbin/sshd"
SSH = "/usr/bin/ssh"
SSH_KEYGEN = "/usr/bin/ssh-keygen"
PASSWORD = "s3cret pass"  # a space, to prove the token is passed whole

ASKPASS = """#!/bin/sh
# ssh calls this for every password or keyboard-interactive prompt.
printf '%s\\n' "$1" >> "$ASKPASS_LOG"
printf '%s\\n' "$ASKPASS_ANSWER"
"""

REMOTE = ('echo ok; echo "home=$HOME"; echo "pwd=$(pwd)"; '
          'echo "homedir=$HOMEDIR"; echo "uid=$(id -u)"')


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Sshd:
    """One sshd -D listening on 127.0.0.1:port, wrapped."""

    def __init__(self, work):
        self.work = work
        self.dir = work.mkdir("sshd")
        self.proc = None
        self.port = None
        self.as_root = os.getuid() == 0
        # sshd's identity: ours, or nobody when the suite runs as root.
        self.uid = NOBODY_UID if self.as_root else os.getuid()
        self.gid = NOGROUP_GID if self.as_root else os.getgid()
        self.home = self.dir / "home" / "alice"
        self.home.mkdir(parents=True)
        self.config = self.dir / "sshd_config"
        self.log = self.dir / "sshd.log"
        self.passdb = work.passdb(("alice", PASSWORD, "sshd"),
                                  name="sshd/passdb")
        work.service("sshd",
                     f"auth     required pam_matrix.so passdb={self.passdb} verbose",
                     f"account  required pam_matrix.so passdb={self.passdb}",
                     f"password required pam_matrix.so passdb={self.passdb}",
                     f"session  required pam_matrix.so passdb={self.passdb}")
        # The account as nss_wrapper serves it.  The "sshd" privilege
        # separation user is what a root sshd would look up; it is here
        # because cwrap setups carry it, an unprivileged sshd ignores it.
        self.passwd = work.file("sshd/passwd",
                                f"alice:x:{self.uid}:{self.gid}:Alice:"
                                f"{self.home}:/bin/sh\n"
                                "sshd:x:65530:65530:privsep:/nonexistent:"
                                "/usr/sbin/nologin\n")
        self.group = work.file("sshd/group",
                               f"alice:x:{self.gid}:alice\n"
                               "sshd:x:65530:\n")
        self.hostkey = self.dir / "hostkey"
        subprocess.run([need_program(SSH_KEYGEN), "-q", "-t", "ed25519",
                        "-N", "", "-C", "pwrap-test", "-f",
                        str(self.hostkey)], check=True, timeout=HANG,
                       stdin=subprocess.DEVNULL)
        self.pidfile = self.dir / "sshd.pid"

    def write_config(self):
        self.config.write_text(f"""\
# Written by tests/apps/test_sshd.py: loopback only, PAM through pam_wrapper.
ListenAddress 127.0.0.1
Port {self.port}
HostKey {self.hostkey}
PidFile {self.pidfile}
UsePAM yes
PasswordAuthentication yes
KbdInteractiveAuthentication yes
PubkeyAuthentication no
AuthorizedKeysFile none
PermitRootLogin no
StrictModes no
UseDNS no
PrintMotd no
PrintLastLog no
X11Forwarding no
AllowTcpForwarding no
AllowAgentForwarding no
PermitTunnel no
MaxAuthTries 3
LoginGraceTime 30
LogLevel VERBOSE
""")

    def env(self):
        return self.work.env(
            LD_PRELOAD=preload(cwrap_lib("libuid_wrapper.so"),
                               cwrap_lib("libnss_wrapper.so")),
            UID_WRAPPER="1",
            NSS_WRAPPER_PASSWD=self.passwd,
            NSS_WRAPPER_GROUP=self.group,
            HOME=self.dir)

    def start(self):
        need_program(SSHD)
        if self.as_root:
            # sshd reads its host key only when it owns it (mode 0600).
            for root, dirs, files in os.walk(self.dir):
                for name in dirs + files + ["."]:
                    os.chown(os.path.join(root, name), self.uid, self.gid)
        for attempt in range(5):
            self.port = free_port()
            self.write_config()
            log = open(self.log, "w", encoding="utf-8")
            kw = {}
            if self.as_root:
                kw = dict(user=self.uid, group=self.gid, extra_groups=[])
            # sshd wants an absolute path (it re-executes itself).
            self.proc = subprocess.Popen(
                [SSHD, "-D", "-e", "-f", str(self.config)],
                env=self.env(), stdin=subprocess.DEVNULL, stdout=log,
                stderr=subprocess.STDOUT, cwd=self.dir, **kw)
            log.close()
            listening = f"Server listening on 127.0.0.1 port {self.port}."
            up = wait_until(lambda: listening in self.log_text()
                            or self.proc.poll() is not None)
            if up and self.proc.poll() is None:
                return
            self.proc.wait(timeout=HANG)
            if "Address already in use" not in self.log_text():
                break
        pytest.fail(f"sshd did not start:\n{self.log_text()}")

    def log_text(self):
        try:
            return self.log.read_text(encoding="utf-8", errors="replace")
        except FileNotFoundError:
            return ""

    def wait_log(self, text, timeout=HANG):
        """True once text is in sshd's log (sshd may log a failure after
        the client already gave up)."""
        return wait_until(lambda: text in self.log_text(), timeout=timeout)

    def stop(self):
        if self.proc is None or self.proc.poll() is not None:
            return
        self.proc.send_signal(signal.SIGTERM)
        try:
            self.proc.wait(timeout=HANG)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait(timeout=HANG)
            pytest.fail("sshd ignored SIGTERM")


class Client:
    """Debian's ssh, fed passwords through SSH_ASKPASS."""

    def __init__(self, work, server):
        self.work = work
        self.server = server
        self.dir = work.mkdir("client", 0o755)
        self.askpass = work.file("client/askpass", ASKPASS, mode=0o755)
        self.prompts = self.dir / "prompts.log"

    def login(self, method, password, user="alice", command=REMOTE):
        """Logs in with method (password / keyboard-interactive) and runs
        command; returns (CompletedProcess, prompts ssh asked for)."""
        if self.prompts.exists():
            self.prompts.unlink()
        env = {
            "PATH": os.environ.get("PATH", "/usr/bin:/bin"),
            "HOME": str(self.dir),  # not /nonexistent in the NOBODY twin
            "SSH_ASKPASS": str(self.askpass),
            "SSH_ASKPASS_REQUIRE": "force",
            "ASKPASS_LOG": str(self.prompts),
            "ASKPASS_ANSWER": password,
        }
        argv = [need_program(SSH), "-F", "/dev/null", "-T",
                "-p", str(self.server.port),
                "-o", "StrictHostKeyChecking=no",
                "-o", "UserKnownHostsFile=/dev/null",
                "-o", "GlobalKnownHostsFile=/dev/null",
                # INFO: ssh shows the PAM messages sshd relays as banners.
                "-o", "LogLevel=INFO",
                "-o", "ConnectTimeout=10",
                "-o", "IdentityAgent=none",
                "-o", "PubkeyAuthentication=no",
                "-o", "GSSAPIAuthentication=no",
                "-o", "HostbasedAuthentication=no",
                "-o", f"PreferredAuthentications={method}",
                "-o", "NumberOfPasswordPrompts=1",
                f"{user}@127.0.0.1", command]
        res = run(argv, env)
        prompts = (self.prompts.read_text(encoding="utf-8").splitlines()
                   if self.prompts.exists() else [])
        return res, prompts


def remote_values(stdout):
    return dict(line.split("=", 1) for line in stdout.splitlines()
                if "=" in line)


@pytest.fixture
def sshd(work):
    set_subreaper(True)
    server = Sshd(work)
    problems = []
    try:
        server.start()
        yield server
    finally:
        try:
            server.stop()
            # sshd's children must all go away.
            gone = wait_until(lambda: not live_descendants())
            if not gone:
                left = live_descendants()
                problems.append("still running after sshd stopped: " +
                                "; ".join(f"{p} {cmdline(p)}" for p in left))
                for pid in left:
                    try:
                        os.kill(pid, signal.SIGKILL)
                    except ProcessLookupError:
                        pass
                wait_until(lambda: not live_descendants())
            pgrep = subprocess.run(["pgrep", "-f", str(server.config)],
                                   capture_output=True, text=True,
                                   timeout=HANG)
            if pgrep.stdout.strip():
                problems.append(f"processes match {server.config}: "
                                f"{pgrep.stdout.split()}")
            sweep_dead_dirs(work, server.uid, server.gid)
        finally:
            set_subreaper(False)
    assert not problems, "\n".join(problems) + "\n" + server.log_text()


@pytest.fixture
def client(work, sshd):
    return Client(work, sshd)


def test_password_login(sshd, client):
    res, prompts = client.login("password", PASSWORD)
    assert res.returncode == 0, res.stderr + sshd.log_text()
    values = remote_values(res.stdout)
    assert res.stdout.splitlines()[0] == "ok"
    # The account came from nss_wrapper: its home is in the test dir.
    assert values["home"] == str(sshd.home)
    assert values["pwd"] == str(sshd.home)
    assert values["uid"] == str(sshd.uid)
    # pam_matrix's session module put HOMEDIR into the PAM environment,
    # which sshd exports to the session.
    assert values["homedir"] == "/home/alice"
    # ssh's own password prompt, answered once; pam_matrix (verbose) said
    # so through sshd.
    assert prompts == ["alice@127.0.0.1's password: "]
    assert "Authentication succeeded" in res.stderr
    assert sshd.wait_log("Accepted password for alice from 127.0.0.1")


def test_keyboard_interactive_login(sshd, client):
    res, prompts = client.login("keyboard-interactive", PASSWORD)
    assert res.returncode == 0, res.stderr + sshd.log_text()
    values = remote_values(res.stdout)
    assert res.stdout.splitlines()[0] == "ok"
    assert values["homedir"] == "/home/alice"
    assert values["home"] == str(sshd.home)
    # The prompt is pam_matrix's, relayed by sshd's PAM conversation.
    assert len(prompts) == 1 and prompts[0].endswith("Password: "), prompts
    assert sshd.wait_log(
        "Accepted keyboard-interactive/pam for alice from 127.0.0.1")


@pytest.mark.parametrize("method", ["password", "keyboard-interactive"])
def test_wrong_password_fails(sshd, client, method):
    res, prompts = client.login(method, "not the password")
    assert res.returncode == 255, res.stdout + res.stderr
    assert "ok" not in res.stdout.splitlines()
    assert "Permission denied" in res.stderr
    assert len(prompts) == 1
    label = "password" if method == "password" else "keyboard-interactive/pam"
    assert sshd.wait_log(f"Failed {label} for alice from 127.0.0.1"), \
        sshd.log_text()
    assert "Accepted" not in sshd.log_text()


def test_unknown_user_fails(sshd, client):
    # mallory is neither in nss_wrapper's passwd nor in the passdb.
    res, _ = client.login("password", PASSWORD, user="mallory")
    assert res.returncode == 255
    assert sshd.wait_log("Invalid user mallory"), sshd.log_text()


def test_password_change_in_passdb_is_seen(sshd, client):
    # The server reads the passdb at each login: the pam_matrix service
    # file, not /etc/pam.d/sshd, decides.
    sshd.passdb.write_text("alice:other pass:sshd\n")
    res, _ = client.login("password", PASSWORD)
    assert res.returncode == 255
    res, _ = client.login("password", "other pass")
    assert res.returncode == 0, res.stderr
    assert res.stdout.splitlines()[0] == "ok"


def test_several_logins_leave_nothing_behind(sshd, client):
    # Sequential logins each fork, re-exec and spawn a session: the
    # fixture's teardown checks that all of them and their wrapper runtime
    # directories are gone.
    for _ in range(3):
        res, _ = client.login("password", PASSWORD, command="echo ok")
        assert res.returncode == 0, res.stderr
        assert res.stdout == "ok\n"
    # While the listener is still up, only it (and no per-connection
    # process) is left once the clients are done.
    def only_listener():
        return set(live_descendants()) == {sshd.proc.pid}
    assert wait_until(only_listener), live_descendants()
