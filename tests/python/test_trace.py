# SPDX-License-Identifier: BSD-3-Clause
#
# The wrapper's module trace from Python: run_pamtest(..., trace=True)
# returns the records (result.trace, also on PamTestError), read_trace()
# parses a trace file, and the environment is as it was afterwards.  The
# records are checked for their content: where each module call came from
# (through an include), what it returned, what its control did, the call's
# result, and that no password is in them.
import json
import os

import pytest

import pypamtest
from conftest import OPENPAM, our_module

AUTH = pypamtest.PAMTEST_AUTHENTICATE
ACCOUNT = pypamtest.PAMTEST_ACCOUNT
Case = pypamtest.TestCase
PASSWORD = "s3cret-of-alice"


def matrix_stack(svc):
    passdb = svc.passdb(("alice", PASSWORD, "svc"))
    svc.service("common-auth",
                "auth sufficient %s passdb=%s" % (our_module("pam_matrix.so"),
                                                  passdb),
                "auth required pam_deny.so")
    svc.service("svc", "auth include common-auth",
                "account required %s passdb=%s"
                % (our_module("pam_matrix.so"), passdb))


def modules(records):
    """(where relative to the service dir, rc, action, result) of the
    module records."""
    return [(os.path.basename(r["where"]), r["rc"], r["action"], r["result"])
            for r in records if r["kind"] == "module"]


def test_records_of_a_run(svc):
    matrix_stack(svc)
    res = pypamtest.run_pamtest("alice", "svc", [Case(AUTH), Case(ACCOUNT)],
                                echo_off=[PASSWORD], trace=True)
    kinds = [r["kind"] for r in res.trace]
    assert kinds == ["start", "module", "result", "module", "result"]
    assert modules(res.trace) == [
        ("common-auth:1", "PAM_SUCCESS",
         "sufficient" if OPENPAM else "done", "PAM_SUCCESS"),
        ("svc:2", "PAM_SUCCESS", "required" if OPENPAM else "ok",
         "PAM_SUCCESS")]
    first = res.trace[1]
    assert first["where"] == os.path.join(svc.path, "common-auth") + ":1"
    assert first["function"] == "pam_sm_authenticate"
    assert first["call"] == "pam_authenticate"
    assert first["service"] == "svc"
    assert first["path"] == our_module("pam_matrix.so")
    assert res.trace[2] == {**res.trace[2], "kind": "result",
                            "call": "pam_authenticate", "rc": "PAM_SUCCESS",
                            "calls": 1}
    assert len({(r["pid"], r["tx"]) for r in res.trace}) == 1
    assert PASSWORD not in json.dumps(res.trace)


def test_records_on_failure(svc):
    matrix_stack(svc)
    with pytest.raises(pypamtest.PamTestError) as ei:
        pypamtest.run_pamtest("alice", "svc", [Case(AUTH)],
                              echo_off=["wrong"], trace=True)
    assert modules(ei.value.trace) == [
        ("common-auth:1", "PAM_AUTH_ERR",
         "sufficient" if OPENPAM else "ignore", "PAM_AUTH_ERR"),
        ("common-auth:2", "PAM_AUTH_ERR", "required" if OPENPAM else "bad",
         "PAM_AUTH_ERR")]


def test_no_trace_asked(svc):
    matrix_stack(svc)
    res = pypamtest.run_pamtest("alice", "svc", [Case(AUTH)],
                                echo_off=[PASSWORD])
    assert res.trace is None
    assert pypamtest.TestResult().trace is None


def test_environment_put_back(svc, tmp_path):
    """An outer PAM_WRAPPER_TRACE (a user's) is set again afterwards and
    gets nothing of the traced run."""
    matrix_stack(svc)
    outer = tmp_path / "outer.json"
    os.environ["PAM_WRAPPER_TRACE"] = str(outer)
    try:
        res = pypamtest.run_pamtest("alice", "svc", [Case(AUTH)],
                                    echo_off=[PASSWORD], trace=True)
        assert len(res.trace) == 3
        assert not outer.exists()
        pypamtest.run_pamtest("alice", "svc", [Case(AUTH)],
                              echo_off=[PASSWORD])
        assert [r["kind"] for r in pypamtest.read_trace(str(outer))] == [
            "start", "module", "result"]
    finally:
        del os.environ["PAM_WRAPPER_TRACE"]
    assert os.environ.get("PAM_WRAPPER_TRACE_FORMAT") is None


def test_read_trace_errors(tmp_path):
    with pytest.raises(FileNotFoundError):
        pypamtest.read_trace(str(tmp_path / "none"))
    bad = tmp_path / "bad.json"
    bad.write_text("{\"kind\":\"start\"}\nnot json\n")
    with pytest.raises(ValueError):
        pypamtest.read_trace(str(bad))
    with pytest.raises(TypeError):
        pypamtest.read_trace(3)
