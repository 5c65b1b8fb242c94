# SPDX-License-Identifier: BSD-3-Clause
"""pamtest explore --diff: examples/diff's hardening (no new success: exit
status 0) and mistake (pam_permit.so reachable after a wrong password:
exit status 1 and the path), both versions replayed on libpam; a line
moved across another is no change; the machine's /etc/pam.d as one side
(--system) against a copy of it, as it is and with pam_deny.so commented
out; the command line's errors.  (What diff.c finds against every
combination of outcomes: test_explore_diff.c.)"""
import os
import shutil

import pytest

from conftest import HANG, OPENPAM, SRC

SYSTEM = os.environ.get("PWRAP_EXPLORE_SYSTEM") == "1"
EXAMPLE = os.path.join(SRC, "examples", "diff")
MODEL = ("--model", "pam_faillock=success,auth_err,ignore")

pytestmark = pytest.mark.skipif(OPENPAM, reason="Linux-PAM syntax")


def diff(explorer, old, new, *args):
    return explorer.run("--diff", old, new, "login", *args)


def check_sides(group):
    """Both versions explored and replayed, libpam agreeing."""
    for side in ("before", "after"):
        o = group[side]
        assert o["replayed"] and o["disagreement"] is None, o
        assert o["replays"] >= 1


def test_hardening_adds_no_way_in(explorer):
    p = diff(explorer, os.path.join(EXAMPLE, "before"),
             os.path.join(EXAMPLE, "hardened"), *MODEL)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "NEW SUCCESS" not in p.stdout
    assert "login auth: changed, no new success\n" in p.stdout
    assert ("  no longer PAM_SUCCESS, now PAM_AUTH_ERR, when (before) login:2 "
            "pam_nologin in {success, ignore} and common-auth:5 pam_unix = success\n") \
        in p.stdout
    assert "login session: every combination gives what it gave\n" in p.stdout
    # both tables, one after the other
    assert p.stdout.index("== before: ") < p.stdout.index("== after: ") < \
        p.stdout.index("== what changed")
    rc, groups = explorer.json("--diff", os.path.join(EXAMPLE, "before"),
                               os.path.join(EXAMPLE, "hardened"), "login", *MODEL)
    assert rc == 0
    assert [g["type"] for g in groups] == ["auth", "account", "password", "session"]
    for g in groups:
        check_sides(g)
        assert not g["weaker"]
        assert all(c["after"] != "PAM_SUCCESS" for c in g["changes"])
    assert not groups[0]["same"] and groups[3]["same"]
    # the hardened stack's dead pam_deny.so is a new finding
    assert [(f["kind"], f["where"]) for f in groups[0]["findings_new"]] == \
        [("dead-line", "common-auth:13")]


def test_mistake_is_a_new_way_in(explorer):
    p = diff(explorer, os.path.join(EXAMPLE, "before"),
             os.path.join(EXAMPLE, "mistake"), "-t", "auth", *MODEL)
    assert p.returncode == 1, p.stdout + p.stderr
    assert "login auth: NEW SUCCESS: PAM_SUCCESS on combinations that did not succeed\n" \
        in p.stdout
    assert ("  now PAM_SUCCESS, before PAM_AUTH_ERR, when (after) login:2 pam_nologin "
            "in {success, ignore} and common-auth:8 pam_faillock != auth_err and "
            "common-auth:12 pam_faillock != auth_err\n") in p.stdout
    # the path: a wrong password, pam_faillock's counter, pam_permit
    assert ("    e.g. after:  login:2 pam_nologin = success, common-auth:8 pam_faillock = "
            "success, common-auth:10 pam_unix = auth_err, common-auth:12 pam_faillock "
            "= success, common-auth:14 pam_permit = success -> PAM_SUCCESS\n") in p.stdout
    assert ("         before: login:2 pam_nologin = success, common-auth:5 pam_unix = "
            "auth_err, common-auth:7 pam_deny = auth_err -> PAM_AUTH_ERR\n") in p.stdout
    assert "  new bypass: common-auth:12:" in p.stdout
    rc, groups = explorer.json("--diff", os.path.join(EXAMPLE, "before"),
                               os.path.join(EXAMPLE, "mistake"), "login", "-t",
                               "auth", *MODEL)
    assert rc == 1 and len(groups) == 1
    g = groups[0]
    check_sides(g)
    assert g["weaker"] and g["before_dir"].endswith("before")
    gained = [c for c in g["changes"] if c["after"] == "PAM_SUCCESS"]
    assert len(gained) == 1 and gained[0]["when"]["side"] == "after"
    after = gained[0]["after_path"]
    assert after["result"] == "PAM_SUCCESS"
    assert [c["module"] for c in after["calls"]][-1] == "pam_permit"
    # pam_unix failed on both sides of the combination
    for side in ("before_path", "after_path"):
        assert [c["outcome"] for c in gained[0][side]["calls"]
                if c["module"] == "pam_unix"] == ["auth_err"]


def test_example_script(explorer):
    from pwrap_fixtures import child_env, run, sanitizer_preload
    from conftest import PAMTEST
    p = run(["bash", os.path.join(EXAMPLE, "run-diff.sh"),
             os.path.dirname(os.path.dirname(PAMTEST))],
            child_env(("PAM_WRAPPER", "PAMTEST"), TMPDIR=explorer.tmpdir,
                      LD_PRELOAD=sanitizer_preload() or None), timeout=HANG)
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.count("NEW SUCCESS") == 1
    assert "OK: 2 passed, 0 failed" in p.stdout


def test_moved_line_is_no_change(explorer, tmp_path):
    """Two required lines swapped: with one failure code each, every
    combination gives what it gave."""
    for name, lines in (("a", ("pam_unix.so", "pam_nologin.so")),
                        ("b", ("pam_nologin.so", "pam_unix.so"))):
        (tmp_path / name).mkdir()
        (tmp_path / name / "login").write_text(
            "".join("auth required %s\n" % m for m in lines))
    rc, groups = explorer.json("--diff", str(tmp_path / "a"), str(tmp_path / "b"),
                               "login", "-t", "auth", "--outcomes", "success,auth_err")
    assert rc == 0
    assert groups[0]["same"] and groups[0]["changes"] == []
    check_sides(groups[0])
    # with two failure codes, the first failure's code is kept: the
    # failures change, success does not
    fails = ("auth_err", "user_unknown")
    models = [a for m in ("pam_unix", "pam_nologin")
              for a in ("--model", "%s=success,%s" % (m, ",".join(fails)))]
    rc, groups = explorer.json("--diff", str(tmp_path / "a"), str(tmp_path / "b"),
                               "login", "-t", "auth", *models)
    assert rc == 0 and not groups[0]["same"] and not groups[0]["weaker"]
    assert {(c["before"], c["after"]) for c in groups[0]["changes"]} == {
        ("PAM_AUTH_ERR", "PAM_USER_UNKNOWN"), ("PAM_USER_UNKNOWN", "PAM_AUTH_ERR")}


@pytest.mark.skipif(not SYSTEM, reason="needs Debian's Linux-PAM and its /etc/pam.d")
def test_system_side(explorer, tmp_path):
    """The machine's /etc/pam.d against a copy: the same; with pam_deny.so
    commented out of the copy's common-auth, a new success (and the other
    way round, none)."""
    if not os.path.exists("/etc/pam.d/login"):
        pytest.skip("/etc/pam.d/login is not installed (scripts/install-deps.sh)")
    copy = tmp_path / "pam.d"
    shutil.copytree("/etc/pam.d", copy, symlinks=True)
    p = explorer.run("--diff", "--system", str(copy), "login")
    assert p.returncode == 0, p.stdout + p.stderr
    assert p.stdout.startswith("== before: /etc/pam.d\n")
    assert p.stdout.count("every combination gives what it gave\n") == 4
    text = (copy / "common-auth").read_text()
    assert "\nauth\trequisite\t\t\tpam_deny.so\n" in text
    (copy / "common-auth").write_text(
        text.replace("\nauth\trequisite\t\t\tpam_deny.so\n",
                     "\n#auth\trequisite\t\t\tpam_deny.so\n"))
    p = explorer.run("--diff", "--system", str(copy), "login", "-t", "auth")
    assert p.returncode == 1, p.stdout + p.stderr
    after = [ln for ln in p.stdout.splitlines() if ln.startswith("    e.g. after:  ")]
    assert any("pam_unix = auth_err, common-auth:" in ln and "pam_permit = success" in ln
               and ln.endswith("-> PAM_SUCCESS") for ln in after), p.stdout
    # the machine as the new side: what was let in is refused again; but
    # the commented line also made pam_unix's jump skip pam_permit.so (when
    # every other module ignores or fails: PAM_PERM_DENIED), which the
    # machine's stack lets in
    rc, groups = explorer.json("--diff", str(copy), "--system", "login", "-t", "auth")
    assert rc == 1
    pairs = {(c["before"], c["after"]) for c in groups[0]["changes"]}
    assert ("PAM_SUCCESS", "PAM_AUTH_ERR") in pairs
    assert [b for b, a in pairs if a == "PAM_SUCCESS"] == ["PAM_PERM_DENIED"]


def scenario(explorer, tmp_path, text):
    from pwrap_fixtures import child_env, run, sanitizer_preload
    from conftest import PAMTEST
    path = tmp_path / "diff.pamtest"
    path.write_text(text)
    return run([PAMTEST, str(path)],
               child_env(("PAM_WRAPPER", "PAMTEST"), TMPDIR=explorer.tmpdir,
                         LD_PRELOAD=sanitizer_preload() or None), timeout=HANG), str(path)


@pytest.mark.parametrize("new,ok", [("hardened", True), ("mistake", False)])
def test_scenario_against(explorer, tmp_path, new, ok):
    """`explore ... against DIR` with `expect no new success`: the
    hardening passes, the mistake fails with its combination."""
    p, path = scenario(explorer, tmp_path, (
        "service-dir %s\nservice login\n"
        "explore type auth against %s\n"
        "    model pam_faillock=success,auth_err,ignore\n"
        "    expect no new success\n") % (os.path.join(EXAMPLE, new),
                                          os.path.join(EXAMPLE, "before")))
    assert p.returncode == (0 if ok else 1), p.stdout + p.stderr
    if not ok:
        assert (path + ":5: login auth: PAM_SUCCESS where it was PAM_AUTH_ERR (against "
                + os.path.join(EXAMPLE, "before") + "): login:2 pam_nologin = success, "
                "common-auth:8 pam_faillock = success, common-auth:10 pam_unix = auth_err, "
                "common-auth:12 pam_faillock = success, common-auth:14 pam_permit = "
                "success -> PAM_SUCCESS (before: ") in p.stdout, p.stdout


@pytest.mark.parametrize("text,error", [
    ("explore\n    expect no new success\n",
     ":4: `expect no new success` needs `explore ... against DIR`"),
    ("explore against nowhere\n", ":3: explore against "),
])
def test_scenario_errors(explorer, tmp_path, text, error):
    p, path = scenario(explorer, tmp_path,
                       "service login\n    auth required pam_permit.so\n" + text)
    assert p.returncode == 2
    assert path + error in p.stderr, p.stderr


def test_usage_errors(explorer, tmp_path):
    (tmp_path / "login").write_text("auth required pam_permit.so\n")
    d = str(tmp_path)
    for args, what in [(("--diff", d, "login"), "--diff OLD_DIR NEW_DIR SERVICE"),
                       (("--diff", d, d, "login", "-f", "dot"), "human or json"),
                       (("--diff", str(tmp_path / "none"), d, "login"), "none"),
                       (("--diff", d, d, "login", "--model", "pam_typo=success"),
                        "--model pam_typo: no such module or line in login, before or after")]:
        p = explorer.run(*args)
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        assert what in p.stderr, (args, p.stderr)
