# SPDX-License-Identifier: BSD-3-Clause
#
# Debian's sshd against Debian's own /etc/pam.d/sshd (issue 36): the stack
# is copied by `pam_wrapper --system --service sshd --prepare DIR`, its
# pam_unix becomes pam_matrix as=pam_unix with the test's user, its
# pam_nologin and pam_env run for real with their files in DIR/state, the
# modules that need a system service (pam_selinux, pam_loginuid,
# pam_keyinit, pam_motd, pam_mail, pam_limits, pam_systemd) are stand-ins.
# The server, the client and the teardown checks are test_sshd.py's (an
# unprivileged sshd logs in its own uid only, so alice has sshd's uid in
# nss_wrapper's passwd).
import os
import subprocess

import pytest

from conftest import (HANG, live_descendants, set_subreaper, sweep_dead_dirs,
                      wait_until)
from test_sshd import PASSWORD, Client, Sshd, remote_values
# run here with this file's fixtures (the system's stack)
from test_sshd import test_unknown_user_fails  # noqa: F401
from test_sshd import test_wrong_password_fails  # noqa: F401


class SystemSshd(Sshd):
    """test_sshd.py's server with the system's sshd stack."""

    def __init__(self, work):
        super().__init__(work)
        self.prepared = self.dir / "system"
        launcher = os.path.join(os.environ["PWRAP_BIN_DIR"], "pam_wrapper")
        res = subprocess.run(
            [launcher, "--system", "--service", "sshd",
             "--user", f"alice:{PASSWORD}", "--prepare", str(self.prepared)],
            env=work.env(LD_PRELOAD=None, PAM_WRAPPER=None),
            stdin=subprocess.DEVNULL, capture_output=True, text=True,
            timeout=HANG)
        assert res.returncode == 0, res.stderr
        self.report = res.stderr

    def env(self):
        # (the copy's pam_matrix lines name the passdb themselves: sshd's
        # keyboard-interactive child clears its environment)
        return dict(super().env(),
                    PAM_WRAPPER_SERVICE_DIR=str(self.prepared / "pam.d"),
                    PAM_WRAPPER_SYSTEM_DIR=str(self.prepared / "state"))


@pytest.fixture
def sshd(work):
    if not os.path.exists("/etc/pam.d/sshd"):
        pytest.fail("/etc/pam.d/sshd is missing: install openssh-server "
                    "(scripts/install-deps.sh)")
    set_subreaper(True)
    server = SystemSshd(work)
    try:
        server.start()
        yield server
    finally:
        try:
            server.stop()
            assert wait_until(lambda: not live_descendants()), \
                "sshd's processes outlived it"
            sweep_dead_dirs(work, server.uid, server.gid)
        finally:
            set_subreaper(False)


@pytest.fixture
def client(work, sshd):
    return Client(work, sshd)


def test_the_stack_is_the_systems(sshd):
    assert "pam_unix becomes pam_matrix.so as=pam_unix" in sshd.report
    assert "pam_nologin runs with its files in the private directory" \
        in sshd.report
    assert "pam_selinux becomes the stand-in pam_double.so" in sshd.report
    with open(sshd.prepared / "pam.d" / "sshd", encoding="utf-8") as f:
        copy = f.read()
    assert "@include common-auth" in copy and "pam_nologin.so file=" in copy


def test_password_login(sshd, client):
    res, prompts = client.login("password", PASSWORD)
    assert res.returncode == 0, res.stderr + sshd.log_text()
    values = remote_values(res.stdout)
    assert res.stdout.splitlines()[0] == "ok"
    assert values["home"] == str(sshd.home)
    assert values["uid"] == str(sshd.uid)
    # pam_matrix as=pam_unix sets no HOMEDIR (pam_unix does not)
    assert values["homedir"] == ""
    assert prompts == ["alice@127.0.0.1's password: "]
    assert sshd.wait_log("Accepted password for alice from 127.0.0.1")


def test_keyboard_interactive_login(sshd, client):
    res, prompts = client.login("keyboard-interactive", PASSWORD)
    assert res.returncode == 0, res.stderr + sshd.log_text()
    # the prompt is pam_unix's (libpam's "Password: "), relayed by sshd
    assert len(prompts) == 1 and prompts[0].endswith("Password: "), prompts


def test_nologin_refuses(sshd, client):
    """The real pam_nologin of the sshd stack's account phase, with its
    file in the private directory."""
    nologin = sshd.prepared / "state" / "nologin"
    nologin.write_text("closed\n")
    if os.getuid() == 0:
        os.chown(nologin, sshd.uid, sshd.gid)
    res, _ = client.login("password", PASSWORD)
    assert res.returncode == 255, res.stdout + res.stderr
    assert "ok" not in res.stdout.splitlines()
    assert "Accepted" not in sshd.log_text()
    nologin.unlink()
    res, _ = client.login("password", PASSWORD)
    assert res.returncode == 0, res.stderr + sshd.log_text()
