# SPDX-License-Identifier: BSD-3-Clause
#
# Debian's pamtester (an ordinary PAM application: libpam + libpam_misc's
# conversation reading answers from stdin) runs its operations through
# pam_matrix under libpam_wrapper.so, without root.
import pytest

from conftest import need_program, run

PAMTESTER = "/usr/bin/pamtester"


@pytest.fixture
def matrix(work):
    """Service "matrix" (pam_matrix in every group, verbose) and its passdb."""
    passdb = work.passdb(("alice", "secret", "matrix"),
                         ("bob", "bobpw", "elsewhere"))
    opts = f"passdb={passdb}"
    work.service("matrix",
                 f"auth     required pam_matrix.so {opts} verbose",
                 f"account  required pam_matrix.so {opts}",
                 f"password required pam_matrix.so {opts}",
                 f"session  required pam_matrix.so {opts}")
    return passdb


def pamtester(work, service, user, *ops, answers=(), **env):
    argv = [need_program(PAMTESTER), "-v", service, user, *ops]
    stdin = "".join(a + "\n" for a in answers)
    return run(argv, work.env(**env), stdin_text=stdin)


def test_all_operations(work, matrix):
    res = pamtester(work, "matrix", "alice", "authenticate", "acct_mgmt",
                    "open_session", "close_session", "chauthtok",
                    answers=["secret", "secret", "new pw", "new pw"])
    assert res.returncode == 0, res.stdout + res.stderr
    out = res.stdout
    for line in ("pamtester: successfully authenticated",
                 "pamtester: account management done.",
                 "pamtester: successfully opened a session",
                 "pamtester: session has successfully been closed.",
                 "pamtester: authentication token altered successfully."):
        assert line in out
    # pam_matrix's verbose message is a PAM_TEXT_INFO: pamtester prints it.
    assert "Authentication succeeded" in out
    # pam_matrix's prompts, in the order the operations asked for them
    # (libpam_misc writes prompts to stderr).
    err = res.stderr
    prompts = ["Password: ", "Old password: ", "New Password :",
               "Verify New Password :"]
    positions = [err.find(p) for p in prompts]
    assert -1 not in positions and positions == sorted(positions), err
    # The password change reached the passdb; the old password is dead.
    assert matrix.read_text() == ("alice:new pw:matrix\n"
                                  "bob:bobpw:elsewhere\n")
    res = pamtester(work, "matrix", "alice", "authenticate",
                    answers=["secret"])
    assert res.returncode != 0
    res = pamtester(work, "matrix", "alice", "authenticate",
                    answers=["new pw"])
    assert res.returncode == 0, res.stderr


def test_wrong_password_verbose(work, matrix):
    res = pamtester(work, "matrix", "alice", "authenticate",
                    answers=["wrong"])
    assert res.returncode == 1
    # verbose: pam_matrix's PAM_ERROR_MSG, then pamtester's own report.
    assert "Authentication failed" in res.stderr
    assert "pamtester: Authentication failure" in res.stderr
    assert "successfully" not in res.stdout


def test_not_verbose_is_silent(work):
    passdb = work.passdb(("alice", "secret", "quiet"))
    work.service("quiet", f"auth required pam_matrix.so passdb={passdb}")
    res = pamtester(work, "quiet", "alice", "authenticate",
                    answers=["secret"])
    assert res.returncode == 0, res.stderr
    assert "Authentication succeeded" not in res.stdout + res.stderr
    res = pamtester(work, "quiet", "alice", "authenticate",
                    answers=["wrong"])
    assert res.returncode == 1
    assert "Authentication failed" not in res.stdout + res.stderr


def test_acct_mgmt_checks_service(work, matrix):
    # bob's passdb line names another service: pam_matrix's account
    # management refuses him here.
    res = pamtester(work, "matrix", "bob", "authenticate", "acct_mgmt",
                    answers=["bobpw"])
    assert res.returncode == 1
    assert "pamtester: successfully authenticated" in res.stdout
    assert "account management done" not in res.stdout


def test_chauthtok_wrong_old_password(work, matrix):
    res = pamtester(work, "matrix", "alice", "chauthtok",
                    answers=["not secret", "x", "x"])
    assert res.returncode == 1
    assert matrix.read_text().startswith("alice:secret:matrix\n")


def test_chauthtok_mismatch(work, matrix):
    res = pamtester(work, "matrix", "alice", "chauthtok",
                    answers=["secret", "one", "two"])
    assert res.returncode == 1
    assert "Passwords do not match" in res.stderr
    assert matrix.read_text().startswith("alice:secret:matrix\n")


def test_passdb_from_environment(work):
    # Without passdb=, pam_matrix reads PAM_MATRIX_PASSWD.
    passdb = work.passdb(("carol", "pw", "envdb"), name="envdb")
    work.service("envdb", "auth required pam_matrix.so verbose")
    res = pamtester(work, "envdb", "carol", "authenticate", answers=["pw"],
                    PAM_MATRIX_PASSWD=passdb)
    assert res.returncode == 0, res.stderr
    assert "Authentication succeeded" in res.stdout


def test_without_wrapper_uses_system_config(work, matrix):
    # Control: the same command with PAM_WRAPPER=0 reads /etc/pam.d, where
    # no "matrix" service exists, so pam_matrix never runs.
    res = pamtester(work, "matrix", "alice", "authenticate",
                    answers=["secret"], PAM_WRAPPER="0")
    assert res.returncode != 0
    assert "Authentication succeeded" not in res.stdout
