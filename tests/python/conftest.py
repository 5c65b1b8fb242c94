# SPDX-License-Identifier: BSD-3-Clause
#
# Fixtures of the pypamtest suite.  Every test that runs PAM gets its own
# service directory (mkdtemp below $TMPDIR, removed afterwards) and points
# PAM_WRAPPER_SERVICE_DIR at it, so the whole suite also proves that one
# process can change the service directory between transactions.  The
# suite is meant to run under ctest (tests/python/CMakeLists.txt), which
# preloads the wrapper into this python and puts our build first on
# PYTHONPATH.  The directories and files come from the shared
# tests/pytest_common/pwrap_fixtures.py.
import os
import sys

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, "pytest_common"))
from pwrap_fixtures import TempDir, make_temp_dir  # noqa: E402,F401


def our_module(name):
    """Path of one of our built modules (bare name outside ctest)."""
    moddir = os.environ.get("PWRAP_MODULE_DIR")
    return os.path.join(moddir, name) if moddir else name


def lpt_module():
    """Path of tests/libpamtest's pam_lpt_test.so (ctest sets it): the
    test-only module that sends the messages, sets the variables and takes
    the time a line says, on Linux-PAM and OpenPAM alike."""
    path = os.environ.get("PWRAP_LPT_MODULE")
    assert path, "PWRAP_LPT_MODULE (pam_lpt_test.so) is not set: run under ctest"
    return path


class ServiceDir(TempDir):
    """A private PAM_WRAPPER_SERVICE_DIR (0755) with helpers to fill it
    (file, service, passdb: see TempDir); path is a str."""

    def __init__(self):
        super().__init__("pypamtest-")

    def activate(self):
        os.environ["PAM_WRAPPER_SERVICE_DIR"] = self.path

    def service(self, name, *lines):
        reason = openpam_cannot(lines)
        if reason:
            pytest.skip(reason)
        return super().service(name, *lines)


# Built against OpenPAM (PWRAP_PAM_KIND from CMake), a test whose stack
# needs Linux-PAM (its stock modules or its syntax) is skipped, saying why.
OPENPAM = os.environ.get("PWRAP_PAM_KIND") == "OpenPAM"
OPENPAM_MODULES = {"pam_permit.so", "pam_deny.so", "pam_return.so"}
# Ours, which the wrapper finds by these names on every implementation.
OUR_MODULES = {"pam_matrix.so", "pam_chatty.so", "pam_set_items.so",
               "pam_get_items.so"}


def openpam_cannot(lines):
    """Why OpenPAM cannot run this stack, or None."""
    if not OPENPAM:
        return None
    for line in lines:
        words = line.split()
        if len(words) < 3 or words[0].startswith("#"):
            continue
        if words[0].startswith(("-", "@")) or words[1].startswith("[") \
                or words[1] == "substack":
            return "Linux-PAM syntax: %s" % line
        if "/" not in words[2] and words[1] != "include" \
                and words[2] not in OPENPAM_MODULES | OUR_MODULES:
            return "Linux-PAM's module %s" % words[2]
    return None


@pytest.fixture
def make_service_dir(make_temp_dir):
    """Factory of extra service directories (removed after the test)."""
    return lambda: make_temp_dir(ServiceDir)


@pytest.fixture
def svc(make_service_dir):
    """This test's service directory, already set in the environment."""
    old = os.environ.get("PAM_WRAPPER_SERVICE_DIR")
    sd = make_service_dir()
    sd.activate()
    yield sd
    if old is None:
        os.environ.pop("PAM_WRAPPER_SERVICE_DIR", None)
    else:
        os.environ["PAM_WRAPPER_SERVICE_DIR"] = old
