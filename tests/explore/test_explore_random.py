# SPDX-License-Identifier: BSD-3-Clause
"""Exactness of pamtest explore on random stacks: stacks put together from
the pamdiff fuzzer's dictionary (pamdiff_grammar.py) and its seed corpus
are explored with --replay-all, which runs every outcome of every edge of
the graph on libpam (through the wrapper, with the stand-in module), and
every one must give the calls and the result the graph says.  A
configuration on which libpam's pam_start fails must fail there as well
(unless the wrapper refuses a file outright: libpam would hang or crash).

PWRAP_EXPLORE_RANDOM sets how many random stacks (default 120) and
PWRAP_EXPLORE_SEED the seed (default fixed, so that a failure repeats).
"""
import json
import os

import pytest

import pamdiff_grammar as grammar
from conftest import OPENPAM

COUNT = int(os.environ.get("PWRAP_EXPLORE_RANDOM", "120"))
SEED = int(os.environ.get("PWRAP_EXPLORE_SEED", "20261204"))
MODDIR = os.environ.get("PWRAP_SYSTEM_MODULE_DIR", "/lib/x86_64-linux-gnu/security")
AT_INCLUDE = os.environ.get("PWRAP_EXPLORE_AT_INCLUDE") != "0"
# Stacks the explorer says it cannot replay or cannot tell: the wrapper
# refuses the file itself (libpam would hang or crash on it), a line too
# long to name the stand-in module in it, Debian's failed @include in an
# included file (its failing line goes to a group libpam leaves unset).
NOT_REPLAYED = ("the wrapper refuses a file", "a line is too long")
UNTOLD = "cannot be told"

pytestmark = pytest.mark.skipif(OPENPAM, reason="the pamdiff grammar is "
                                "Linux-PAM's (OpenPAM: test_explore_openpam.py)")


def make_specials(d):
    """The include targets that are not plain files (fuzz_pamdiff's): an
    empty file, one of mode 0 (unreadable but to root), a FIFO without a
    writer (libpam would block: the wrapper refuses it, the explorer must
    say so without blocking) and a directory (read as empty)."""
    with open(os.path.join(d, "empty"), "wb"):
        pass
    with open(os.path.join(d, "secret"), "wb") as f:
        f.write(b"auth optional pam_echo.so secret\n")
    os.chmod(os.path.join(d, "secret"), 0)
    os.mkfifo(os.path.join(d, "fifo"))
    os.mkdir(os.path.join(d, "dir"))


def explore_case(explorer, tmp_path, files, service="svc"):
    d = str(tmp_path / "A")
    os.mkdir(d)
    make_specials(d)
    for name, text in files.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(text.replace(b"@A@", d.encode()))
    p = explorer.run("-d", d, service, "--replay-all", "-f", "json")
    if p.returncode == 2 and UNTOLD in p.stderr and "@include" in p.stderr:
        assert p.stdout == ""
        return 2
    assert p.returncode in (0, 1), (p.returncode, p.stderr)
    objs = json.loads(p.stdout)
    assert len(objs) == 4
    for o in objs:
        assert o["disagreement"] is None, o["disagreement"]
        if not o["replayed"]:
            assert any(w in o["not_replayed"] for w in NOT_REPLAYED), o
            continue
        assert o["replayed"], o
        if "refused" in o:
            assert o["replays"] == 1
            continue
        # every outcome of every edge was run
        assert o["replays"] >= 1 and len(o["paths"]) == o["replays"]
        kinds = {f["kind"] for f in o["findings"]}
        assert ("lockout" in kinds) == all(
            r["result"] != "PAM_SUCCESS" for r in o["table"])
    return p.returncode


@pytest.mark.parametrize("name,files", list(grammar.random_stacks(COUNT, SEED, MODDIR, AT_INCLUDE)),
                         ids=lambda v: v if isinstance(v, str) else "")
def test_random_stack(explorer, tmp_path, name, files):
    explore_case(explorer, tmp_path, files)


@pytest.mark.parametrize("name,files", list(grammar.corpus_cases(MODDIR)),
                         ids=lambda v: v if isinstance(v, str) else "")
def test_pamdiff_corpus(explorer, tmp_path, name, files):
    explore_case(explorer, tmp_path, files)


def test_most_were_replayed(explorer, tmp_path):
    """The cases above do test something: most random stacks are replayed
    whole (not refused, not too long, not untold)."""
    told = 0
    cases = list(grammar.random_stacks(40, SEED + 1, MODDIR, AT_INCLUDE))
    for i, (name, files) in enumerate(cases):
        sub = tmp_path / str(i)
        sub.mkdir()
        told += explore_case(explorer, sub, files) in (0, 1)
    assert told >= len(cases) * 3 // 4, (told, len(cases))


# ---- issue 35's shapes mixed into random stacks --------------------------------

XPMODS = os.environ.get("PWRAP_EXPLORE_XPMODS", "")
GROUPS = (b"auth", b"account", b"password", b"session")
CONTROLS = (b"required", b"requisite", b"sufficient", b"optional",
            b"[success=1 default=ignore]", b"[success=done new_authtok_reqd=done "
            b"default=die]", b"[default=bad ignore=ignore]")
# module words libpam reads oddly: a name it refuses (empty or "?" once
# the directory and the last suffix are off), or one that only looks so
ODD_WORDS = (b".so", b"?", b"/", b"dir/.so", b"?.so", b"a.?", b"??", b"..so",
             b"pam_permit.so.so", b"./pam_permit.so")


def extended_stacks(n, seed):
    """Random stacks of the fuzzer's grammar with one of issue 35's shapes
    added: modules whose libraries are missing (or lack a symbol version),
    include and substack chains near and past libpam's nesting limits, odd
    module words, and the service named with a '/' (the name libpam reads
    is after the last '/', in lower case)."""
    import random
    rnd = random.Random(seed)
    base = list(grammar.random_stacks(n, seed, MODDIR, AT_INCLUDE))
    for i, (name, files) in enumerate(base):
        files = dict(files)
        lines = files["svc"].splitlines(keepends=True)
        shape = ("deps", "chain", "odd", "name")[i % 4]
        service = "svc"
        extra = []
        if shape == "deps" and XPMODS:
            for _ in range(rnd.randint(1, 3)):
                mod = rnd.choice(("found", "gone", "version"))
                extra.append(b"%s %s %s/pam_xp_%s.so\n" % (
                    rnd.choice(GROUPS), rnd.choice(CONTROLS),
                    XPMODS.encode(), mod.encode()))
        elif shape == "chain":
            depth = rnd.randint(12, 20)
            group = rnd.choice(GROUPS)
            for k in range(depth):
                kw = rnd.choice((b"include", b"substack"))
                files["c%d" % k] = b"%s %s c%d\n%s %s pam_permit.so\n" % (
                    group, kw, k + 1, group, rnd.choice(CONTROLS))
            files["c%d" % depth] = b"%s required pam_deny.so\n" % group
            extra.append(b"%s include c0\n" % group)
        elif shape == "odd":
            extra.append(b"%s %s %s\n" % (rnd.choice(GROUPS), rnd.choice(CONTROLS),
                                           rnd.choice(ODD_WORDS)))
        else:
            service = rnd.choice(("x/svc", "a/b/SVC", "../Svc"))
        for line in extra:
            lines.insert(rnd.randint(0, len(lines)), line)
        files["svc"] = b"".join(lines)
        yield "%s-%s" % (name, shape), files, service


@pytest.mark.parametrize("name,files,service",
                         list(extended_stacks(COUNT // 3, SEED + 35)),
                         ids=lambda v: v if isinstance(v, str) and v.startswith("random") else "")
def test_random_stack_extended(explorer, tmp_path, name, files, service):
    """Every outcome of every edge of these stacks replayed on libpam, as
    above: the explorer's reading of missing libraries, nesting limits,
    odd module words and service names agrees with libpam's."""
    explore_case(explorer, tmp_path, files, service)
