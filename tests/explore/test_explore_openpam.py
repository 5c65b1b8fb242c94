# SPDX-License-Identifier: BSD-3-Clause
"""pamtest explore against OpenPAM (run in a build with
-DPWRAP_PAM_PREFIX=<an OpenPAM installation>): OpenPAM's control flags
(binding, include as a flag, sufficient ending the chain only when nothing
required failed, not in chauthtok's PAM_PRELIM_CHECK pass, no success at
all being PAM_SYSTEM_ERR), known mistakes, and random policies of OpenPAM's
syntax replayed on OpenPAM (every outcome of every edge)."""
import json
import os
import random

import pytest

from conftest import OPENPAM

pytestmark = pytest.mark.skipif(not OPENPAM, reason="OpenPAM's syntax and rules; "
                                "this build is against Linux-PAM")
COUNT = int(os.environ.get("PWRAP_EXPLORE_RANDOM", "120"))
SEED = int(os.environ.get("PWRAP_EXPLORE_SEED", "20261204"))


def explore(explorer, tmp_path, files, *args):
    d = tmp_path / "svc.d"
    d.mkdir()
    for name, text in files.items():
        (d / name).write_text(text)
    return explorer.json("-d", str(d), "svc", *args)


def check_replayed(objs):
    for o in objs:
        assert o["disagreement"] is None, o["disagreement"]
        assert o["replayed"], o


def findings(objs):
    return sorted((f["kind"], f["where"]) for o in objs for f in o["findings"])


@pytest.mark.parametrize("stack,want", [
    # sufficient pam_permit first: nothing else matters
    ("auth sufficient pam_permit.so\nauth required pam_matrix.so\n",
     [("bypass", "svc:1"), ("dead-line", "svc:2")]),
    # the password check optional next to a required pam_permit
    ("auth optional pam_matrix.so\nauth required pam_permit.so\n",
     [("bypass", "svc:1")]),
    # binding: its success ends the chain, its failure is a required one's
    ("auth binding pam_matrix.so\nauth required pam_deny.so\n", []),
    # a required module's PAM_IGNORE is no failure: the sufficient
    # pam_permit after it ends the chain with success
    ("auth required pam_matrix.so\nauth sufficient pam_permit.so\n"
     "auth required pam_deny.so\n", [("bypass", "svc:1")]),
    # a requisite pam_deny: nobody gets in
    ("auth requisite pam_deny.so\nauth required pam_matrix.so\n",
     [("lockout", "svc:1"), ("dead-line", "svc:2")]),
])
def test_openpam_stacks(explorer, tmp_path, stack, want):
    rc, objs = explore(explorer, tmp_path, {"svc": stack}, "-t", "auth")
    check_replayed(objs)
    assert findings(objs) == sorted(want), objs[0]["table"]
    assert rc == (1 if want else 0)


def test_include_and_other(explorer, tmp_path):
    """include as a flag adds the included service's lines of that
    facility; a facility without lines takes "other"'s."""
    rc, objs = explore(explorer, tmp_path, {
        "svc": "auth include system\n",
        "system": "auth required pam_matrix.so\naccount required pam_deny.so\n",
        "other": "account required pam_matrix.so\n",
    }, "-t", "all")
    check_replayed(objs)
    auth, account = objs[0], objs[1]
    assert auth["table"][0]["result"] == "PAM_SUCCESS"
    assert [c["where"] for c in auth["table"][0]["when"][0]] == ["system:1"]
    # account comes from other, not from system's account line
    assert [c["where"] for c in account["table"][0]["when"][0]] == ["other:1"]
    # no password or session lines anywhere: "all modules were unsuccessful"
    assert objs[2]["table"] == [{"result": "PAM_SYSTEM_ERR", "when": [[]], "more": 0}]


def test_prelim_pass(explorer, tmp_path):
    """chauthtok: in the PAM_PRELIM_CHECK pass sufficient is optional."""
    rc, objs = explore(explorer, tmp_path, {
        "svc": "password sufficient pam_permit.so\npassword required pam_matrix.so\n"},
        "-t", "password")
    check_replayed(objs)
    lines = {(c["where"], c["pass"]) for p in objs[0]["paths"] for c in p["calls"]}
    assert ("svc:2", "prelim") in lines and ("svc:2", "update") not in lines


def test_refused(explorer, tmp_path):
    """A module that cannot be loaded fails pam_start (OpenPAM), as the
    replay on OpenPAM confirms."""
    rc, objs = explore(explorer, tmp_path, {
        "svc": "auth required pam_permit.so\nauth required pam_nonexistent.so\n"},
        "-t", "auth")
    check_replayed(objs)
    assert "cannot be loaded" in objs[0]["refused"]
    assert findings(objs) == [("lockout", "svc:2")]


FACILITIES = ["auth", "account", "password", "session"]
FLAGS = ["required", "requisite", "sufficient", "binding", "optional"]
MODULES = ["pam_permit.so", "pam_deny.so", "pam_return.so", "pam_matrix.so",
           "pam_nonexistent.so"]


def random_policy(rng):
    files = {}
    for name in ("svc", "inc1", "inc2", "other"):
        if name != "svc" and rng.random() < 0.4:
            continue
        lines = []
        for _ in range(rng.randint(0, 7)):
            fac = rng.choice(FACILITIES)
            if rng.random() < 0.15:
                line = "%s include %s" % (fac, rng.choice(["inc1", "inc2", "missing"]))
            else:
                line = "%s %s %s" % (fac, rng.choice(FLAGS),
                                     rng.choice(MODULES[:4] * 6 + MODULES[4:]))
            r = rng.random()
            if r < 0.05:
                line += " # a comment"
            elif r < 0.08:
                line = line.replace(" ", " \\\n  ", 1)
            elif r < 0.1:
                line = line.replace(" ", ' "" ', 1)
            elif r < 0.11:
                line = "bogus " + line
            lines.append(line)
        files[name] = "\n".join(lines) + "\n"
    return files


@pytest.mark.parametrize("i", range(COUNT))
def test_random_policy(explorer, tmp_path, i):
    files = random_policy(random.Random(SEED * 7919 + i))
    p_dir = tmp_path / "svc.d"
    p_dir.mkdir()
    for name, text in files.items():
        (p_dir / name).write_text(text)
    p = explorer.run("-d", str(p_dir), "svc", "--replay-all", "-f", "json")
    assert p.returncode in (0, 1), (files, p.stderr)
    for o in json.loads(p.stdout):
        assert o["disagreement"] is None, (files, o["disagreement"])
        assert o["replayed"], (files, o)
