# SPDX-License-Identifier: BSD-3-Clause
#
# A python started with PAM_WRAPPER=1 and PAM_WRAPPER_SERVICE_DIR but
# without libpam_wrapper.so in LD_PRELOAD: run_pamtest must refuse with a
# PamTestError that names LD_PRELOAD and libpam_wrapper.so instead of
# running the system's /etc/pam.d.  Without PAM_WRAPPER=1 (or without a
# service directory) nothing changes.  Each case runs in a child python
# (this one is wrapped); sanitizer builds keep the sanitizer runtimes
# preloaded in it.
import os
import subprocess
import sys

import pytest

import pypamtest
from pwrap_fixtures import HANG

CHILD = r"""
import os, sys
import pypamtest
with open("/proc/self/maps", encoding="utf-8") as f:
    assert "libpam_wrapper" not in f.read(), "the child is wrapped"
try:
    pypamtest.run_pamtest("alice", "svc",
                          [pypamtest.TestCase(pypamtest.PAMTEST_AUTHENTICATE)])
except pypamtest.PamTestError as e:
    print("ERROR", e.args[0] if len(e.args) == 2 else "case")
    print(e.args[-1])
else:
    print("OK")
"""


def run_unwrapped(**env):
    lib = os.path.basename(os.environ.get("PWRAP_LIB", "libpam_wrapper.so"))
    sanitizers = [p for p in os.environ.get("PWRAP_PRELOAD", "").split(":")
                  if p and os.path.basename(p) != lib]
    child_env = {k: v for k, v in os.environ.items()
                 if k not in ("LD_PRELOAD", "PAM_WRAPPER",
                              "PAM_WRAPPER_SERVICE_DIR")}
    if sanitizers:
        child_env["LD_PRELOAD"] = ":".join(sanitizers)
    child_env.update(env)
    return subprocess.run([sys.executable, "-c", CHILD], env=child_env,
                          capture_output=True, text=True, timeout=HANG)


def test_missing_preload_is_an_error(svc):
    svc.service("svc", "auth required pam_permit.so")
    r = run_unwrapped(PAM_WRAPPER="1", PAM_WRAPPER_SERVICE_DIR=svc.path)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[0] == "ERROR %d" % pypamtest.PAMTEST_ERR_START, r.stdout
    assert "LD_PRELOAD" in lines[1] and "libpam_wrapper.so" in lines[1]
    # The exception says it all: libpamtest's own stderr line is not added.
    assert "LD_PRELOAD" not in r.stderr


def test_first_character_counts(svc):
    # "1..." enables the wrapper (upstream reads only the first character).
    svc.service("svc", "auth required pam_permit.so")
    r = run_unwrapped(PAM_WRAPPER="1yes", PAM_WRAPPER_SERVICE_DIR=svc.path)
    assert r.stdout.startswith("ERROR %d\n" % pypamtest.PAMTEST_ERR_START)


@pytest.mark.parametrize("env", [{"PAM_WRAPPER": "0"}, {"PAM_WRAPPER": ""},
                                 {}, {"PAM_WRAPPER": "1"}])
def test_nothing_changes_without_the_request(svc, env):
    # Without PAM_WRAPPER=1 and a service directory, plain PAM runs (what
    # the system's /etc/pam.d says is not this test's business).
    svc.service("svc", "auth required pam_permit.so")
    if env.get("PAM_WRAPPER") != "1":
        env = dict(env, PAM_WRAPPER_SERVICE_DIR=svc.path)
    r = run_unwrapped(**env)
    assert r.returncode == 0, r.stderr
    assert "LD_PRELOAD" not in r.stdout + r.stderr
    assert r.stdout.splitlines()[0] in ("OK", "ERROR case", "ERROR %d"
                                        % pypamtest.PAMTEST_ERR_START)
