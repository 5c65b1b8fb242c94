# SPDX-License-Identifier: BSD-3-Clause
#
# run_pamtest() against the real libpam under the wrapper: results,
# failures, the conversation (answers, messages, limits), GETENVLIST, the
# service directory changing inside one process and the GIL being released.
import os
import threading

import pytest

import pypamtest
from conftest import OPENPAM, lpt_module, our_module
from pwrap_fixtures import wait_until

AUTH = pypamtest.PAMTEST_AUTHENTICATE
SETCRED = pypamtest.PAMTEST_SETCRED
ACCOUNT = pypamtest.PAMTEST_ACCOUNT
OPEN = pypamtest.PAMTEST_OPEN_SESSION
CLOSE = pypamtest.PAMTEST_CLOSE_SESSION
CHAUTHTOK = pypamtest.PAMTEST_CHAUTHTOK
GETENV = pypamtest.PAMTEST_GETENVLIST

# Not named Test*: pytest would try to collect it.
Case = pypamtest.TestCase

CHATTY_INFO = "Authentication succeeded"
CHATTY_ERROR = "Authentication generated an error"


# The names the messages give the codes these tests see.
# (the values are the PAM implementation's: Linux-PAM's and OpenPAM's differ)
CODE_NAMES = {getattr(pypamtest, n): n
              for n in ("PAM_SUCCESS", "PAM_AUTH_ERR", "PAM_CONV_ERR")}


def failed_message(op, expected, flags, returned):
    """Upstream's text, then the returned code's name in parentheses."""
    return ("Error [2]: Test case { pam_operation [%d] expected_rv [%d] "
            "flags [%d] } returned [%d] (%s)"
            % (op, expected, flags, returned, CODE_NAMES[returned]))


def failed_prefix(op, expected, flags):
    """The text of a failed case up to its returned code."""
    return failed_message(op, expected, flags, 0).split(" returned [")[0]


def permit_all(svc, name="svc"):
    svc.service(name, *("%s required pam_permit.so" % t
                        for t in ("auth", "account", "session", "password")))


def assert_case_returns(user, service, op, rv, **kw):
    """A single case op returns rv: run expecting rv passes with no
    messages, and run expecting another code fails naming rv."""
    res = pypamtest.run_pamtest(user, service, [Case(op, expected_rv=rv)],
                                **kw)
    other = pypamtest.PAM_AUTH_ERR if rv == 0 else 0
    with pytest.raises(pypamtest.PamTestError) as ei:
        pypamtest.run_pamtest(user, service, [Case(op, expected_rv=other)],
                              **kw)
    assert str(ei.value) == failed_message(op, other, 0, rv)
    return res


def matrix_service(svc, name="svc", lines=1, users=(("alice", "secret"),)):
    db = svc.passdb(*((u, p, name) for u, p in users))
    svc.service(name,
                *["auth required %s passdb=%s" % (our_module("pam_matrix.so"), db)]
                * lines)


# -- results and failures -------------------------------------------------

def test_every_operation_succeeds(svc):
    permit_all(svc)
    tests = [Case(AUTH), Case(SETCRED, flags=pypamtest.PAMTEST_FLAG_ESTABLISH_CRED),
             Case(ACCOUNT), Case(OPEN), Case(CLOSE),
             Case(CHAUTHTOK),
             Case(SETCRED, flags=pypamtest.PAMTEST_FLAG_DELETE_CRED)]
    res = pypamtest.run_pamtest("alice", "svc", tests)
    assert isinstance(res, pypamtest.TestResult)
    assert res.info == () and res.errors == ()
    assert isinstance(res.info, tuple) and isinstance(res.errors, tuple)
    assert repr(res) == "{ errors: {  } infos: {  } }"
    with pytest.raises(AttributeError):
        res.info = ()


def test_tests_may_be_a_tuple_or_empty(svc):
    # Each case says it ran by its message; an empty run runs nothing.
    svc.service("svc", "auth optional %s info=in_auth" % lpt_module(),
                "auth required pam_permit.so",
                "account optional %s info=in_account" % lpt_module(),
                "account required pam_permit.so")
    res = pypamtest.run_pamtest("alice", "svc", (Case(AUTH),))
    assert res.info == ("in_auth",) and res.errors == ()
    res = pypamtest.run_pamtest("alice", "svc", [])
    assert res.info == () and res.errors == ()
    res = pypamtest.run_pamtest("alice", "svc", ())
    assert res.info == () and res.errors == ()
    res = pypamtest.run_pamtest("alice", "svc", iter([Case(ACCOUNT)]))
    assert res.info == ("in_account",) and res.errors == ()
    # The cases of a tuple and an iterator are checked against expected_rv.
    for tests in ((Case(AUTH, expected_rv=pypamtest.PAM_AUTH_ERR),),
                  iter([Case(AUTH, expected_rv=pypamtest.PAM_AUTH_ERR)])):
        with pytest.raises(pypamtest.PamTestError) as ei:
            pypamtest.run_pamtest("alice", "svc", tests)
        assert str(ei.value) == failed_message(AUTH, pypamtest.PAM_AUTH_ERR, 0, 0)


def test_username_comes_first(svc):
    matrix_service(svc)
    res = pypamtest.run_pamtest("alice", "svc", [Case(AUTH)],
                                echo_off=["secret"])
    assert res.errors == ()
    res = pypamtest.run_pamtest(username="alice", service="svc",
                                tests=[Case(AUTH)], echo_off=("secret",))
    with pytest.raises(pypamtest.PamTestError):
        pypamtest.run_pamtest("svc", "alice", [Case(AUTH)],
                              echo_off=["secret"])


def test_our_modules_by_bare_name(svc):
    # Service files name our modules bare; the wrapper finds them.
    db = svc.passdb(("alice", "secret", "svc"))
    svc.service("svc", "auth required pam_matrix.so passdb=%s" % db,
                "auth required pam_chatty.so num_lines=2 info")
    res = pypamtest.run_pamtest("alice", "svc", [Case(AUTH)],
                                echo_off=["secret"])
    assert res.info == (CHATTY_INFO,) * 2


def test_wrong_password_fails_the_case(svc):
    matrix_service(svc)
    with pytest.raises(pypamtest.PamTestError) as ei:
        pypamtest.run_pamtest("alice", "svc", [Case(AUTH)],
                              echo_off=["wrong"])
    assert str(ei.value) == failed_message(AUTH, 0, 0, pypamtest.PAM_AUTH_ERR)
    pypamtest.run_pamtest("alice", "svc",
                          [Case(AUTH, expected_rv=pypamtest.PAM_AUTH_ERR)],
                          echo_off=["wrong"])


def test_failed_case_error(svc):
    svc.service("svc", "auth required pam_permit.so",
                "account required pam_deny.so")
    tests = [Case(AUTH), Case(ACCOUNT, flags=pypamtest.PAM_SILENT),
             Case(OPEN)]
    with pytest.raises(pypamtest.PamTestError) as ei:
        pypamtest.run_pamtest("alice", "svc", tests)
    msg = failed_message(ACCOUNT, 0, pypamtest.PAM_SILENT, pypamtest.PAM_AUTH_ERR)
    assert str(ei.value) == msg
    assert ei.value.args == (msg,)
    assert isinstance(ei.value, OSError)


def test_expected_failure_is_success(svc):
    svc.service("svc", "auth required pam_deny.so",
                "account required pam_deny.so")
    res = pypamtest.run_pamtest(
        "alice", "svc",
        [Case(AUTH, expected_rv=pypamtest.PAM_AUTH_ERR),
         Case(ACCOUNT, expected_rv=pypamtest.PAM_AUTH_ERR)])
    assert res.info == ()


def test_unexpected_success_fails(svc):
    permit_all(svc)
    with pytest.raises(pypamtest.PamTestError) as ei:
        pypamtest.run_pamtest("alice", "svc",
                              [Case(AUTH, pypamtest.PAM_AUTH_ERR, 0)])
    assert str(ei.value) == failed_message(AUTH, pypamtest.PAM_AUTH_ERR, 0, 0)


def test_missing_service_is_a_start_error(svc):
    with pytest.raises(pypamtest.PamTestError) as ei:
        pypamtest.run_pamtest("alice", "nosuchservice", [Case(AUTH)])
    e = ei.value
    assert e.args == (pypamtest.PAMTEST_ERR_START, "pam_start failed()")
    assert e.errno == pypamtest.PAMTEST_ERR_START
    assert e.strerror == "pam_start failed()"
    assert isinstance(e, OSError)


# -- messages ---------------------------------------------------------------

def test_info_messages_in_arrival_order(svc):
    svc.service("svc", *["auth optional %s info=message_%d" % (lpt_module(), i)
                         for i in range(5)], "auth required pam_permit.so")
    res = pypamtest.run_pamtest("alice", "svc", [Case(AUTH)])
    assert res.info == tuple("message_%d" % i for i in range(5))
    assert res.errors == ()


def test_info_and_error_messages(svc):
    chatty = our_module("pam_chatty.so")
    svc.service("svc", "auth optional %s info=first" % lpt_module(),
                "auth required %s num_lines=2 info error" % chatty,
                "auth optional %s info=last" % lpt_module(),
                "auth required %s num_lines=1 error" % chatty,
                "auth required pam_permit.so")
    res = pypamtest.run_pamtest("alice", "svc", [Case(AUTH)])
    assert res.info == ("first", CHATTY_INFO, CHATTY_INFO, "last")
    assert res.errors == (CHATTY_ERROR,) * 3


@pytest.mark.parametrize("count", [16, 17, 33, 100])
def test_many_messages(svc, count):
    svc.service("svc", "auth required %s num_lines=%d info error"
                % (our_module("pam_chatty.so"), count),
                "auth required pam_permit.so")
    res = pypamtest.run_pamtest("alice", "svc", [Case(AUTH)])
    assert res.info == (CHATTY_INFO,) * count
    assert res.errors == (CHATTY_ERROR,) * count


def test_many_messages_from_many_modules(svc):
    svc.service("svc", *["auth optional %s info=line_%d" % (lpt_module(), i)
                         for i in range(40)], "auth required pam_permit.so")
    res = pypamtest.run_pamtest("alice", "svc", [Case(AUTH)])
    assert res.info == tuple("line_%d" % i for i in range(40))


def test_messages_from_every_case_of_the_run(svc):
    svc.service("svc", "auth optional %s info=in_auth" % lpt_module(),
                "auth required pam_permit.so",
                "account optional %s info=in_account" % lpt_module(),
                "account required pam_permit.so")
    res = pypamtest.run_pamtest("alice", "svc",
                                [Case(AUTH), Case(ACCOUNT)])
    assert res.info == ("in_auth", "in_account")


# -- answers ----------------------------------------------------------------

@pytest.mark.parametrize("count", [17, 40])
def test_many_answers(svc, count):
    matrix_service(svc, lines=count)
    res = assert_case_returns("alice", "svc", AUTH, pypamtest.PAM_SUCCESS,
                              echo_off=["secret"] * count)
    assert res.info == () and res.errors == ()
    # Every answer is used: the last prompt gets the last answer.
    assert_case_returns("alice", "svc", AUTH, pypamtest.PAM_AUTH_ERR,
                        echo_off=["secret"] * (count - 1) + ["wrong"])


def test_answers_are_consumed_in_order(svc):
    matrix_service(svc, lines=3)
    pypamtest.run_pamtest("alice", "svc", [Case(AUTH)],
                          echo_off=["secret", "secret", "secret", "extra"])
    with pytest.raises(pypamtest.PamTestError) as ei:
        pypamtest.run_pamtest("alice", "svc", [Case(AUTH)],
                              echo_off=["secret", "secret", "wrong"])
    assert str(ei.value) == failed_message(AUTH, 0, 0, pypamtest.PAM_AUTH_ERR)


def test_answers_across_cases(svc):
    db = svc.passdb(("alice", "secret", "svc"))
    svc.service("svc", "auth required %s passdb=%s"
                % (our_module("pam_matrix.so"), db))
    res = pypamtest.run_pamtest("alice", "svc", [Case(AUTH), Case(AUTH)],
                                echo_off=["secret", "secret"])
    assert res.info == () and res.errors == ()
    # The second case gets the second answer, not the first again.
    res = pypamtest.run_pamtest(
        "alice", "svc",
        [Case(AUTH), Case(AUTH, expected_rv=pypamtest.PAM_AUTH_ERR)],
        echo_off=["secret", "wrong"])
    assert res.info == () and res.errors == ()
    with pytest.raises(pypamtest.PamTestError) as ei:
        pypamtest.run_pamtest(
            "alice", "svc",
            [Case(AUTH), Case(AUTH, expected_rv=pypamtest.PAM_AUTH_ERR)],
            echo_off=["secret", "secret"])
    assert str(ei.value) == failed_message(AUTH, pypamtest.PAM_AUTH_ERR, 0, 0)


@pytest.mark.parametrize("answers", [None, [], ()])
def test_prompt_without_answers_fails_cleanly(svc, answers):
    matrix_service(svc)
    with pytest.raises(pypamtest.PamTestError) as ei:
        pypamtest.run_pamtest("alice", "svc", [Case(AUTH)],
                              echo_off=answers)
    msg = str(ei.value)
    assert msg.startswith(failed_prefix(AUTH, 0, 0) + " returned [")
    assert "returned [0]" not in msg


def test_answers_running_out_fail_cleanly(svc):
    matrix_service(svc, lines=20)
    with pytest.raises(pypamtest.PamTestError) as ei:
        pypamtest.run_pamtest("alice", "svc", [Case(AUTH)],
                              echo_off=["secret"] * 19)
    assert "returned [0]" not in str(ei.value)


def test_stock_module_prompt_without_answer(svc):
    # No user: libpam asks for it with PAM_PROMPT_ECHO_ON; echo_off answers
    # are not used for it.
    if OPENPAM:
        pytest.skip("OpenPAM's pam_permit does not ask for a user")
    svc.service("svc", "auth required pam_permit.so")
    with pytest.raises(pypamtest.PamTestError) as ei:
        pypamtest.run_pamtest(None, "svc", [Case(AUTH)],
                              echo_off=["alice"])
    assert str(ei.value) == failed_message(AUTH, 0, 0, pypamtest.PAM_CONV_ERR)


def test_echo_on_answers(svc):
    # pam_get_user: libpam's own prompt for the user, echo on.
    svc.service("svc", "auth required %s getuser" % lpt_module(),
                "auth optional %s info=user=%%u" % lpt_module())
    res = pypamtest.run_pamtest(None, "svc", [Case(AUTH)],
                                echo_off=["not this"], echo_on=["bob"])
    assert res.info == ("user=bob",)


def test_echo_on_and_off_together(svc):
    db = svc.passdb(("bob", "pw", "svc"))
    svc.service("svc", "auth required %s getuser" % lpt_module(),
                "auth required %s passdb=%s" % (our_module("pam_matrix.so"), db),
                "auth optional %s info=user=%%u" % lpt_module())
    # The echo_on answer is the user, the echo_off one bob's password.
    res = assert_case_returns(None, "svc", AUTH, pypamtest.PAM_SUCCESS,
                              echo_on=["bob"], echo_off=["pw"])
    assert res.info == ("user=bob",) and res.errors == ()
    assert_case_returns(None, "svc", AUTH, pypamtest.PAM_AUTH_ERR,
                        echo_on=["bob"], echo_off=["bob"])


def test_non_ascii_and_long_answers(svc):
    long_pw = "x" * 4000
    matrix_service(svc, users=(("alice", "pässwörd ☃"), ("bob", long_pw)))
    pypamtest.run_pamtest("alice", "svc", [Case(AUTH)],
                          echo_off=["pässwörd ☃"])
    pypamtest.run_pamtest("bob", "svc", [Case(AUTH)], echo_off=[long_pw])
    with pytest.raises(pypamtest.PamTestError):
        pypamtest.run_pamtest("bob", "svc", [Case(AUTH)],
                              echo_off=[long_pw[:-1]])


@pytest.mark.parametrize("kw", ["echo_off", "echo_on"])
@pytest.mark.parametrize("bad", ["secret", b"secret", bytearray(b"x"), [1],
                                 ["ok", None], [b"secret"], ("ok", 2.0), 5,
                                 object()])
def test_answers_must_be_sequences_of_str(svc, kw, bad):
    matrix_service(svc)
    with pytest.raises(TypeError):
        pypamtest.run_pamtest("alice", "svc", [Case(AUTH)], **{kw: bad})


def test_answer_with_nul_is_rejected(svc):
    matrix_service(svc)
    with pytest.raises(ValueError):
        pypamtest.run_pamtest("alice", "svc", [Case(AUTH)],
                              echo_off=["sec\0ret"])


@pytest.mark.parametrize("bad", ["abc", b"abc", [1], [Case(AUTH), "x"],
                                 Case(AUTH), 3, None])
def test_tests_must_be_testcases(svc, bad):
    permit_all(svc)
    with pytest.raises(TypeError):
        pypamtest.run_pamtest("alice", "svc", bad)


# -- GETENVLIST ---------------------------------------------------------------

def env_service(svc, text):
    # Each NAME=VALUE line of text is a pam_putenv() of the session.
    svc.service("svc", "auth required pam_permit.so",
                " ".join(["session required %s" % lpt_module()]
                         + ["putenv=" + v for v in text.splitlines()]))


def test_getenvlist_dict_split_at_first_equals(svc):
    env_service(svc, "FOO=bar=baz\nEMPTY=\nURL=http://host/?a=b&c==d\n")
    tc = Case(GETENV)
    res = pypamtest.run_pamtest("alice", "svc", [Case(OPEN), tc])
    assert res.info == ()
    assert tc.pam_env == {"FOO": "bar=baz", "EMPTY": "",
                          "URL": "http://host/?a=b&c==d"}
    assert type(tc.pam_env) is dict


def test_getenvlist_empty(svc):
    env_service(svc, "")
    tc = Case(GETENV)
    pypamtest.run_pamtest("alice", "svc", [Case(AUTH), tc])
    assert tc.pam_env == {}


def test_getenvlist_per_run_and_before_a_failure(svc):
    env_service(svc, "A=1\n")
    before, after = Case(GETENV), Case(GETENV)
    pypamtest.run_pamtest("alice", "svc", [before, Case(OPEN), after])
    assert before.pam_env == {} and after.pam_env == {"A": "1"}
    env_service(svc, "A=2\n")
    failing = Case(ACCOUNT)  # no account stack: fails
    with pytest.raises(pypamtest.PamTestError):
        pypamtest.run_pamtest("alice", "svc",
                              [Case(OPEN), after, failing, before])
    assert after.pam_env == {"A": "2"}
    assert before.pam_env == {}


# -- the service directory changes inside one process -----------------------

def test_service_dir_changes_between_runs(make_service_dir, svc):
    allow, deny = make_service_dir(), make_service_dir()
    allow.service("svc", "auth required pam_permit.so")
    deny.service("svc", "auth required pam_deny.so")
    for _ in range(3):
        allow.activate()
        pypamtest.run_pamtest("alice", "svc", [Case(AUTH)])
        deny.activate()
        with pytest.raises(pypamtest.PamTestError) as ei:
            pypamtest.run_pamtest("alice", "svc", [Case(AUTH)])
        assert str(ei.value) == failed_message(AUTH, 0, 0,
                                               pypamtest.PAM_AUTH_ERR)


@pytest.mark.parametrize("module,rv", [("pam_permit.so", 0),
                                       ("pam_deny.so", pypamtest.PAM_AUTH_ERR),
                                       ("pam_permit.so", 0)])
def test_each_test_has_its_own_service_dir(svc, module, rv):
    assert os.environ["PAM_WRAPPER_SERVICE_DIR"] == svc.path
    svc.service("svc", "auth required %s" % module)
    pypamtest.run_pamtest("alice", "svc", [Case(AUTH, expected_rv=rv)])


# -- the GIL ------------------------------------------------------------------

def test_gil_is_released_during_pam(svc, tmp_path):
    """While a module waits in the middle of a transaction (pam_lpt_test's
    waitfor=: until a file exists), this thread runs Python: it sees the
    module waiting and makes the file.  Had run_pamtest kept the GIL, this
    thread could run only once the transaction had ended: the module would
    have waited its 600 s out (waitfor's bound) and the transaction would be
    over before this thread saw it waiting.  No timing: order only."""
    db = svc.passdb(("alice", "secret", "svc"))
    waiting, go = tmp_path / "waiting", tmp_path / "go"
    svc.service("svc", "auth optional %s info=before" % lpt_module(),
                "auth required %s pidfile=%s waitfor=%s" % (lpt_module(),
                                                           waiting, go),
                "auth required %s passdb=%s" % (our_module("pam_matrix.so"), db),
                "auth optional %s info=after" % lpt_module())
    out = {}

    def run():
        try:
            out["res"] = pypamtest.run_pamtest("alice", "svc", [Case(AUTH)],
                                               echo_off=["secret"])
        except BaseException as e:  # reported by the main thread
            out["err"] = e

    t = threading.Thread(target=run)
    t.start()
    try:
        assert wait_until(lambda: waiting.exists() or not t.is_alive())
        during = t.is_alive() and not out
    finally:
        go.touch()
        t.join()
    assert "err" not in out, out.get("err")
    assert out["res"].info == ("before", "after")
    assert during, "this thread ran only after the transaction had ended"


def test_concurrent_transactions(svc):
    db = svc.passdb(("alice", "secret", "svc"), ("bob", "hunter2", "svc"))
    svc.service("svc", "auth optional %s info=hello_%%u" % lpt_module(),
                "auth required %s passdb=%s" % (our_module("pam_matrix.so"), db))
    errors = []

    def run(user, pw):
        try:
            for _ in range(10):
                res = pypamtest.run_pamtest(user, "svc", [Case(AUTH)],
                                            echo_off=[pw])
                assert res.info == ("hello_" + user,)
        except BaseException as e:
            errors.append(e)

    threads = [threading.Thread(target=run, args=a)
               for a in (("alice", "secret"), ("bob", "hunter2"))]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
