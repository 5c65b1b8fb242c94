# SPDX-License-Identifier: BSD-3-Clause
#
# Shared helpers of the tests of `pam_wrapper --system` (tests/system): the
# machine's own PAM stacks (Debian 12's /etc/pam.d, and the authselect-style
# stack of authselect/) run for real by pamtest(1) and the pam_wrapper(1)
# launcher, with test users only.  Child processes start from a clean
# environment (no wrapper, no nss_wrapper variables of ours): each tool
# sets up what it needs itself.  Stacks whose flow depends on who calls
# them (pam_rootok lets root through, pam_unix asks root no old password)
# run as a normal user: as nobody when the suite runs as root
# (as_normal_user()).
import os
import re
import shutil
import sys
import sysconfig

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, "pytest_common"))
from pwrap_fixtures import HANG, child_env, mkdtemp, remove_tree, run  # noqa: E402,F401

HERE = os.path.dirname(os.path.abspath(__file__))
NOBODY = ["setpriv", "--reuid=nobody", "--regid=nogroup", "--clear-groups"]


def need_env(name):
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run these tests through ctest "
                    "(tests/system/CMakeLists.txt sets it)")
    return value


def bin_path(name):
    return os.path.join(need_env("PWRAP_BIN_DIR"), name)


def cwrap_lib(name):
    """Debian's libnss_wrapper.so / libuid_wrapper.so."""
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    for d in (f"/usr/lib/{multiarch}", "/usr/lib64", "/usr/lib"):
        p = os.path.join(d, name)
        if os.path.isfile(p):
            return p
    pytest.fail(f"{name} not found: install libnss-wrapper and "
                "libuid-wrapper (scripts/install-deps.sh)")
    return None


def clean_env(**values):
    """The environment of a tool we start: ours without the wrapper's,
    nss_wrapper's and uid_wrapper's variables (sanitizer runtimes kept,
    and first: before a cwrap library given in LD_PRELOAD, which then also
    sees libasan and does not dlopen libc with RTLD_DEEPBIND, which ASan
    refuses)."""
    env = child_env(drop=("PAM_WRAPPER", "PAM_MATRIX", "NSS_WRAPPER",
                          "UID_WRAPPER", "_PYTEST_PAM_WRAPPER"), **values)
    san = ":".join(p for p in os.environ.get("PWRAP_PRELOAD", "").split(":")
                   if p and os.path.basename(p) != "libpam_wrapper.so")
    if san:
        given = values.get("LD_PRELOAD")
        env["LD_PRELOAD"] = san + ":" + given if given else san
    return env


def as_normal_user(argv):
    """argv, run as nobody when we are root (a normal user otherwise)."""
    if os.getuid() == 0:
        if shutil.which("setpriv") is None:
            pytest.fail("setpriv is missing (util-linux)")
        return NOBODY + list(argv)
    return list(argv)


def pamtest(*args, user=True, env=None, timeout=HANG):
    """pamtest ARGS (as a normal user unless user=False); the
    CompletedProcess."""
    argv = [bin_path("pamtest")] + list(args)
    return run(as_normal_user(argv) if user else argv,
               env if env is not None else clean_env(), timeout=timeout)


def report_count(stderr):
    """How many times a copy's report ("... copied to ...; each module")
    was printed."""
    return len(re.findall(r" copied to .*; each module", stderr))


@pytest.fixture
def tmpdir_normal():
    """A private directory below $TMPDIR that a normal user (nobody) may
    use when we are root; removed afterwards."""
    d = mkdtemp("pwrap-system.", 0o755)
    if os.getuid() == 0:
        os.chown(d, 65534, 65534)
    yield d
    remove_tree(d)


def chown_normal(path):
    """Gives path (a tree) to nobody when we are root."""
    if os.getuid() != 0:
        return
    for root, dirs, files in os.walk(path):
        for n in dirs + files:
            os.lchown(os.path.join(root, n), 65534, 65534)
    os.lchown(path, 65534, 65534)
