# SPDX-License-Identifier: BSD-3-Clause
"""Example tests with the pam_wrapper fixture.

Each test gets its own service directory and pam_matrix passdb: the users
one test adds or whose password it changes do not exist in the next test.
The default service ("matrix") stacks pam_matrix on that passdb for auth,
account, password and session.
"""
import os

import pypamtest
import pytest

AUTH = pypamtest.PAMTEST_AUTHENTICATE
ACCOUNT = pypamtest.PAMTEST_ACCOUNT
CHAUTHTOK = pypamtest.PAMTEST_CHAUTHTOK
OPEN = pypamtest.PAMTEST_OPEN_SESSION
GETENV = pypamtest.PAMTEST_GETENVLIST


def test_login(pam_wrapper):
    pam_wrapper.add_user("alice", "secret")
    pam_wrapper.run("matrix", "alice", [AUTH, ACCOUNT], echo_off=["secret"])


def test_wrong_password(pam_wrapper):
    pam_wrapper.add_user("alice", "secret")
    with pytest.raises(pypamtest.PamTestError) as e:
        pam_wrapper.run("matrix", "alice", [AUTH], echo_off=["guess"])
    assert "PAM_AUTH_ERR" in str(e.value)


def test_account_of_another_service(pam_wrapper):
    # pam_matrix lets a user in only for the service of its passdb line.
    pam_wrapper.add_user("bob", "secret", service="sshd")
    pam_wrapper.run(None, "bob",
                    [AUTH, pypamtest.TestCase(ACCOUNT, pypamtest.PAM_PERM_DENIED)],
                    echo_off=["secret"])


def test_account_states(pam_wrapper):
    # A fourth passdb field of flags: pam_matrix's account states.
    pam_wrapper.add_user("dave", "secret", flags=["expired"])
    pam_wrapper.add_user("erin", "secret", flags="must_change")
    pam_wrapper.run(None, "dave",
                    [AUTH, pypamtest.TestCase(ACCOUNT, pypamtest.PAM_ACCT_EXPIRED)],
                    echo_off=["secret"])
    pam_wrapper.run(None, "erin",
                    [AUTH, pypamtest.TestCase(ACCOUNT, pypamtest.PAM_NEW_AUTHTOK_REQD),
                     CHAUTHTOK, ACCOUNT],
                    echo_off=["secret", "secret", "new", "new"])


def test_password_change(pam_wrapper):
    pam_wrapper.add_user("alice", "old")
    pam_wrapper.run(None, "alice", [CHAUTHTOK], echo_off=["old", "new", "new"])
    pam_wrapper.run(None, "alice", [AUTH], echo_off=["new"])
    with open(pam_wrapper.passdb) as f:
        assert f.read() == "alice:new:matrix\n"


def test_own_service(pam_wrapper):
    # Any stack: our modules and the system's, by bare name.
    pam_wrapper.add_service("chatty", [
        "auth required pam_chatty.so info num_lines=2",
        "auth required pam_permit.so",
        "session required pam_matrix.so passdb=" + pam_wrapper.passdb,
    ])
    pam_wrapper.add_user("carol", "x", service="chatty")
    env = pypamtest.TestCase(GETENV)
    res = pam_wrapper.run("chatty", "carol", [AUTH, OPEN, env])
    assert res.info == ("Authentication succeeded",) * 2
    assert env.pam_env["HOMEDIR"] == "/home/carol"


def test_conversation_faults(pam_wrapper):
    # As upstream's: pam_matrix turns a conversation that fails, or that
    # returns no reply array, into PAM_AUTHINFO_UNAVAIL and a NULL answer
    # into PAM_CRED_ERR; a 2048-character answer is just a wrong password.
    pam_wrapper.add_user("alice", "secret")
    unavail = [pypamtest.TestCase(AUTH, pypamtest.PAM_AUTHINFO_UNAVAIL)]
    cred_err = [pypamtest.TestCase(AUTH, pypamtest.PAM_CRED_ERR)]
    pam_wrapper.run(None, "alice", unavail, echo_off=["secret"],
                    conv_fail_at=1, conv_fail_code=pypamtest.PAM_BUF_ERR)
    pam_wrapper.run(None, "alice", unavail, conv_null_resp_at=1)
    pam_wrapper.run(None, "alice", cred_err, conv_null_entry_at=1)
    pam_wrapper.run(None, "alice",
                    [pypamtest.TestCase(AUTH, pypamtest.PAM_AUTH_ERR)],
                    conv_long_answer=True)


def test_where_things_are(pam_wrapper):
    assert os.environ["PAM_WRAPPER_SERVICE_DIR"] == pam_wrapper.service_dir
    assert os.environ["PAM_MATRIX_PASSWD"] == pam_wrapper.passdb
    assert os.path.isdir(pam_wrapper.runtime_dir)
    assert pam_wrapper.default_service == "matrix"
