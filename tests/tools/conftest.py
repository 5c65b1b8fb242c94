# SPDX-License-Identifier: BSD-3-Clause
"""Fixtures of the command-line tool tests.

Every test gets its own empty $TMPDIR (mkdtemp below the suite's TMPDIR,
removed afterwards) so that it can check the tools leave nothing behind, and
a separate work directory for the files it writes.
"""
import os
import shutil
import tempfile

import pytest

from tools_helpers import Env


def _mkdtemp(prefix):
    return tempfile.mkdtemp(prefix=prefix, dir=os.environ.get("TMPDIR", "/tmp"))


@pytest.fixture
def tenv():
    """Runs tools with a private, empty $TMPDIR."""
    d = _mkdtemp("tools-test.")
    try:
        yield Env(d)
    finally:
        shutil.rmtree(d, ignore_errors=True)


@pytest.fixture
def workdir():
    """A directory outside the checked $TMPDIR, for scenario files and outputs."""
    d = _mkdtemp("tools-work.")
    try:
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)
