# SPDX-License-Identifier: BSD-3-Clause
"""The installed tools: `cmake --install` into a temporary prefix, then the
installed pam_wrapper and pamtest must find the installed library and
modules on their own (no PWRAP_* or PAM_WRAPPER_* variables) and the man
pages and example scenarios must be in place."""
import glob
import os

import pytest

from tools_helpers import (APP, child_env, cmake_installed, run,
                           sanitizer_preload, temp_dir)


@pytest.fixture(scope="module")
def prefix():
    with cmake_installed("tools-install.") as d:
        yield d


def clean_env(tmpdir):
    return child_env(("PWRAP_", "PAM_WRAPPER", "PAM_MATRIX", "NSS_WRAPPER"),
                     TMPDIR=tmpdir, LD_PRELOAD=sanitizer_preload() or None)


def test_files_are_installed(prefix):
    for rel in ("bin/pam_wrapper", "bin/pamtest", "share/man/man1/pam_wrapper.1",
                "share/man/man1/pamtest.1", "share/man/man5/pamtest-scenario.5"):
        assert os.path.exists(os.path.join(prefix, rel)), rel
    ex = glob.glob(os.path.join(prefix, "share/doc/*/examples/scenarios/*.pamtest"))
    assert {os.path.basename(p) for p in ex} >= {"chauthtok.pamtest", "set-get-items.pamtest"}


def test_installed_tools_find_the_installed_wrapper(prefix):
    with temp_dir("tools-inst-run.") as tmp:
        env = clean_env(tmp)
        r = run([os.path.join(prefix, "bin/pam_wrapper"), "-u", "bob:secret:svc",
                 "/bin/sh", "-c", 'echo "$LD_PRELOAD"'], env)
        assert r.returncode == 0, r.stderr
        assert r.stdout.strip().split(":")[-1].startswith(prefix + "/")
        r = run([os.path.join(prefix, "bin/pam_wrapper"), "-u", "bob:secret:svc",
                 APP, "svc", "bob", "secret"], env)
        assert r.returncode == 0, r.stdout + r.stderr
        scen = sorted(glob.glob(os.path.join(prefix, "share/doc/*/examples/scenarios/*.pamtest")))
        if os.environ.get("PWRAP_PAM_KIND") == "OpenPAM":
            # (these two need Linux-PAM: see test_pamtest.py)
            scen = [s for s in scen if os.path.basename(s)
                    not in ("set-get-items.pamtest", "login.pamtest")]
        r = run([os.path.join(prefix, "bin/pamtest"), "-f", "tap", *scen], env)
        assert r.returncode == 0, r.stdout + r.stderr
        assert os.listdir(tmp) == []
