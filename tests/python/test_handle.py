# SPDX-License-Identifier: BSD-3-Clause
#
# PAMTEST_KEEPHANDLE: the pam_handle capsule, its reuse through handle=,
# its ownership (one pam_end, by whoever holds it last) and its end when
# collected.  Whether a PAM handle still lives is seen in /proc/self/maps:
# libpam unloads a handle's modules at pam_end, so a module file that only
# these tests use (a copy of our pam_set_items.so under a name of its own,
# which works on every PAM implementation) is mapped exactly while a handle
# that loaded it is alive.  pam_get_items.so in the account stack shows
# whose handle ran (PAM_USER and PAM_SERVICE in the PAM environment).
import gc
import os
import shutil
import subprocess
import sys
import textwrap

import pytest

import pypamtest
from conftest import our_module
from pwrap_fixtures import HANG, TempDir

AUTH = pypamtest.PAMTEST_AUTHENTICATE
ACCOUNT = pypamtest.PAMTEST_ACCOUNT
KEEP = pypamtest.PAMTEST_KEEPHANDLE
Case = pypamtest.TestCase  # not named Test*: pytest would collect it

MARKER = "pwrap_handle_marker.so"
GETENV = pypamtest.PAMTEST_GETENVLIST


def marker_loaded():
    gc.collect()
    with open("/proc/self/maps", encoding="utf-8") as f:
        return MARKER in f.read()


@pytest.fixture
def handle_svc(svc, make_temp_dir):
    assert not marker_loaded(), "a handle of an earlier test is still alive"
    marker = os.path.join(make_temp_dir(TempDir, "pwrap-marker-").path,
                          MARKER)
    shutil.copyfile(our_module("pam_set_items.so"), marker)
    db = svc.passdb(("alice", "secret", "svc"))
    svc.service("svc", "auth optional %s" % marker,
                "auth required %s passdb=%s" % (our_module("pam_matrix.so"), db),
                "account required pam_permit.so",
                "account required pam_get_items.so")
    yield svc
    gc.collect()


def account_env(handle, user="alice", service="svc"):
    """Runs the account stack on handle; the PAM environment after it."""
    env = Case(GETENV)
    pypamtest.run_pamtest(user, service, [Case(ACCOUNT), env], handle=handle)
    return env.pam_env


def keep(user="alice", **kw):
    tc = Case(KEEP)
    pypamtest.run_pamtest(user, "svc", [Case(AUTH), tc],
                          echo_off=["secret"], **kw)
    return tc


def test_keephandle_gives_a_capsule(handle_svc):
    tc = keep()
    h = tc.pam_handle
    assert type(h).__name__ == "PyCapsule"
    assert 'capsule object "pypamtest.pam_handle"' in repr(h)
    assert tc.pam_handle is h
    assert marker_loaded()
    with pytest.raises(AttributeError):
        tc.pam_handle = None
    del tc, h
    assert not marker_loaded()


def test_handle_is_reused(handle_svc):
    h = keep().pam_handle
    assert account_env(h)["PAM_USER"] == "alice"
    # The run ended the handle: the capsule no longer owns it.
    assert not marker_loaded()
    with pytest.raises(ValueError):
        pypamtest.run_pamtest("alice", "svc", [Case(ACCOUNT)], handle=h)
    del h
    gc.collect()  # no second pam_end (a double free would show under ASan)


def test_handle_user_and_service_come_from_the_handle(handle_svc):
    h = keep().pam_handle
    env = account_env(h, "someone", "nosuchservice")
    assert env["PAM_USER"] == "alice" and env["PAM_SERVICE"] == "svc"


def test_handle_kept_again_is_the_same_capsule(handle_svc):
    h = keep().pam_handle
    for _ in range(3):
        again = Case(KEEP)
        pypamtest.run_pamtest("alice", "svc", [Case(ACCOUNT), again],
                              handle=h)
        assert again.pam_handle is h
        assert marker_loaded()
    other = Case(KEEP)
    pypamtest.run_pamtest("alice", "svc", [again, Case(ACCOUNT), other],
                          handle=h)
    assert again.pam_handle is h and other.pam_handle is h
    del again, other
    assert marker_loaded()
    del h
    assert not marker_loaded()


def test_kept_handle_prompts_with_the_new_answers(handle_svc):
    h = keep().pam_handle
    again = Case(KEEP)
    pypamtest.run_pamtest("alice", "svc", [Case(AUTH), again], handle=h,
                          echo_off=["secret"])
    # The first run's answers are gone: no answers now fails cleanly.
    with pytest.raises(pypamtest.PamTestError) as ei:
        pypamtest.run_pamtest("alice", "svc", [Case(AUTH)], handle=h)
    assert str(ei.value).startswith("Error [2]: Test case { pam_operation [0]")
    assert "returned [0]" not in str(ei.value)


def test_handle_in_a_failing_run(handle_svc):
    h = keep().pam_handle
    with pytest.raises(pypamtest.PamTestError):
        pypamtest.run_pamtest("alice", "svc", [Case(AUTH)], handle=h,
                              echo_off=["wrong"])
    with pytest.raises(ValueError):
        pypamtest.run_pamtest("alice", "svc", [Case(ACCOUNT)], handle=h)
    del h
    assert not marker_loaded()


def test_collected_handle_is_ended(handle_svc):
    handles = [keep().pam_handle for _ in range(5)]
    assert marker_loaded()
    del handles
    assert not marker_loaded()


def test_cycle_through_pam_env_is_collected(handle_svc):
    tc = keep()
    env = Case(pypamtest.PAMTEST_GETENVLIST)
    pypamtest.run_pamtest("alice", "svc", [env, tc], handle=tc.pam_handle)
    env.pam_env["self"] = env  # a reference cycle through the dict
    env.pam_env["keeper"] = tc
    del env, tc
    assert not marker_loaded()


@pytest.mark.parametrize("bad", ["handle", 1, object()])
def test_handle_must_be_a_pam_handle_capsule(handle_svc, bad):
    with pytest.raises(TypeError):
        pypamtest.run_pamtest("alice", "svc", [Case(ACCOUNT)], handle=bad)


def test_foreign_capsule_is_rejected(handle_svc):
    import datetime  # any module exporting a capsule of another name
    cap = datetime.datetime_CAPI
    with pytest.raises(TypeError):
        pypamtest.run_pamtest("alice", "svc", [Case(ACCOUNT)], handle=cap)


def test_handle_none_starts_a_new_transaction(handle_svc):
    pypamtest.run_pamtest("alice", "svc", [Case(ACCOUNT)], handle=None)
    assert not marker_loaded()


def test_handle_alive_at_interpreter_exit(handle_svc):
    # The capsule's pam_end runs during interpreter shutdown without harm.
    code = textwrap.dedent("""
        import pypamtest
        keep = pypamtest.TestCase(pypamtest.PAMTEST_KEEPHANDLE)
        pypamtest.run_pamtest("alice", "svc",
                              [pypamtest.TestCase(0), keep],
                              echo_off=["secret"])
        cycle = [keep]
        cycle.append(cycle)
        print("kept", type(keep.pam_handle).__name__)
        """)
    proc = subprocess.run([sys.executable, "-c", code], env=os.environ,
                          capture_output=True, text=True, timeout=HANG)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == "kept PyCapsule\n"
