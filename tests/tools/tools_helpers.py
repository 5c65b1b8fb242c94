# SPDX-License-Identifier: BSD-3-Clause
"""Helpers of the command-line tool tests: where the tools are, and a way
to run them with a private $TMPDIR and without any wrapper variables from
the calling environment.  In sanitizer builds the sanitizer runtimes of
PWRAP_PRELOAD are preloaded into the tools so that the uninstrumented
programs the launcher wraps can load the instrumented wrapper.  The
generic parts (environments, running, writing files) are the shared
tests/pytest_common/pwrap_fixtures.py's, which conftest.py puts on sys.path.
"""
import os

from pwrap_fixtures import (HANG, child_env, cmake_installed, run,  # noqa: F401
                            sanitizer_preload, temp_dir, write_file)

SRC = os.environ.get("PWRAP_SOURCE_DIR",
                     os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BIN = os.environ.get("PWRAP_BIN_DIR", os.path.join(SRC, "build", "bin"))
LIB = os.environ.get("PWRAP_LIB", os.path.join(os.path.dirname(BIN), "lib", "libpam_wrapper.so"))
APP = os.environ.get("PWRAP_TOOLS_APP", os.path.join(BIN, "tools_login_app"))
EXAMPLES = os.path.join(SRC, "examples", "scenarios")
LAUNCHER = os.path.join(BIN, "pam_wrapper")
PAMTEST = os.path.join(BIN, "pamtest")

# Variables of the calling environment a tool must not see.
WRAPPER_VARS = ("PAM_WRAPPER", "NSS_WRAPPER", "PAM_MATRIX", "PAMTEST")


class Env:
    def __init__(self, tmpdir):
        self.tmpdir = tmpdir

    def env(self, **extra):
        values = {"TMPDIR": self.tmpdir, "LD_PRELOAD": sanitizer_preload() or None}
        values.update(extra)
        return child_env(WRAPPER_VARS, **values)

    def run(self, argv, input=None, timeout=HANG, **extra):
        return run(argv, self.env(**extra), stdin_text=input, timeout=timeout)

    def launcher(self, *args, **extra):
        return self.run([LAUNCHER, *args], **extra)

    def pamtest(self, *args, **extra):
        return self.run([PAMTEST, *args], **extra)

    def leftovers(self):
        return sorted(os.listdir(self.tmpdir))
