# SPDX-License-Identifier: BSD-3-Clause
"""Fixtures of the command-line tool tests.

Every test gets its own empty $TMPDIR (mkdtemp below the suite's TMPDIR,
removed afterwards) so that it can check the tools leave nothing behind, and
a separate work directory for the files it writes.  The directories come
from the shared tests/pytest_common/pwrap_fixtures.py.
"""
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, "pytest_common"))
from tools_helpers import Env, temp_dir  # noqa: E402


@pytest.fixture
def tenv():
    """Runs tools with a private, empty $TMPDIR."""
    with temp_dir("tools-test.") as d:
        yield Env(d)


@pytest.fixture
def workdir():
    """A directory outside the checked $TMPDIR, for scenario files and outputs."""
    with temp_dir("tools-work.") as d:
        yield d
