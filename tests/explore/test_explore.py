# SPDX-License-Identifier: BSD-3-Clause
"""pamtest explore on stacks with known mistakes and on correct ones
(tests/explore/stacks/<case>/: the service file svc, what it includes and
`expect`: the options on its first line, then every finding as
"KIND FILE:LINE", or "iff MODULE..." for a table whose PAM_SUCCESS is
exactly "one of these modules returned success"), on Debian 12's own
stacks read with --system, and the command line's corners.  Every run
replays its graph on libpam; a disagreement fails the test."""
import os
import shlex

import pytest

from conftest import OPENPAM, STACKS

SYSTEM = os.environ.get("PWRAP_EXPLORE_SYSTEM") == "1"
CASES = sorted(os.listdir(STACKS))


def check_replayed(objs):
    for o in objs:
        assert o["replayed"], o
        assert o["disagreement"] is None, o["disagreement"]
        assert o["replays"] >= 1


def success_terms(obj):
    """PAM_SUCCESS's conditions as a set of (module, outcomes) tuples."""
    for row in obj["table"]:
        if row["result"] == "PAM_SUCCESS":
            return [tuple((c["module"], tuple(c["outcomes"])) for c in term)
                    for term in row["when"]]
    return []


@pytest.mark.skipif(OPENPAM, reason="Linux-PAM syntax; OpenPAM has its own cases")
@pytest.mark.parametrize("case", CASES)
def test_stack(explorer, case):
    d = os.path.join(STACKS, case)
    with open(os.path.join(d, "expect"), encoding="utf-8") as f:
        lines = [ln.split() for ln in f.read().splitlines() if ln.strip()]
    args = shlex.split(" ".join(lines[0])) if lines else []
    want = sorted((w[0], w[1]) for w in lines[1:] if w[0] != "iff")
    iff = [w[1:] for w in lines[1:] if w[0] == "iff"]
    rc, objs = explorer.json("-d", d, "svc", *args)
    check_replayed(objs)
    got = sorted((f["kind"], f["where"]) for o in objs for f in o["findings"])
    assert got == want, objs
    assert rc == (1 if want else 0)
    for f in (f for o in objs for f in o["findings"]):
        assert f["message"]
        assert f["path"]["result"].startswith("PAM_")
        if f["kind"] in ("bypass", "ignored", "lockout"):
            # the line named is on the path shown
            assert f["where"] in [c["where"] for c in f["path"]["calls"]], f
        if f["kind"] == "bypass":
            assert f["path"]["result"] == "PAM_SUCCESS"
    for mods in iff:
        assert sorted(success_terms(objs[0])) == sorted(
            ((m, ("success",)),) for m in mods), objs[0]["table"]


@pytest.mark.skipif(not SYSTEM, reason="needs Debian's Linux-PAM and its /etc/pam.d")
@pytest.mark.parametrize("service", ["login", "sshd", "su", "sudo", "passwd",
                                     "common-auth", "common-account",
                                     "common-password", "common-session"])
def test_debian_system_stacks(explorer, service):
    """Debian 12's stacks: explored completely, no finding (no bypass, no
    lockout: each stock module with the outcomes it can return), exit 0;
    the dead pam_deny.so of the common-session idiom is accepted by the
    documented pam-auth-update rule, and said so."""
    if not os.path.exists(os.path.join("/etc/pam.d", service)):
        pytest.skip("/etc/pam.d/%s is not installed (scripts/install-deps.sh)" % service)
    rc, objs = explorer.json("--system", service)
    assert [o["type"] for o in objs] == ["auth", "account", "password", "session"]
    check_replayed(objs)
    for o in objs:
        assert "refused" not in o
        assert o["states"] > 1 and o["edges"] > 0
        assert o["findings"] == [], o["findings"]
        accepted = [(a["kind"], a["where"], a["by"]) for a in o["accepted"]]
        if o["type"] == "session":
            # common-session:  [default=1] pam_permit.so / requisite pam_deny.so
            assert len(accepted) == 1, accepted
            kind, where, by = accepted[0]
            assert kind == "dead-line" and by == "the pam-auth-update rule"
            assert where.split(":")[0] in ("common-session",
                                           "common-session-noninteractive")
            assert "pam_deny" in o["accepted"][0]["message"]
        else:
            assert accepted == [], accepted
        assert any(row["result"] == "PAM_SUCCESS" for row in o["table"])
    assert rc == 0
    # the human output says what was accepted, and by what
    p = explorer.run("--system", service, "-t", "session")
    assert p.returncode == 0 and "accepted dead-line: common-session" in p.stdout, p.stdout


@pytest.mark.skipif(not SYSTEM, reason="needs Debian's Linux-PAM and its /etc/pam.d")
def test_common_auth_table(explorer):
    """common-auth: success exactly when pam_unix succeeds, in the human
    table as in the json."""
    rc, objs = explorer.json("--system", "common-auth", "-t", "auth")
    assert rc == 0
    assert success_terms(objs[0]) == [(("pam_unix", ("success",)),)]
    where = objs[0]["table"][0]["when"][0][0]["where"]
    p = explorer.run("--system", "common-auth", "-t", "auth")
    assert p.returncode == 0, p.stderr
    assert "  PAM_SUCCESS iff %s pam_unix = success\n" % where in p.stdout
    assert "PAM_AUTH_ERR iff %s pam_unix != success" % where in p.stdout


@pytest.mark.skipif(OPENPAM, reason="Linux-PAM syntax")
def test_formats(explorer):
    d = os.path.join(STACKS, "jump-skips-deny")
    human = explorer.run("-d", d, "svc", "-t", "auth")
    assert human.returncode == 1
    assert "bypass: svc:4:" in human.stdout and "path: svc:4 pam_securetty = success" in human.stdout
    dot = explorer.run("-d", d, "svc", "-t", "auth", "-f", "dot")
    assert dot.returncode == 1
    assert dot.stdout.startswith("digraph explore {") and dot.stdout.rstrip().endswith("}")
    assert '[label="success"]' in dot.stdout and "PAM_SUCCESS" in dot.stdout
    mm = explorer.run("-d", d, "svc", "-t", "auth", "-f", "mermaid")
    assert mm.stdout.startswith("flowchart TD\n")
    assert '-->|"success"|' in mm.stdout
    rc, objs = explorer.json("-d", d, "svc")
    assert [o["type"] for o in objs] == ["auth", "account", "password", "session"]
    # no account/password/session lines and no "other": nothing succeeds
    assert [f["kind"] for f in objs[1]["findings"]] == ["lockout"]
    assert objs[1]["paths"] == [{"calls": [], "result": "PAM_PERM_DENIED"}]


@pytest.mark.skipif(OPENPAM, reason="Linux-PAM syntax")
def test_paths_take_every_edge(explorer):
    """The json paths (the replay set) take every edge, and each is a whole
    transaction: the calls in stack order, ending in its result."""
    d = os.path.join(STACKS, "good-jumps")
    rc, objs = explorer.json("-d", d, "svc", "-t", "auth")
    o = objs[0]
    assert rc == 0 and o["replays"] == len(o["paths"]) >= o["edges"] / 4
    seen = set()
    for p in o["paths"]:
        lines = [int(c["where"].split(":")[1]) for c in p["calls"]]
        assert lines == sorted(lines)
        seen.update((c["where"], c["outcome"]) for c in p["calls"])
    # every outcome of the password lines shows up in some path
    assert {oc for w, oc in seen if w == "svc:3"} >= {"success", "auth_err"}


@pytest.mark.skipif(OPENPAM, reason="Linux-PAM syntax")
def test_model_and_outcomes(explorer, tmp_path):
    d = os.path.join(STACKS, "good-common-auth")
    # pam_unix that can only fail: a lockout at the line that fails
    rc, objs = explorer.json("-d", d, "svc", "-t", "auth", "--model",
                             "pam_unix=auth_err,user_unknown")
    assert rc == 1
    assert [(f["kind"], f["where"]) for f in objs[0]["findings"]] == \
        [("lockout", "svc:2"), ("dead-line", "svc:4"), ("dead-line", "svc:5")]
    # by file:line, and --outcomes for every other module
    rc, objs = explorer.json("-d", d, "svc", "-t", "auth", "--model",
                             "svc:2=success", "--outcomes", "success")
    assert rc == 1
    assert [(f["kind"], f["where"]) for f in objs[0]["findings"]] == \
        [("dead-line", "svc:3")]
    assert [r["result"] for r in objs[0]["table"]] == ["PAM_SUCCESS"]
    # --must: the result ignores pam_cap
    rc, objs = explorer.json("-d", d, "svc", "-t", "auth", "--must", "pam_unix",
                             "--must", "pam_cap")
    assert [(f["kind"], f["where"]) for f in objs[0]["findings"]] == [("ignored", "svc:5")]
    # a --must module that is not there
    rc, objs = explorer.json("-d", d, "svc", "-t", "auth", "--must", "pam_sss")
    assert [(f["kind"], f["where"]) for f in objs[0]["findings"]] == \
        [("bypass", "svc:2"), ("ignored", "svc")]


def test_usage_errors(explorer, tmp_path):
    for args, what in [((), "SERVICE"), (("svc",), "-d SERVICE_DIR or --system"),
                       (("-d", str(tmp_path), "--system", "svc"), "either"),
                       (("-d", str(tmp_path), "-t", "bogus", "svc"), "--type"),
                       (("-d", str(tmp_path), "--outcomes", "nope", "svc"), "--outcomes"),
                       (("-d", str(tmp_path), "--model", "pam_unix", "svc"), "--model"),
                       (("-d", str(tmp_path), "-f", "xml", "svc"), "--format"),
                       (("-d", str(tmp_path / "none"), "svc"), "none")]:
        p = explorer.run(*args)
        assert p.returncode == 2, (args, p.stdout, p.stderr)
        assert what in p.stderr, (args, p.stderr)
    # a --model that names nothing in the stack
    (tmp_path / "svc").write_text("auth required pam_permit.so\n")
    p = explorer.run("-d", str(tmp_path), "svc", "--model", "pam_typo=success")
    assert p.returncode == 2 and "pam_typo: no such module" in p.stderr


@pytest.mark.skipif(OPENPAM, reason="Linux-PAM syntax")
def test_refused_configuration(explorer, tmp_path):
    """An include cycle: up to Linux-PAM 1.5 libpam would recurse until it
    crashes, the wrapper refuses it, so does the explorer (a lockout), and
    libpam's pam_start through the wrapper must fail as well; from 1.6
    libpam stops at its include limit, and the line there fails."""
    (tmp_path / "svc").write_text("auth include inc\n")
    (tmp_path / "inc").write_text("auth include svc\n")
    rc, objs = explorer.json("-d", str(tmp_path), "svc", "-t", "auth")
    assert rc == 1
    assert objs[0]["replayed"] and objs[0]["disagreement"] is None
    assert [(f["kind"], f["where"]) for f in objs[0]["findings"]] == [("lockout", "inc:1")]
    if int(os.environ.get("PWRAP_EXPLORE_READS", "105")) < 106:
        assert objs[0]["refused"].startswith("inc:1: an include cycle")
    else:
        assert "refused" not in objs[0]
        assert "nested deeper than libpam allows" in objs[0]["findings"][0]["message"]


@pytest.mark.skipif(OPENPAM, reason="Linux-PAM syntax")
def test_no_real_module_loaded(explorer, tmp_path):
    """The replay never loads a module of the stack: a module that would
    leave a file if it ran does not."""
    mark = tmp_path / "ran"
    (tmp_path / "svc").write_text(
        "auth required pam_exec.so /bin/touch %s\nauth required pam_permit.so\n" % mark)
    rc, objs = explorer.json("-d", str(tmp_path), "svc", "-t", "auth")
    check_replayed(objs)
    assert objs[0]["replays"] >= 2
    assert not mark.exists()


def test_man_page(explorer):
    """pamtest-explore(1) renders cleanly and documents every option of
    --help."""
    import re
    import shutil
    import subprocess

    page = os.path.join(STACKS, os.pardir, os.pardir, os.pardir, "doc", "pamtest-explore.1")
    with open(page, encoding="utf-8") as f:
        text = f.read().replace("\\-", "-")
    helptext = explorer.run("--help").stdout
    opts = set(re.findall(r"--[a-z][a-z-]+", helptext))
    assert {"--system", "--model", "--must", "--replay-all"} <= opts
    for opt in opts:
        assert opt in text, opt
    if shutil.which("groff") is None:
        pytest.skip("groff is not installed")
    r = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z", page],
                       capture_output=True, text=True,
                       env={**os.environ, "LC_ALL": "C.UTF-8"})
    assert r.returncode == 0 and r.stderr == "", r.stderr


@pytest.mark.skipif(OPENPAM, reason="Linux-PAM syntax")
def test_include_targets_not_files(explorer, tmp_path):
    """Issue 33: an include of /dev/null or of a directory reads as empty,
    as libpam reads it (no lockout, no finding, confirmed by the replay on
    libpam); an include of a FIFO is refused at once, never opened (libpam
    would block; libpam_wrapper refuses it, so pam_start fails there)."""
    (tmp_path / "dir").mkdir()
    os.mkfifo(tmp_path / "fifo")
    for target in ("/dev/null", str(tmp_path / "dir")):
        (tmp_path / "svc").write_text(
            "auth include %s\nauth [success=1 default=ignore] pam_matrix.so\n"
            "auth requisite pam_deny.so\nauth required pam_permit.so\n" % target)
        rc, objs = explorer.json("-d", str(tmp_path), "svc", "-t", "auth")
        check_replayed(objs)
        assert rc == 0 and objs[0]["findings"] == [], objs[0]
        assert [t["result"] for t in objs[0]["table"]] == ["PAM_SUCCESS",
                                                           "PAM_AUTH_ERR"]
    (tmp_path / "svc").write_text("auth include fifo\nauth required pam_permit.so\n")
    rc, objs = explorer.json("-d", str(tmp_path), "svc", "-t", "auth")
    check_replayed(objs)
    assert rc == 1 and "svc:1: include target fifo is not a file" in objs[0]["refused"]


@pytest.mark.skipif(OPENPAM, reason="Linux-PAM syntax")
def test_model_absent_module(explorer, tmp_path):
    """Issue 33: --model works for a module absent on this machine (a
    server's stack audited elsewhere): the table changes, the replay on
    libpam runs it, the human output says once what was absent and how it
    was modelled."""
    if os.path.exists(os.path.join(os.environ.get("PWRAP_SYSTEM_MODULE_DIR", "/nonexistent"),
                                   "pam_sss.so")):
        pytest.skip("pam_sss.so is installed here: it is not absent")
    (tmp_path / "svc").write_text("auth sufficient pam_sss.so\n"
                                  "auth required pam_deny.so\n")
    rc, objs = explorer.json("-d", str(tmp_path), "svc", "-t", "auth")
    check_replayed(objs)
    # as libpam gives it: PAM_MODULE_UNKNOWN, nobody gets in
    assert [t["result"] for t in objs[0]["table"]] == ["PAM_AUTH_ERR"]
    assert objs[0]["absent"] == [{"module": "pam_sss", "outcomes": ["module_unknown"],
                                  "modelled": False}]
    args = ("-d", str(tmp_path), "svc", "-t", "auth", "--model",
            "pam_sss=success,auth_err,ignore")
    rc, objs = explorer.json(*args)
    check_replayed(objs)
    assert [t["result"] for t in objs[0]["table"]] == ["PAM_SUCCESS", "PAM_AUTH_ERR"]
    assert success_terms(objs[0]) == [(("pam_sss", ("success",)),)]
    p = explorer.run(*args)
    assert p.returncode == 0, p.stderr
    assert p.stdout.count("absent on this machine") == 1
    assert "absent on this machine: pam_sss {success, auth_err, ignore} (--model)\n" in p.stdout
