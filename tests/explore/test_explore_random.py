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


def explore_case(explorer, tmp_path, files):
    d = str(tmp_path / "A")
    os.mkdir(d)
    make_specials(d)
    for name, text in files.items():
        with open(os.path.join(d, name), "wb") as f:
            f.write(text.replace(b"@A@", d.encode()))
    p = explorer.run("-d", d, "svc", "--replay-all", "-f", "json")
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
