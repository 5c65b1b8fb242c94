# SPDX-License-Identifier: BSD-3-Clause
#
# The pytest plugin's use_system() (src/python/pytest_pam_wrapper): the
# machine's stacks in this very process through pypamtest, with the test's
# users and groups given to nss_wrapper (ctest runs this file with
# `-p pytest_pam_wrapper -o pam_wrapper_nss=true`, so the plugin re-runs
# pytest with libpam_wrapper.so and libnss_wrapper.so preloaded).  What a
# test adds to nss_wrapper's files is gone after it (the tests below rely
# on their order for that).  Stacks whose flow depends on the caller
# (pam_unix asks root no old password) are avoided: this file runs as root
# and as nobody.
import grp
import json
import os
import pwd

import pytest

import pypamtest

HERE = os.path.dirname(os.path.abspath(__file__))
AUTH = pypamtest.PAMTEST_AUTHENTICATE
ACCOUNT = pypamtest.PAMTEST_ACCOUNT
SESSION = pypamtest.PAMTEST_OPEN_SESSION


def fails(code, op=AUTH):
    return pypamtest.TestCase(op, expected_rv=code)


def test_login_through_debian_login(pam_wrapper):
    d = pam_wrapper.use_system(users={"alice": "secret"}, services=["login"])
    assert d == os.environ["PAM_WRAPPER_SYSTEM_DIR"]
    assert pam_wrapper.service_dir == os.environ["PAM_WRAPPER_SERVICE_DIR"]
    assert sorted(os.listdir(pam_wrapper.service_dir))[:2] == [
        "common-account", "common-auth"]
    assert pwd.getpwnam("alice").pw_uid >= 1000
    pam_wrapper.run("login", "alice", [AUTH, ACCOUNT, SESSION],
                    echo_off=["secret"])
    pam_wrapper.run("login", "alice", [fails(pypamtest.PAM_AUTH_ERR)],
                    echo_off=["wrong"])
    pam_wrapper.run("login", "mallory", [fails(pypamtest.PAM_AUTH_ERR)],
                    echo_off=["secret"])
    # the real pam_nologin, with its file in the private directory
    with open(os.path.join(d, "nologin"), "w", encoding="utf-8") as f:
        f.write("closed for the test\n")
    res = pam_wrapper.run("login", "alice", [fails(pypamtest.PAM_AUTH_ERR)],
                          echo_off=["secret"])
    assert res.errors == ("closed for the test\n",)
    kinds = {(s["module"], s["as"]) for s in pam_wrapper.swaps}
    assert ("pam_unix.so", "matrix") in kinds
    assert ("pam_nologin.so", "state") in kinds
    # pam_systemd is in Debian's common-session when libpam-systemd is
    # installed (a minimal Debian 13 has none)
    with open("/etc/pam.d/common-session", encoding="utf-8") as f:
        session = [line.split("#")[0] for line in f]
    if any("pam_systemd.so" in line for line in session):
        assert ("pam_systemd.so", "standin") in kinds
    else:
        assert not any(m == "pam_systemd.so" for m, _ in kinds)


def test_the_users_are_gone_after_the_test(pam_wrapper):
    with pytest.raises(KeyError):
        pwd.getpwnam("alice")
    # and the next test starts from the fixture's own services
    assert "PAM_WRAPPER_SYSTEM_DIR" not in os.environ
    assert os.listdir(pam_wrapper.service_dir) == ["matrix"]


def test_groups_and_the_trace(pam_wrapper):
    trace = pam_wrapper.enable_trace()
    pam_wrapper.use_system(users=[("bob", "pw")], groups={"wheel": ["bob"]},
                           services=["sudo"])
    pam_wrapper.add_user("carol", "pw2")
    pam_wrapper.add_group("staff", ["carol", "bob"])
    assert grp.getgrnam("wheel").gr_mem == ["bob"]
    assert grp.getgrnam("staff").gr_mem == ["carol", "bob"]
    assert pwd.getpwnam("carol").pw_uid != pwd.getpwnam("bob").pw_uid
    pam_wrapper.run("sudo", "carol", [AUTH], echo_off=["pw2"])
    recs = pam_wrapper.trace
    assert recs[0]["kind"] == "swap", recs[0]
    with open(trace, encoding="utf-8") as f:
        assert json.loads(f.readline())["kind"] == "swap"
    unix = [r for r in recs if r["kind"] == "swap"
            and r["module"] == "pam_unix.so"]
    line = unix[0]["where"].rsplit(":", 1)[1]
    called = [r for r in recs if r["kind"] == "module"
              and r["where"].endswith("/common-auth:" + line)]
    assert called and called[0]["rc"] == "PAM_SUCCESS"


def test_faillock_of_the_authselect_stack(pam_wrapper):
    d = pam_wrapper.use_system(users={"dave": "Right-pass-1"},
                               source=os.path.join(HERE, "authselect"),
                               services=["login"])
    pam_wrapper.run("login", "dave", [AUTH], echo_off=["Right-pass-1"])
    for i in range(3):
        pam_wrapper.run("login", "dave", [fails(pypamtest.PAM_AUTH_ERR)],
                        echo_off=["bad-%d" % i])
    pam_wrapper.run("login", "dave", [fails(pypamtest.PAM_AUTH_ERR)],
                    echo_off=["Right-pass-1"])
    assert os.path.getsize(os.path.join(d, "faillock", "dave")) > 0


def test_a_swapped_module(pam_wrapper, tmp_path):
    pamd = tmp_path / "pam.d"
    pamd.mkdir()
    (pamd / "app").write_text(
        "auth    requisite pam_exec.so quiet /bin/false\n"
        "auth    required  pam_unix.so\n")
    pam_wrapper.use_system(users={"erin": "pw"}, source=str(pamd),
                           swaps={"pam_exec": "standin"})
    pam_wrapper.run("app", "erin", [AUTH], echo_off=["pw"])
    assert [(s["module"], s["as"], s["why"]) for s in pam_wrapper.swaps] == [
        ("pam_exec.so", "standin", "--swap"),
        ("pam_unix.so", "matrix", pam_wrapper.swaps[1]["why"])]
