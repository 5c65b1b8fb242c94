# SPDX-License-Identifier: BSD-3-Clause
#
# The stacking test: pam_set_items -> pam_unix -> pam_get_items, run by a
# python3-pam application under libpam_wrapper.so, as a normal user.
#
#   auth required pam_set_items.so     PAM_AUTHTOK (etc.) from the process
#                                      environment become PAM items
#   auth required pam_unix.so OPTION   Debian's pam_unix, use_first_pass or
#                                      try_first_pass
#   auth required pam_get_items.so     the items as pam_unix left them are
#                                      copied into the PAM environment
#
# All three are "required", so the stack always reaches pam_get_items and
# pam_authenticate returns pam_unix's verdict.
#
# Decision (what is provable without root and without touching /etc):
# pam_unix verifies a password in-process only when the passwd entry itself
# carries the hash; a shadowed entry ("x") sends it to /etc/shadow, which as
# non-root means the setuid unix_chkpwd helper, and setuid programs ignore
# LD_PRELOAD, so no wrapper can help there.  We therefore give the test
# user "carol" a SHA-512 crypt hash in an nss_wrapper passwd file (pam_unix
# finds her through getpwnam_r, which nss_wrapper serves), and pam_unix
# really checks her password, as root and as nobody alike.  A user nobody
# knows ("ghost") gives PAM_USER_UNKNOWN, and the shadowed account shows
# the limit.
#
# What Debian's pam_unix 1.5.2 does with the options (asserted below):
# libpam's pam_get_authtok always uses a PAM_AUTHTOK that is already set, so
# with a token from pam_set_items neither option prompts, and a wrong token
# fails at once (pam_unix does not re-prompt after a failed first pass).
# Without a token, use_first_pass fails without prompting and try_first_pass
# prompts; the answer then decides and is what pam_get_items reports.
import pwd

import pytest

from conftest import cwrap_lib, preload, run_driver

# openssl passwd -6 -salt pwrapsalt unixpw
CAROL_HASH = ("$6$pwrapsalt$kg75Snjuff5jnEwFHep.FilQ5XptefnvEIEVqzG7lAn3oH."
              "xkoZeC./o80R2OurGwOxmQOqKjsypKxi6mj5u/0")
PASSWORD = "unixpw"

PAM_SUCCESS = 0
PAM_AUTH_ERR = 7
PAM_USER_UNKNOWN = 10


@pytest.fixture
def accounts(work):
    for name in ("carol", "dave", "ghost"):
        try:
            pwd.getpwnam(name)
            pytest.skip(f"this system has a user {name}: the test needs "
                        "it to exist only in nss_wrapper's passwd")
        except KeyError:
            pass
    passwd = work.file("passwd",
                       f"carol:{CAROL_HASH}:1000:1000:Carol:/home/carol:"
                       "/bin/sh\n"
                       "dave:x:1001:1001:Dave:/home/dave:/bin/sh\n")
    group = work.file("group", "carol:x:1000:\ndave:x:1001:\n")
    return {"LD_PRELOAD": preload(cwrap_lib("libnss_wrapper.so")),
            "NSS_WRAPPER_PASSWD": passwd, "NSS_WRAPPER_GROUP": group}


def stack(work, option):
    work.service("stacking",
                 "auth required pam_set_items.so",
                 # nodelay: no 2 s failure delay per failed attempt.
                 f"auth required pam_unix.so nodelay {option}".rstrip(),
                 "auth required pam_get_items.so")


def authenticate(work, accounts, user, items=None, answers=()):
    env = dict(accounts)
    env.update(items or {})
    out = run_driver(work, {"service": "stacking", "user": user,
                            "answers": list(answers),
                            "ops": ["authenticate"]},
                     env=work.env(**env))
    result = out["results"][0]
    prompts = [c["msg"] for c in out["conversation"]
               if c["style"].startswith("echo")]
    return result["rc"], result["env"], prompts, out["stderr"]


OPTIONS = ["use_first_pass", "try_first_pass"]


@pytest.mark.parametrize("option", OPTIONS)
def test_token_from_pam_set_items_is_used(work, accounts, option):
    stack(work, option)
    rc, env, prompts, _ = authenticate(
        work, accounts, "carol",
        items={"PAM_AUTHTOK": PASSWORD, "PAM_RHOST": "client.example",
               "PAM_RUSER": "remote-carol"})
    assert rc == PAM_SUCCESS
    assert prompts == []
    # pam_get_items ran after pam_unix and saw every item.
    assert env["PAM_USER"] == "carol"
    assert env["PAM_SERVICE"] == "stacking"
    assert env["PAM_AUTHTOK"] == PASSWORD
    assert env["PAM_RHOST"] == "client.example"
    assert env["PAM_RUSER"] == "remote-carol"


@pytest.mark.parametrize("option", OPTIONS)
def test_wrong_token_fails_without_prompt(work, accounts, option):
    stack(work, option)
    rc, env, prompts, _ = authenticate(work, accounts, "carol",
                                       items={"PAM_AUTHTOK": "wrong"},
                                       answers=[PASSWORD])
    assert rc == PAM_AUTH_ERR
    assert prompts == []
    assert env["PAM_AUTHTOK"] == "wrong"


def test_use_first_pass_without_token_never_prompts(work, accounts):
    stack(work, "use_first_pass")
    rc, env, prompts, stderr = authenticate(work, accounts, "carol",
                                            answers=[PASSWORD])
    assert rc == PAM_AUTH_ERR
    assert prompts == []
    assert "PAM_AUTHTOK" not in env
    assert env["PAM_USER"] == "carol"
    # pam_unix's pam_syslog line, routed to stderr by the wrapper.
    assert "could not identify password for [carol]" in stderr
    assert "SYSLOG(" in stderr


@pytest.mark.parametrize("answer,expected", [(PASSWORD, PAM_SUCCESS),
                                             ("wrong", PAM_AUTH_ERR)])
def test_try_first_pass_without_token_prompts(work, accounts, answer,
                                              expected):
    stack(work, "try_first_pass")
    rc, env, prompts, _ = authenticate(work, accounts, "carol",
                                       answers=[answer])
    assert rc == expected
    assert prompts == ["Password: "]
    # The answer became PAM_AUTHTOK for the modules after pam_unix.
    assert env["PAM_AUTHTOK"] == answer


@pytest.mark.parametrize("option", OPTIONS)
def test_unknown_user(work, accounts, option):
    stack(work, option)
    rc, env, prompts, _ = authenticate(work, accounts, "ghost",
                                       items={"PAM_AUTHTOK": PASSWORD})
    assert rc == PAM_USER_UNKNOWN
    assert prompts == []
    assert env["PAM_USER"] == "ghost"
    assert env["PAM_AUTHTOK"] == PASSWORD


def test_shadowed_account_is_out_of_reach(work, accounts):
    # dave's passwd entry says "x": pam_unix wants /etc/shadow (through the
    # setuid helper as non-root), which the wrapper cannot redirect.  The
    # right password still fails, and pam_get_items still ran.
    stack(work, "use_first_pass")
    rc, env, prompts, _ = authenticate(work, accounts, "dave",
                                       items={"PAM_AUTHTOK": PASSWORD})
    assert rc != PAM_SUCCESS
    assert prompts == []
    assert env["PAM_USER"] == "dave"


def test_without_nss_wrapper_carol_is_unknown(work, accounts):
    # Control: the same stack without nss_wrapper cannot find carol in the
    # system's passwd, so the success above came from the wrapped account.
    stack(work, "use_first_pass")
    env = {"LD_PRELOAD": preload()}
    rc, _, prompts, _ = authenticate(work, env, "carol",
                                     items={"PAM_AUTHTOK": PASSWORD})
    assert rc == PAM_USER_UNKNOWN
    assert prompts == []
