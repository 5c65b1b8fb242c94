# SPDX-License-Identifier: BSD-3-Clause
"""pypamtest.explore() and the fixture's pam_wrapper.explore(): the same
tables and findings as `pamtest explore -f json`, for a project that keeps
its PAM stack under test ("success only if pam_matrix succeeded")."""
import os

import pytest

import pypamtest

OPENPAM = os.environ.get("PWRAP_PAM_KIND") == "OpenPAM"
linux_pam = pytest.mark.skipif(OPENPAM, reason="Linux-PAM syntax")


def success_modules(obj):
    """The modules whose success alone gives PAM_SUCCESS (one-term rows)."""
    for row in obj["table"]:
        if row["result"] == "PAM_SUCCESS":
            return sorted(term[0]["module"] for term in row["when"]
                          if len(term) == 1 and term[0]["outcomes"] == ["success"])
    return []


def test_default_service(pam_wrapper):
    """The fixture's default service (pam_matrix in each group)."""
    res = pam_wrapper.explore()
    assert [r["type"] for r in res] == ["auth", "account", "password", "session"]
    for r in res:
        assert r["service"] == "matrix"
        assert r["replayed"] and r["disagreement"] is None
        assert r["findings"] == []
    assert success_modules(res[0]) == ["pam_matrix"]


@linux_pam
def test_keep_a_stack_under_test(pam_wrapper):
    pam_wrapper.add_service("login", [
        "auth [success=1 default=ignore] pam_matrix.so",
        "auth requisite pam_deny.so",
        "auth required pam_permit.so",
    ])
    res = pam_wrapper.explore("login", "auth", must=["pam_matrix"])
    assert res["findings"] == []
    assert success_modules(res) == ["pam_matrix"]
    assert res["paths"] and all(p["result"].startswith("PAM_") for p in res["paths"])


@linux_pam
def test_bypass_found(pam_wrapper):
    pam_wrapper.add_service("login", [
        "auth optional pam_matrix.so",
        "auth required pam_permit.so",
    ])
    res = pam_wrapper.explore("login", "auth")
    assert [(f["kind"], f["where"]) for f in res["findings"]] == [("bypass", "login:1")]
    calls = res["findings"][0]["path"]["calls"]
    assert calls[0]["module"] == "pam_matrix" and calls[0]["outcome"] != "success"
    assert res["findings"][0]["path"]["result"] == "PAM_SUCCESS"


@linux_pam
def test_pypamtest_options(pam_wrapper):
    pam_wrapper.add_service("svc", [
        "auth [success=1 default=ignore] pam_matrix.so",
        "auth requisite pam_deny.so",
        "auth required pam_permit.so",
        "auth optional pam_echo.so hello",
    ])
    # a model by module name (list) and by file:line (str), --outcomes
    res = pypamtest.explore("svc", "auth", service_dir=pam_wrapper.service_dir,
                            model={"pam_matrix": ["auth_err"], "svc:4": "ignore"})
    assert [f["kind"] for f in res["findings"]] == ["lockout", "dead-line", "dead-line"]
    res = pypamtest.explore("svc", "auth", service_dir=pam_wrapper.service_dir,
                            outcomes="success,ignore", must="pam_echo")
    assert [f["kind"] for f in res["findings"]] == ["bypass", "ignored"]
    res = pypamtest.explore("svc", "auth", service_dir=pam_wrapper.service_dir,
                            replay=False)
    assert res["replayed"] is False and res["replays"] == 0
    res = pypamtest.explore("svc", "auth", service_dir=pam_wrapper.service_dir,
                            replay_all=True)
    assert res["replayed"] and res["replays"] >= len(res["table"])


def test_pypamtest_uses_the_service_dir(pam_wrapper):
    """Without service_dir: $PAM_WRAPPER_SERVICE_DIR, the fixture's."""
    assert os.environ["PAM_WRAPPER_SERVICE_DIR"] == pam_wrapper.service_dir
    res = pypamtest.explore("matrix", "account")
    assert res["type"] == "account" and res["findings"] == []


def test_errors(pam_wrapper, tmp_path):
    with pytest.raises(RuntimeError, match="No such file"):
        pypamtest.explore("svc", service_dir=str(tmp_path / "missing"))
    with pytest.raises(RuntimeError, match="--type"):
        pypamtest.explore("matrix", "bogus")
    with pytest.raises(RuntimeError, match="--model"):
        pypamtest.explore("matrix", "auth", model="pam_matrix")
    with pytest.raises(TypeError):
        pypamtest.explore("matrix", "auth", must=[1])
    with pytest.raises(TypeError):
        pypamtest.explore()


@pytest.mark.skipif(os.environ.get("PWRAP_EXPLORE_SYSTEM") != "1",
                    reason="needs Debian's Linux-PAM and its /etc/pam.d")
def test_system(pam_wrapper):
    res = pypamtest.explore("common-auth", "auth", system=True)
    assert res["findings"] == [] and success_modules(res) == ["pam_unix"]
