# SPDX-License-Identifier: BSD-3-Clause
"""--trace of the tools: the launcher's sets PAM_WRAPPER_TRACE for the
command (an absolute path, so a command that changes its directory still
writes there), pamtest's appends each scenario's records with the lines
of services written in the scenario named as scenario:line.  Records name
no secret; bad options are usage errors."""
import json
import os

import pytest

from tools_helpers import APP, write_file

SH = "/bin/sh"


def records(path):
    with open(path) as f:
        return [json.loads(line) for line in f]


def test_launcher_trace_file(tenv, workdir):
    # relative to the launcher's directory; the command runs elsewhere
    r = tenv.run(["sh", "-c", 'cd "$1" && shift && exec "$@"', "sh", workdir,
                  os.path.join(os.path.dirname(APP), "pam_wrapper"),
                  "--user", "bob:Bobs-Secret:myapp", "--trace", "trace.json",
                  "--", SH, "-c", 'cd / && exec "$0" myapp bob Bobs-Secret', APP])
    assert r.returncode == 0, r.stderr
    recs = records(os.path.join(workdir, "trace.json"))
    mods = [(m["call"], m["module"].rsplit("/", 1)[-1], m["rc"], m["result"])
            for m in recs if m["kind"] == "module"]
    assert mods == [
        ("pam_authenticate", "pam_matrix.so", "PAM_SUCCESS", "PAM_SUCCESS"),
        ("pam_acct_mgmt", "pam_matrix.so", "PAM_SUCCESS", "PAM_SUCCESS"),
        ("pam_open_session", "pam_matrix.so", "PAM_SUCCESS", "PAM_SUCCESS")]
    assert recs[0]["kind"] == "start" and recs[0]["service"] == "myapp"
    assert "Bobs-Secret" not in open(os.path.join(workdir, "trace.json")).read()
    assert tenv.leftovers() == []


def test_launcher_trace_text_to_stderr(tenv):
    r = tenv.launcher("--user", "bob:pw:myapp", "--trace", "-", "--trace-format",
                      "text", "--", APP, "myapp", "bob", "wrong")
    assert r.returncode == 1
    assert " myapp: pam_authenticate #1 " in r.stderr
    assert "-> PAM_AUTH_ERR: " in r.stderr
    assert " myapp: pam_authenticate -> PAM_AUTH_ERR (1 module call)" in r.stderr


@pytest.mark.parametrize("args, message", [
    (["--trace-format", "text"], "--trace-format needs --trace"),
    (["--trace", "x", "--trace-format", "xml"], "expected json or text"),
    (["--trace", ""], "expected a file name"),
])
def test_launcher_trace_usage(tenv, args, message):
    r = tenv.launcher("--user", "bob:pw:myapp", *args, "--", "true")
    assert r.returncode == 2
    assert message in r.stderr


SCENARIO = """\
# a comment, so that the service starts on line 3
service svc
    auth sufficient pam_matrix.so passdb=${PASSDB}
    auth required pam_deny.so
    account required pam_matrix.so passdb=${PASSDB}
user bob Pw-In-Passdb
run authenticate
    prompt "Password: " answer "Pw-In-Passdb"
run acct_mgmt
start
run authenticate expect PAM_AUTH_ERR
    prompt "Password: " answer "Wrong-Answer"
"""


def test_pamtest_trace(tenv, workdir):
    sc = write_file(workdir, "s.pamtest", SCENARIO)
    out = os.path.join(workdir, "trace.json")
    r = tenv.pamtest("--trace", out, sc)
    assert r.returncode == 0, r.stdout + r.stderr
    recs = records(out)
    mods = [(m["where"], m["rc"]) for m in recs if m["kind"] == "module"]
    assert mods == [(sc + ":3", "PAM_SUCCESS"), (sc + ":5", "PAM_SUCCESS"),
                    (sc + ":3", "PAM_AUTH_ERR"), (sc + ":4", "PAM_AUTH_ERR")]
    assert [r["rc"] for r in recs if r["kind"] == "result"] == [
        "PAM_SUCCESS", "PAM_SUCCESS", "PAM_AUTH_ERR"]
    assert len({r["tx"] for r in recs}) == 2
    text = open(out).read()
    for secret in ("Pw-In-Passdb", "Wrong-Answer"):
        assert secret not in text
    # appended, not replaced; text format
    r = tenv.pamtest("--trace", out, "--trace-format", "text", sc)
    assert r.returncode == 0
    lines = open(out).read().splitlines()
    assert len(lines) == len(recs) * 2
    assert lines[len(recs)].startswith("pam_wrapper[")
    assert any(" %s:4 auth required pam_deny.so" % sc in ln for ln in lines)
    assert tenv.leftovers() == []


def test_pamtest_trace_usage(tenv, workdir):
    sc = write_file(workdir, "s.pamtest", SCENARIO)
    r = tenv.pamtest("--trace", "x", "--trace-format", "yaml", sc)
    assert r.returncode == 2
    assert "expected json or text" in r.stderr
