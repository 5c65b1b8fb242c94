# SPDX-License-Identifier: BSD-3-Clause
"""Fixtures of the explorer's tests (pamtest explore): a private, empty
$TMPDIR per test (the replays must leave nothing there) and a way to run
the explorer on a directory of service files and read its json."""
import json
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, "pytest_common"))
from pwrap_fixtures import HANG, child_env, run, sanitizer_preload, temp_dir  # noqa: E402

SRC = os.environ.get("PWRAP_SOURCE_DIR",
                     os.path.dirname(os.path.dirname(os.path.dirname(
                         os.path.abspath(__file__)))))
BIN = os.environ.get("PWRAP_BIN_DIR", os.path.join(SRC, "build", "bin"))
PAMTEST = os.path.join(BIN, "pamtest")
STACKS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "stacks")
OPENPAM = os.environ.get("PWRAP_PAM_KIND") == "OpenPAM"


class Explorer:
    pamtest_path = PAMTEST

    def __init__(self, tmpdir):
        self.tmpdir = tmpdir

    def env(self):
        return child_env(("PAM_WRAPPER", "PAMTEST"), TMPDIR=self.tmpdir,
                         LD_PRELOAD=sanitizer_preload() or None)

    def run(self, *args, timeout=HANG):
        return run([PAMTEST, "explore", *args], self.env(), timeout=timeout)

    def pamtest(self, *args, timeout=HANG):
        """pamtest itself (a scenario: modules loaded for real)."""
        return run([PAMTEST, *args], self.env(), timeout=timeout)

    def json(self, *args, ok=(0, 1), timeout=HANG):
        """Runs with -f json: (exit status, list of one object per group)."""
        p = self.run(*args, "-f", "json", timeout=timeout)
        assert p.returncode in ok, (p.returncode, p.stdout, p.stderr)
        data = json.loads(p.stdout)
        return p.returncode, data if isinstance(data, list) else [data]

    def leftovers(self):
        return sorted(os.listdir(self.tmpdir))


@pytest.fixture
def explorer():
    with temp_dir("explore-test.") as d:
        x = Explorer(d)
        yield x
        assert x.leftovers() == [], "the explorer left files in $TMPDIR"
