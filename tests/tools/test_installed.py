# SPDX-License-Identifier: BSD-3-Clause
"""The installed tools: `cmake --install` into a temporary prefix, then the
installed pam_wrapper and pamtest must find the installed library and
modules on their own (no PWRAP_* or PAM_WRAPPER_* variables) and the man
pages and example scenarios must be in place."""
import glob
import os
import shutil
import subprocess
import tempfile

import pytest

from tools_helpers import APP, sanitizer_preload

BUILD = os.environ.get("PWRAP_BUILD_DIR")
CMAKE = os.environ.get("PWRAP_CMAKE", "cmake")


@pytest.fixture(scope="module")
def prefix():
    if not BUILD:
        pytest.skip("PWRAP_BUILD_DIR is not set")
    d = tempfile.mkdtemp(prefix="tools-install.", dir=os.environ.get("TMPDIR", "/tmp"))
    try:
        subprocess.run([CMAKE, "--install", BUILD, "--prefix", d], check=True,
                       stdout=subprocess.DEVNULL)
        yield d
    finally:
        shutil.rmtree(d, ignore_errors=True)


def clean_env(tmpdir):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("PWRAP_", "PAM_WRAPPER", "PAM_MATRIX", "NSS_WRAPPER"))
           and k != "LD_PRELOAD"}
    env["TMPDIR"] = tmpdir
    if sanitizer_preload():
        env["LD_PRELOAD"] = sanitizer_preload()
    return env


def test_files_are_installed(prefix):
    for rel in ("bin/pam_wrapper", "bin/pamtest", "share/man/man1/pam_wrapper.1",
                "share/man/man1/pamtest.1", "share/man/man5/pamtest-scenario.5"):
        assert os.path.exists(os.path.join(prefix, rel)), rel
    ex = glob.glob(os.path.join(prefix, "share/doc/*/examples/scenarios/*.pamtest"))
    assert {os.path.basename(p) for p in ex} >= {"chauthtok.pamtest", "set-get-items.pamtest"}


def test_installed_tools_find_the_installed_wrapper(prefix):
    tmp = tempfile.mkdtemp(prefix="tools-inst-run.", dir=os.environ.get("TMPDIR", "/tmp"))
    try:
        env = clean_env(tmp)
        r = subprocess.run([os.path.join(prefix, "bin/pam_wrapper"), "-u", "bob:secret:svc",
                            "/bin/sh", "-c", 'echo "$LD_PRELOAD"'],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip().split(":")[-1].startswith(prefix + "/")
        r = subprocess.run([os.path.join(prefix, "bin/pam_wrapper"), "-u", "bob:secret:svc",
                            APP, "svc", "bob", "secret"],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        scen = sorted(glob.glob(os.path.join(prefix, "share/doc/*/examples/scenarios/*.pamtest")))
        r = subprocess.run([os.path.join(prefix, "bin/pamtest"), "-f", "tap", *scen],
                           env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        assert r.returncode == 0, r.stdout + r.stderr
        assert os.listdir(tmp) == []
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
