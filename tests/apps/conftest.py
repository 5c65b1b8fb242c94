# SPDX-License-Identifier: BSD-3-Clause
#
# Shared fixtures of the real-application tests (tests/apps): Debian's
# sshd, pamtester, python3-pam and stock Linux-PAM modules run under our
# libpam_wrapper.so, as whatever user runs the suite (nobody in the NOBODY
# twin).  Every test gets a private work directory below $TMPDIR with a
# TMPDIR of its own for the wrapped programs; the teardown fails the test if
# the wrapper left anything there.  A wrapped process that exits normally
# removes its runtime directory itself; one that ends otherwise (sshd's
# per-connection processes end with _exit) leaves it to the next wrapped
# process, which removes it (sweep_dead_dirs).  Directories, files,
# environments and running children come from the shared
# tests/pytest_common/pwrap_fixtures.py.
import ctypes
import ctypes.util
import json
import os
import subprocess
import sys
import sysconfig
from pathlib import Path

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, "pytest_common"))
from pwrap_fixtures import (HANG, TempDir, child_env, make_temp_dir,  # noqa: E402,F401
                            preload_parts, run, wait_until)

HERE = Path(__file__).resolve().parent
DRIVER = HERE / "pam_driver.py"
NOBODY_UID = 65534
NOGROUP_GID = 65534


def _need_env(name):
    value = os.environ.get(name)
    if not value:
        pytest.fail(f"{name} is not set: run these tests through ctest "
                    "(tests/apps/CMakeLists.txt sets it)")
    return value


def cwrap_lib(name):
    """Path of Debian's libnss_wrapper.so / libuid_wrapper.so."""
    override = os.environ.get(name.upper().replace(".", "_") + "_PATH")
    if override:
        return override
    multiarch = sysconfig.get_config_var("MULTIARCH") or ""
    for d in (f"/usr/lib/{multiarch}", "/usr/lib64", "/usr/lib",
              "/usr/local/lib"):
        p = Path(d) / name
        if p.is_file():
            return str(p)
    pytest.fail(f"{name} not found: install libnss-wrapper and libuid-wrapper "
                "(scripts/install-deps.sh)")
    return None


def need_program(path):
    if not os.access(path, os.X_OK):
        pytest.fail(f"{path} is missing: run scripts/install-deps.sh")
    return path


def preload(*extra):
    """LD_PRELOAD for a wrapped program: sanitizer runtimes (if any) first,
    then the other cwrap libraries, then our libpam_wrapper.so."""
    ours = _need_env("PWRAP_LIB")
    _need_env("PWRAP_PRELOAD")
    parts = preload_parts()
    if parts:
        # Sanitizer build: ASan intercepts crypt_r and resolves the real
        # one at start-up; pam_unix dlopens libcrypt later, so without
        # this the interceptor calls NULL inside pam_unix.
        crypt = ctypes.util.find_library("crypt")
        if crypt:
            parts.append(crypt)
    return ":".join(parts + list(extra) + [ours])


class Work(TempDir):
    """A private directory for one test (file, service, passdb: see
    TempDir; files are 0644, service files go to services/).

    path      the directory (0755, so a dropped-privilege server can enter)
    tmp       TMPDIR of every wrapped program (1777), checked at teardown
    services  PAM_WRAPPER_SERVICE_DIR
    """

    path_type = Path
    service_subdir = "services"
    file_mode = 0o644

    def __init__(self):
        super().__init__("pwrap-apps-")
        self.tmp = self.mkdir("tmp", 0o1777)
        self.services = self.mkdir("services")

    def mkdir(self, name, mode=0o755):
        p = self.path / name
        p.mkdir()
        p.chmod(mode)
        return p

    def env(self, **extra):
        """Environment of a program wrapped with pam_wrapper only."""
        values = dict(LD_PRELOAD=preload(), PAM_WRAPPER="1",
                      PAM_WRAPPER_SERVICE_DIR=self.services,
                      TMPDIR=self.tmp, HOME=self.path)
        values.update(extra)
        return child_env(**values)

    def leftovers(self):
        return sorted(os.listdir(self.tmp))


@pytest.fixture
def work(make_temp_dir):
    """A Work directory; fails the test if the wrapped programs left files
    in their TMPDIR."""
    w = make_temp_dir(Work)
    yield w
    left = wait_until(lambda: not w.leftovers())
    assert left, f"left in TMPDIR: {w.leftovers()}"


def sweep_dead_dirs(work, uid=None, gid=None):
    """Runs one more wrapped PAM program (pamtester, which links libpam, so
    the wrapper makes its runtime directory at start) that exits normally,
    as uid:gid (default: us): the contract is that it removes every runtime
    directory of that user whose processes are all gone, and then its own."""
    kw = {}
    if uid is not None and uid != os.getuid():
        kw = dict(user=uid, group=gid, extra_groups=[])
    res = subprocess.run([need_program("/usr/bin/pamtester"), "pwrap-sweep",
                          "nobody", "authenticate"], env=work.env(),
                         stdin=subprocess.DEVNULL, capture_output=True,
                         text=True, timeout=HANG, **kw)
    assert res.returncode != 0  # no such service: pam_start refuses


def run_driver(work, script, env=None, timeout=HANG):
    """Runs pam_driver.py (python3-pam) wrapped; returns its JSON result.

    script: the driver's JSON description (see pam_driver.py)."""
    res = run([sys.executable, str(DRIVER)], env or work.env(),
              stdin_text=json.dumps(script), timeout=timeout)
    assert res.returncode == 0, f"driver failed:\n{res.stdout}\n{res.stderr}"
    out = json.loads(res.stdout)
    out["stderr"] = res.stderr
    return out


# --- process accounting for servers -------------------------------------

PR_SET_CHILD_SUBREAPER = 36
_libc = ctypes.CDLL(None, use_errno=True)


def set_subreaper(on):
    """Makes this process adopt its orphaned descendants (sshd's per-
    connection processes, the wrapper's watchers), so the test can prove
    that none of them outlives the server."""
    if _libc.prctl(PR_SET_CHILD_SUBREAPER, 1 if on else 0, 0, 0, 0) != 0:
        raise OSError(ctypes.get_errno(), "prctl(PR_SET_CHILD_SUBREAPER)")


def _proc_stat(pid):
    try:
        with open(f"/proc/{pid}/stat", encoding="ascii",
                  errors="replace") as f:
            data = f.read()
    except OSError:
        return None
    # comm may contain spaces and parentheses: split after the last ')'.
    rest = data[data.rindex(")") + 2:].split()
    return rest[0], int(rest[1])  # state, ppid


def descendants(root=None):
    """{pid: (state, ppid)} of every live descendant of root (default: us)."""
    root = os.getpid() if root is None else root
    table = {}
    for name in os.listdir("/proc"):
        if name.isdigit():
            st = _proc_stat(int(name))
            if st is not None:
                table[int(name)] = st
    found = {}
    frontier = [root]
    while frontier:
        parent = frontier.pop()
        for pid, (state, ppid) in table.items():
            if ppid == parent and pid not in found:
                found[pid] = (state, ppid)
                frontier.append(pid)
    return found


def reap_zombies():
    """Collects our adopted children that exited (never a live one)."""
    for pid, (state, ppid) in descendants().items():
        if ppid == os.getpid() and state == "Z":
            try:
                os.waitpid(pid, os.WNOHANG)
            except ChildProcessError:
                pass


def live_descendants():
    reap_zombies()
    return {p: s for p, s in descendants().items() if s[0] != "Z"}


def cmdline(pid):
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except OSError:
        return "?"
