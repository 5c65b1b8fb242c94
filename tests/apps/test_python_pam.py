# SPDX-License-Identifier: BSD-3-Clause
#
# Debian's python3-pam (`import PAM`, a C extension linked to libpam) under
# libpam_wrapper.so: a Python PAM application (pam_driver.py) authenticates
# through pam_matrix without root, its conversation callback answering.
import subprocess
import sys

import pytest

from conftest import HANG, run_driver


@pytest.fixture
def matrix(work):
    passdb = work.passdb(("alice", "secret", "pypam"))
    opts = f"passdb={passdb}"
    work.service("pypam",
                 f"auth     required pam_matrix.so {opts} verbose",
                 f"account  required pam_matrix.so {opts}",
                 f"password required pam_matrix.so {opts}",
                 f"session  required pam_matrix.so {opts}")
    return passdb


def test_python3_pam_is_debians():
    # The module is Debian's C extension (not our pypamtest, not a ctypes
    # shim that would bypass the preload).
    out = subprocess.run([sys.executable, "-c",
                          "import PAM; print(PAM.__file__)"],
                         capture_output=True, text=True, timeout=HANG)
    assert out.returncode == 0, ("python3-pam is missing: run "
                                 "scripts/install-deps.sh\n" + out.stderr)
    assert out.stdout.strip().endswith(".so")
    assert "/dist-packages/" in out.stdout


def test_authenticate(work, matrix):
    out = run_driver(work, {"service": "pypam", "user": "alice",
                            "answers": ["secret"],
                            "ops": ["authenticate", "acct_mgmt"]})
    auth, acct = out["results"]
    assert auth["rc"] == 0, out
    assert acct["rc"] == 0, out
    assert out["conversation"] == [
        {"style": "echo_off", "msg": "Password: ", "op": "authenticate"},
        {"style": "info", "msg": "Authentication succeeded",
         "op": "authenticate"},
    ]


def test_wrong_password(work, matrix):
    out = run_driver(work, {"service": "pypam", "user": "alice",
                            "answers": ["wrong"], "ops": ["authenticate"]})
    (auth,) = out["results"]
    assert auth["rc"] == 7  # PAM_AUTH_ERR
    assert auth["error"] == "Authentication failure"
    assert {"style": "error", "msg": "Authentication failed",
            "op": "authenticate"} in out["conversation"]


def test_unknown_user(work, matrix):
    out = run_driver(work, {"service": "pypam", "user": "mallory",
                            "answers": ["secret"], "ops": ["authenticate"]})
    assert out["results"][0]["rc"] == 7


def test_session_environment(work, matrix):
    # pam_matrix's session and setcred put variables into the PAM
    # environment, which the application reads with pam_getenvlist.
    out = run_driver(work, {"service": "pypam", "user": "alice",
                            "answers": ["secret"],
                            "ops": ["authenticate", "setcred",
                                    "open_session", "close_session"]})
    rcs = [r["rc"] for r in out["results"]]
    assert rcs == [0, 0, 0, 0], out
    assert out["results"][1]["env"].get("CRED") == "/tmp/alice"
    assert out["results"][2]["env"].get("HOMEDIR") == "/home/alice"
    assert "HOMEDIR" not in out["results"][3]["env"]


def test_chauthtok(work, matrix):
    out = run_driver(work, {"service": "pypam", "user": "alice",
                            "answers": ["secret", "fresh", "fresh"],
                            "ops": ["chauthtok"]})
    assert out["results"][0]["rc"] == 0, out
    assert [c["msg"] for c in out["conversation"]] == [
        "Old password: ", "New Password :", "Verify New Password :"]
    assert matrix.read_text() == "alice:fresh:pypam\n"
