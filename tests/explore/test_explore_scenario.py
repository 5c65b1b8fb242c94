# SPDX-License-Identifier: BSD-3-Clause
"""The explore block of pamtest scenarios (pamtest-scenario(5)): parsed
with its errors named by line, run as one test point whose failed
expectations name the finding, its line (the scenario's own line for an
inline service) and its path."""
import os

import pytest

from conftest import OPENPAM, PAMTEST, SRC
from pwrap_fixtures import child_env, run, sanitizer_preload

pytestmark = pytest.mark.skipif(OPENPAM, reason="Linux-PAM syntax")


def pamtest(tmpdir, *args):
    env = child_env(("PAM_WRAPPER", "PAMTEST"), TMPDIR=tmpdir,
                    LD_PRELOAD=sanitizer_preload() or None)
    return run([PAMTEST, *args], env)


def scenario(explorer, tmp_path, text):
    path = tmp_path / "s.pamtest"
    path.write_text(text)
    return pamtest(explorer.tmpdir, str(path)), str(path)


GOOD = """service login
    auth [success=1 default=ignore] pam_matrix.so
    auth requisite pam_deny.so
    auth required pam_permit.so
    account required pam_matrix.so
"""


def test_passing_block(explorer, tmp_path):
    p, path = scenario(explorer, tmp_path, GOOD + """
explore type auth
    must pam_matrix
    expect no bypass
    expect no lockout
    expect no ignored
    expect success iff pam_matrix
explore service login type account
    expect no findings
""")
    assert p.returncode == 0, p.stdout + p.stderr
    assert "ok    explore (line 7)" in p.stdout
    assert "OK: 2 passed, 0 failed" in p.stdout


def test_block_words_are_lexed_as_the_file(explorer, tmp_path):
    """The block's lines are lexed by the scenario parser: quoted words
    work there as on every other line (they were split on blanks, quotes
    kept), and a quote left open is an error at its line."""
    p, path = scenario(explorer, tmp_path, GOOD + """
explore type "auth"
    must "pam_matrix"
    model "pam_matrix=success,auth_err"
    expect no ignored
    expect "success" iff pam_matrix
""")
    assert p.returncode == 0, p.stdout + p.stderr
    p, path = scenario(explorer, tmp_path, GOOD + """
explore type auth
    must "pam_matrix
""")
    assert p.returncode == 2
    assert "%s:8: unterminated quoted string" % path in p.stderr


def test_failing_expectations(explorer, tmp_path):
    p, path = scenario(explorer, tmp_path, """service login
    auth optional pam_matrix.so
    auth required pam_permit.so
    account required pam_permit.so
explore type auth
    expect no bypass
    expect success iff pam_matrix or pam_unix
    expect no lockout
""")
    assert p.returncode == 1, p.stdout + p.stderr
    out = p.stdout
    assert "FAIL  explore (line 5)" in out
    # the finding at the scenario's own line 2, with its path
    assert "%s:6: login auth: bypass: %s:2:" % (path, path) in out
    assert "(path: %s:2 pam_matrix = " % path in out
    assert "%s:7: login auth: PAM_SUCCESS is not \"one of pam_matrix, ..." % path in out
    assert ":8:" not in out


def test_lockout_and_dead_line(explorer, tmp_path):
    p, path = scenario(explorer, tmp_path, """service login
    -auth [success=1 default=ignore] pam_sss.so
    auth requisite pam_deny.so
    auth required pam_permit.so
explore type auth
    expect no lockout
    expect no dead-line
""")
    assert p.returncode == 1
    assert "%s:6: login auth: lockout: %s:2: " % (path, path) in p.stdout
    assert "pam_sss returns PAM_MODULE_UNKNOWN" in p.stdout
    assert "%s:7: login auth: dead-line: %s:4: " % (path, path) in p.stdout


def test_model_and_outcomes(explorer, tmp_path):
    p, path = scenario(explorer, tmp_path, GOOD + """
explore type auth
    outcomes success,auth_err
    model pam_matrix=auth_err
    expect no lockout
""")
    assert p.returncode == 1
    assert "lockout: %s:2:" % path in p.stdout


def test_service_dir(explorer, tmp_path):
    """A service-dir's files are shown by their own names."""
    d = os.path.join(SRC, "tests", "explore", "stacks", "bypass-sufficient")
    p, path = scenario(explorer, tmp_path, """service-dir %s
service svc
explore type auth
    expect no bypass
""" % d)
    assert p.returncode == 1
    assert "%s:4: svc auth: bypass: svc:3:" % path in p.stdout


@pytest.mark.parametrize("text,error", [
    ("expect no bypass\n", ":1: `expect` must follow an `explore` line"),
    ("explore type bogus\n", ":1: explore type: auth, account"),
    ("explore flavour x\n", ":1: explore: expected `service NAME`"),
    ("explore\n    expect no idea\n", ":2: expect no: bypass"),
    ("explore\n    expect success iff\n", ":2: expect: `no bypass`"),
    ("explore\n    expect success iff a and b\n", ":2: expect success iff: modules are joined with `or`"),
    ("explore\n    model pam_unix\n", ":2: model: expected MODULE=CODE"),
    ("explore\n    outcomes nope\n", ":2: outcomes: not a list of PAM codes"),
    ("explore\n    must a b\n", ":2: `must` takes one word"),
])
def test_parse_errors(explorer, tmp_path, text, error):
    p, path = scenario(explorer, tmp_path, "service login\n    auth required pam_permit.so\n" + text)
    assert p.returncode == 2
    assert path + error.replace(":1:", ":3:").replace(":2:", ":4:") in p.stderr, p.stderr


@pytest.mark.skipif(os.environ.get("PWRAP_EXPLORE_AT_INCLUDE") == "0",
                    reason="Debian's @include (upstream Linux-PAM 1.3 has none)")
def test_example(explorer):
    """examples/explore: before/after and the scenario that keeps it fixed."""
    p = run(["bash", os.path.join(SRC, "examples", "explore", "run-explore.sh"),
             os.path.dirname(os.path.dirname(PAMTEST))],
            child_env(("PAM_WRAPPER", "PAMTEST"), TMPDIR=explorer.tmpdir,
                      LD_PRELOAD=sanitizer_preload() or None))
    assert p.returncode == 0, p.stdout + p.stderr
    assert "lockout: common-auth:9:" in p.stdout
    assert "PAM_SUCCESS iff login:1 pam_nologin = ignore and common-auth:8 pam_unix = success" in p.stdout
    assert "OK: 2 passed, 0 failed" in p.stdout
