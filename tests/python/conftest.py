# SPDX-License-Identifier: BSD-3-Clause
#
# Fixtures of the pypamtest suite.  Every test that runs PAM gets its own
# service directory (mkdtemp below $TMPDIR, removed afterwards) and points
# PAM_WRAPPER_SERVICE_DIR at it, so the whole suite also proves that one
# process can change the service directory between transactions.  The
# suite is meant to run under ctest (tests/python/CMakeLists.txt), which
# preloads the wrapper into this python and puts our build first on
# PYTHONPATH.
import os
import shutil
import tempfile

import pytest


def our_module(name):
    """Path of one of our built modules (bare name outside ctest)."""
    moddir = os.environ.get("PWRAP_MODULE_DIR")
    return os.path.join(moddir, name) if moddir else name


class ServiceDir:
    """A private PAM_WRAPPER_SERVICE_DIR with helpers to fill it."""

    def __init__(self):
        self.path = tempfile.mkdtemp(prefix="pypamtest-")
        os.chmod(self.path, 0o755)

    def file(self, name, text):
        """Writes name below the directory; returns its path."""
        path = os.path.join(self.path, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def service(self, name, *lines):
        """Writes the service file name from stack lines."""
        return self.file(name, "".join(line + "\n" for line in lines))

    def passdb(self, *entries):
        """A pam_matrix passdb of (user, password, service) entries."""
        return self.file("passdb", "".join(":".join(e) + "\n" for e in entries))

    def activate(self):
        os.environ["PAM_WRAPPER_SERVICE_DIR"] = self.path

    def remove(self):
        shutil.rmtree(self.path, ignore_errors=True)


@pytest.fixture
def make_service_dir():
    """Factory of extra service directories (removed after the test)."""
    made = []

    def make():
        sd = ServiceDir()
        made.append(sd)
        return sd

    yield make
    for sd in made:
        sd.remove()


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
