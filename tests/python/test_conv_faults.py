# SPDX-License-Identifier: BSD-3-Clause
#
# run_pamtest()'s conversation faults (conv_fail_at, conv_fail_code,
# conv_null_resp_at, conv_null_entry_at, conv_long_answer(_at, _len))
# against our modules through the real libpam: the exact code each module
# returns for each fault on each of its calls, the messages a faulted call
# drops, long answers arriving whole, kept handles, and the checks of the
# arguments.
import os

import pytest

import pypamtest
from conftest import our_module

AUTH = pypamtest.PAMTEST_AUTHENTICATE
ACCOUNT = pypamtest.PAMTEST_ACCOUNT
CHAUTHTOK = pypamtest.PAMTEST_CHAUTHTOK
GETENV = pypamtest.PAMTEST_GETENVLIST
KEEP = pypamtest.PAMTEST_KEEPHANDLE
EVERY = pypamtest.PAMTEST_CONV_EVERY_CALL
Case = pypamtest.TestCase

LONG_LEN = pypamtest.PAMTEST_CONV_LONG_ANSWER_LEN


def long_answer(n=LONG_LEN):
    """What the long-answer fault sends: "abcd...zabc...", n characters."""
    return "".join(chr(ord("a") + i % 26) for i in range(n))


@pytest.fixture
def matrix(svc):
    """Services over one passdb: neo/secret and a user whose password is
    the long answer."""
    db = svc.passdb(("neo", "secret", "matrix"),
                    ("longpw", long_answer(), "matrix"),
                    ("pw600", long_answer(600), "matrix"))
    mod = our_module("pam_matrix.so")
    svc.service("matrix", *("%s required %s passdb=%s" % (g, mod, db)
                            for g in ("auth", "account", "password")))
    svc.service("verbose", "auth required %s passdb=%s verbose" % (mod, db))
    svc.service("items", "auth required %s passdb=%s" % (mod, db),
                "auth required %s" % our_module("pam_get_items.so"))
    svc.service("chatty", "auth required %s info error num_lines=2"
                % our_module("pam_chatty.so"))
    svc.db = db
    return svc


def passdb_text(svc):
    with open(svc.db, encoding="utf-8") as f:
        return f.read()


# As upstream's pam_matrix (tests/modules/test_module_table.c): a failed
# call or no reply array is PAM_AUTHINFO_UNAVAIL, a NULL answer to a
# password it checks PAM_CRED_ERR.
@pytest.mark.parametrize("faults, rv", [
    ({}, pypamtest.PAM_SUCCESS),
    ({"conv_fail_at": 1}, pypamtest.PAM_AUTHINFO_UNAVAIL),
    ({"conv_fail_at": 1, "conv_fail_code": pypamtest.PAM_BUF_ERR},
     pypamtest.PAM_AUTHINFO_UNAVAIL),
    ({"conv_fail_at": EVERY}, pypamtest.PAM_AUTHINFO_UNAVAIL),
    ({"conv_null_resp_at": 1}, pypamtest.PAM_AUTHINFO_UNAVAIL),
    ({"conv_null_entry_at": 1}, pypamtest.PAM_CRED_ERR),
    ({"conv_long_answer": True}, pypamtest.PAM_AUTH_ERR),
    ({"conv_long_answer_at": 1, "conv_long_answer_len": 513},
     pypamtest.PAM_AUTH_ERR),
    ({"conv_fail_at": 2}, pypamtest.PAM_SUCCESS),
])
def test_matrix_authenticate(matrix, faults, rv):
    pypamtest.run_pamtest("neo", "matrix", [Case(AUTH, rv)],
                          echo_off=["secret"], **faults)


def test_failed_case_raises_as_usual(matrix):
    with pytest.raises(pypamtest.PamTestError) as e:
        pypamtest.run_pamtest("neo", "matrix", [Case(AUTH)],
                              echo_off=["secret"], conv_fail_at=1)
    assert e.value.args[0].endswith(
        "returned [%d] (PAM_AUTHINFO_UNAVAIL)"
        % pypamtest.PAM_AUTHINFO_UNAVAIL)


def test_long_answer_is_taken_whole(matrix):
    pypamtest.run_pamtest("longpw", "matrix", [Case(AUTH)],
                          conv_long_answer=True)
    pypamtest.run_pamtest("pw600", "matrix", [Case(AUTH)],
                          conv_long_answer_at=1, conv_long_answer_len=600)
    pypamtest.run_pamtest("pw600", "matrix",
                          [Case(AUTH, pypamtest.PAM_AUTH_ERR)],
                          conv_long_answer_at=1, conv_long_answer_len=599)
    case = Case(GETENV)
    pypamtest.run_pamtest("longpw", "items", [Case(AUTH), case],
                          conv_long_answer=True)
    assert case.pam_env["PAM_AUTHTOK"] == long_answer()
    case = Case(GETENV)
    pypamtest.run_pamtest("longpw", "items",
                          [Case(AUTH, pypamtest.PAM_CRED_ERR), case],
                          conv_null_entry_at=1)
    assert "PAM_AUTHTOK" not in case.pam_env


def test_verbose_message_faults(matrix):
    # Call 2 is the "Authentication succeeded" message: a fault there
    # drops it and changes nothing else.
    for faults in ({"conv_fail_at": 2}, {"conv_null_resp_at": 2},
                   {"conv_null_entry_at": 2}):
        res = pypamtest.run_pamtest("neo", "verbose", [Case(AUTH)],
                                    echo_off=["secret"], **faults)
        assert res.info == () and res.errors == ()
    res = pypamtest.run_pamtest("neo", "verbose", [Case(AUTH)],
                                echo_off=["secret"], conv_long_answer_at=2)
    assert res.info == ("Authentication succeeded",)


@pytest.mark.parametrize("code", [pypamtest.PAM_CONV_ERR, pypamtest.PAM_BUF_ERR,
                                  pypamtest.PAM_SYSTEM_ERR, pypamtest.PAM_ABORT])
def test_fail_code_reaches_the_module(svc, code):
    # pam_lpt_test (tests/libpamtest) returns what the failed call returned.
    lpt = os.environ.get("PWRAP_LPT_MODULE")
    if not lpt or not os.path.exists(lpt):
        pytest.skip("PWRAP_LPT_MODULE (pam_lpt_test.so) is not set")
    svc.service("lpt", "auth required %s info=hello off=x" % lpt)
    kw = {} if code == pypamtest.PAM_CONV_ERR else {"conv_fail_code": code}
    res = pypamtest.run_pamtest("neo", "lpt", [Case(AUTH, code)],
                                echo_off=["x"], conv_fail_at=2, **kw)
    assert res.info == ("hello",)
    pypamtest.run_pamtest("neo", "lpt", [Case(AUTH, code)],
                          echo_off=["x"], conv_fail_at=EVERY, **kw)


@pytest.mark.parametrize("faults, rv", [
    ({"conv_fail_at": 1}, pypamtest.PAM_AUTHINFO_UNAVAIL),
    ({"conv_null_resp_at": 1}, pypamtest.PAM_AUTHINFO_UNAVAIL),
    ({"conv_null_entry_at": 1}, pypamtest.PAM_CRED_ERR),
    ({"conv_long_answer_at": 1}, pypamtest.PAM_AUTH_ERR),
    ({"conv_fail_at": 2}, pypamtest.PAM_AUTHINFO_UNAVAIL),
    ({"conv_fail_at": 2, "conv_fail_code": pypamtest.PAM_BUF_ERR},
     pypamtest.PAM_AUTHINFO_UNAVAIL),
    ({"conv_null_resp_at": 2}, pypamtest.PAM_AUTHINFO_UNAVAIL),
    # ours: upstream says PAM_SUCCESS for a NULL new password
    ({"conv_null_entry_at": 2}, pypamtest.PAM_AUTHTOK_ERR),
    ({"conv_null_entry_at": 3}, pypamtest.PAM_AUTHINFO_UNAVAIL),
    ({"conv_fail_at": 3}, pypamtest.PAM_AUTHINFO_UNAVAIL),
    ({"conv_long_answer_at": 2}, pypamtest.PAM_AUTHINFO_UNAVAIL),
])
def test_matrix_chauthtok(matrix, faults, rv):
    before = passdb_text(matrix)
    pypamtest.run_pamtest("neo", "matrix", [Case(CHAUTHTOK, rv)],
                          echo_off=["secret", "new", "new"], **faults)
    assert passdb_text(matrix) == before


def test_chauthtok_to_a_long_password(matrix):
    pypamtest.run_pamtest("longpw", "matrix", [Case(CHAUTHTOK), Case(AUTH)],
                          conv_long_answer=True)
    assert "longpw:%s:matrix\n" % long_answer() in passdb_text(matrix)


@pytest.mark.parametrize("at", [1, 2, 3, 4])
def test_chatty(matrix, at):
    info = ("Authentication succeeded",) * 2
    errors = ("Authentication generated an error",) * 2
    got = list(info + errors)
    del got[at - 1]
    # As upstream's: a failed call, whatever its code, stops nothing and
    # fails nothing; its message is not recorded.
    for code in (pypamtest.PAM_CONV_ERR, pypamtest.PAM_BUF_ERR,
                 pypamtest.PAM_SYSTEM_ERR):
        res = pypamtest.run_pamtest("neo", "chatty", [Case(AUTH)],
                                    conv_fail_at=at, conv_fail_code=code)
        assert list(res.info + res.errors) == got
    # Messages need no answer: no array or NULL answers are fine, the
    # faulted call's message is not recorded.
    for kw in ("conv_null_resp_at", "conv_null_entry_at"):
        res = pypamtest.run_pamtest("neo", "chatty", [Case(AUTH)], **{kw: at})
        assert len(res.info) + len(res.errors) == 3
        assert list(res.info + res.errors) == got
    res = pypamtest.run_pamtest("neo", "chatty", [Case(AUTH)],
                                conv_long_answer_at=at)
    assert res.info == info and res.errors == errors


def test_calls_are_counted_across_cases(matrix):
    # authenticate is call 1, the second authenticate call 2.
    pypamtest.run_pamtest("neo", "matrix",
                          [Case(AUTH),
                           Case(AUTH, pypamtest.PAM_AUTHINFO_UNAVAIL)],
                          echo_off=["secret", "secret"], conv_fail_at=2)
    pypamtest.run_pamtest("neo", "matrix",
                          [Case(AUTH, pypamtest.PAM_AUTHINFO_UNAVAIL),
                           Case(AUTH)],
                          echo_off=["secret"], conv_null_resp_at=1)


def test_faults_on_a_kept_handle(matrix):
    keep = Case(KEEP)
    pypamtest.run_pamtest("neo", "matrix", [Case(AUTH), keep],
                          echo_off=["secret"], conv_fail_at=5)
    # The next run on the handle has its own faults and numbering.
    keep2 = Case(KEEP)
    pypamtest.run_pamtest("neo", "matrix",
                          [Case(AUTH, pypamtest.PAM_CRED_ERR), keep2],
                          echo_off=["secret"], conv_null_entry_at=1,
                          handle=keep.pam_handle)
    # And none when none are asked for.
    pypamtest.run_pamtest("neo", "matrix", [Case(AUTH), Case(ACCOUNT)],
                          echo_off=["secret"], handle=keep2.pam_handle)


@pytest.mark.parametrize("kwargs, exc", [
    ({"conv_fail_at": -1}, ValueError),
    ({"conv_fail_at": EVERY + 1}, ValueError),
    ({"conv_fail_at": 2 ** 80}, ValueError),
    ({"conv_fail_at": True}, TypeError),
    ({"conv_fail_at": "1"}, TypeError),
    ({"conv_null_resp_at": 1.0}, TypeError),
    ({"conv_null_entry_at": -5}, ValueError),
    ({"conv_long_answer_at": "x"}, TypeError),
    ({"conv_fail_code": pypamtest.PAM_SUCCESS}, ValueError),
    ({"conv_fail_code": "PAM_BUF_ERR"}, TypeError),
    ({"conv_long_answer_len": 0}, ValueError),
    ({"conv_long_answer_len": 2 ** 30}, ValueError),
    ({"conv_long_answer_len": True}, TypeError),
    ({"conv_long_answer": True, "conv_long_answer_at": 2}, TypeError),
    ({"conv_bogus_at": 1}, TypeError),
])
def test_bad_arguments(matrix, kwargs, exc):
    with pytest.raises(exc) as e:
        pypamtest.run_pamtest("neo", "matrix", [Case(AUTH)],
                              echo_off=["secret"], **kwargs)
    assert "conv_" in str(e.value)


def test_faults_are_keyword_only(matrix):
    with pytest.raises(TypeError):
        pypamtest.run_pamtest("neo", "matrix", [Case(AUTH)], ["secret"],
                              None, None, 1)


def test_none_and_zero_mean_no_fault(matrix):
    pypamtest.run_pamtest("neo", "matrix", [Case(AUTH)], echo_off=["secret"],
                          conv_fail_at=None, conv_fail_code=None,
                          conv_null_resp_at=0, conv_null_entry_at=None,
                          conv_long_answer=False, conv_long_answer_at=0,
                          conv_long_answer_len=None)
    # A length alone asks for no fault.
    pypamtest.run_pamtest("neo", "matrix", [Case(AUTH)], echo_off=["secret"],
                          conv_long_answer_len=600, conv_fail_code=7)


def test_constants():
    assert EVERY == 2 ** 32 - 1
    assert LONG_LEN == 2048 > 512
