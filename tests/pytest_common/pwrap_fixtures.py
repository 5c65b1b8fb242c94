# SPDX-License-Identifier: BSD-3-Clause
"""Building blocks every pytest suite of the project shares (tests/apps,
tests/python, tests/python/plugin, tests/tools): private directories below
$TMPDIR that are removed afterwards, writing service files and pam_matrix
passdbs, environments for child processes (without the caller's wrapper
variables, with the sanitizer runtimes of PWRAP_PRELOAD where a build has
them), running a child bounded in time, and a `cmake --install` into a
temporary prefix.  Each suite's conftest.py imports what it needs from here
(this folder is put on sys.path relative to the conftest's own file) and
keeps its fixture names; nothing here depends on being run as root, so the
NOBODY twins use it unchanged.
"""
import contextlib
import os
import shutil
import subprocess
import tempfile
import time

import pytest

# How long a test waits for anything before it calls it a hang: far above
# any honest time, on a loaded CI machine too (ctest -j4 on two busy cores),
# so that only a hang reaches it.  No test asserts how fast something is.
# (The C tests' TU_HANG_SECONDS, tests/common/testutil.h.)
HANG = 600


# --- directories and files ------------------------------------------------

def mkdtemp(prefix, mode=None):
    """A new directory below $TMPDIR (tempfile's default without it), made
    mode when mode is given (mkdtemp's 0700 otherwise); returns its path."""
    d = tempfile.mkdtemp(prefix=prefix, dir=os.environ.get("TMPDIR") or None)
    if mode is not None:
        os.chmod(d, mode)
    return d


def remove_tree(path):
    """Removes path and everything below it; never fails."""
    shutil.rmtree(path, ignore_errors=True)


@contextlib.contextmanager
def temp_dir(prefix, mode=None):
    """mkdtemp(prefix, mode) for the with block, removed afterwards."""
    d = mkdtemp(prefix, mode)
    try:
        yield d
    finally:
        remove_tree(d)


def write_file(d, name, text, mode=None):
    """Writes text (UTF-8) to d/name, creating missing directories, and
    chmods it to mode when given; returns the path (a str)."""
    path = os.path.join(os.fspath(d), name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)
    if mode is not None:
        os.chmod(path, mode)
    return path


def stack_text(*lines):
    """A service file's text: one stack line per argument."""
    return "".join(line + "\n" for line in lines)


def passdb_text(*entries):
    """A pam_matrix passdb's text from (user, password, service) entries."""
    return "".join(":".join(e) + "\n" for e in entries)


class TempDir:
    """A private directory for one test, with helpers to fill it.

    Subclasses choose the type of `path` (str or pathlib.Path), where
    service files go (`service_subdir`) and the files' default mode.
    """

    path_type = str
    service_subdir = ""
    file_mode = None

    def __init__(self, prefix, mode=0o755):
        self.path = self.path_type(mkdtemp(prefix, mode))

    def file(self, name, text, mode=None):
        """Writes name below the directory; returns its path."""
        if mode is None:
            mode = self.file_mode
        return self.path_type(write_file(self.path, name, text, mode))

    def service(self, name, *lines):
        """Writes the service file name (one stack line per argument)."""
        return self.file(os.path.join(self.service_subdir, name),
                         stack_text(*lines))

    def passdb(self, *entries, name="passdb"):
        """A pam_matrix passdb of (user, password, service) entries."""
        return self.file(name, passdb_text(*entries))

    def remove(self):
        remove_tree(self.path)


@pytest.fixture
def make_temp_dir():
    """Factory of private directories for one test: make_temp_dir(cls,
    *args) returns cls(*args) (a TempDir), removed after the test."""
    made = []

    def make(cls=TempDir, *args, **kwargs):
        d = cls(*args, **kwargs)
        made.append(d)
        return d

    yield make
    for d in made:
        d.remove()


# --- environments and children ------------------------------------------

def preload_parts():
    """The entries of PWRAP_PRELOAD other than our libpam_wrapper.so: the
    sanitizer runtimes in a sanitizer build, none otherwise."""
    ours = os.path.basename(os.environ.get("PWRAP_LIB", "libpam_wrapper.so"))
    return [p for p in os.environ.get("PWRAP_PRELOAD", "").split(":")
            if p and os.path.basename(p) != ours]


def sanitizer_preload():
    """preload_parts() as an LD_PRELOAD value (empty in normal builds)."""
    return ":".join(preload_parts())


def child_env(drop=(), **values):
    """os.environ without LD_PRELOAD and without the variables that start
    with one of the prefixes in drop, then values set (a None value removes
    the variable; others are made str)."""
    drop = tuple(drop)
    env = {k: v for k, v in os.environ.items()
           if k != "LD_PRELOAD" and not (drop and k.startswith(drop))}
    for k, v in values.items():
        if v is None:
            env.pop(k, None)
        else:
            env[k] = str(v)
    return env


def run(argv, env, stdin_text=None, timeout=HANG):
    """Runs argv to completion (bounded), its stdin stdin_text or
    /dev/null, and returns the CompletedProcess (text stdout/stderr)."""
    return subprocess.run(argv, env=env, input=stdin_text,
                          stdin=None if stdin_text is not None
                          else subprocess.DEVNULL,
                          capture_output=True, text=True, timeout=timeout)


def wait_until(predicate, timeout=HANG, step=0.05):
    """Polls predicate() until it is true or timeout seconds passed (by
    default HANG: only a hang gets there); its last value."""
    end = time.monotonic() + timeout
    while True:
        value = predicate()
        if value or time.monotonic() > end:
            return value
        time.sleep(step)


# --- an installed copy ----------------------------------------------------

@contextlib.contextmanager
def cmake_installed(prefix):
    """`cmake --install` of $PWRAP_BUILD_DIR (with $PWRAP_CMAKE) into a
    temporary directory named after prefix, removed afterwards; skips the
    test when PWRAP_BUILD_DIR is not set."""
    build = os.environ.get("PWRAP_BUILD_DIR")
    if not build:
        pytest.skip("PWRAP_BUILD_DIR is not set")
    with temp_dir(prefix) as d:
        subprocess.run([os.environ.get("PWRAP_CMAKE", "cmake"), "--install",
                        build, "--prefix", d], check=True,
                       stdout=subprocess.DEVNULL)
        yield d
