# SPDX-License-Identifier: BSD-3-Clause
"""The README's code blocks, run as a newcomer copies them, so that the
README cannot drift from the code.

Every fenced code block of README.md is one case, in README order, all in one
scratch directory that looks like the top of the tree right after the
README's first command (`scripts/demo.sh`): the tree's top-level entries are
linked there and build/ is the build that readme_setup made with
scripts/demo.sh.  What happens to a block depends on the HTML comment right
before it:

  <!-- file: NAME -->          the block is saved as NAME (a later block
                               compiles or runs it);
  <!-- not run: REASON -->     it is skipped, with REASON (the skips are
                               counted in scripts/test.sh's summary);
  none                         a shell block (sh, bash, shell, or no
                               language) runs with bash -e, a python block
                               with python3; it passes when it exits 0.
                               Any other block needs one of the comments.

Indented code blocks are refused (they cannot carry a language): fence them.
The environment is the caller's with an installed copy as after
`sudo cmake --install build` and `sudo ldconfig`: readme_setup's prefix on
PATH, PKG_CONFIG_PATH, LD_LIBRARY_PATH and PYTHONPATH, and the Debian python3
first on PATH.
"""
import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile

import pytest

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, "pytest_common"))
from pwrap_fixtures import HANG  # noqa: E402

SRC = os.environ.get("PWRAP_SOURCE_DIR", os.path.join(os.path.dirname(__file__), "..", ".."))
README = os.path.join(SRC, "README.md")
SETUP = os.environ.get("PWRAP_README_SETUP", "")
SHELLS = ("", "sh", "bash", "shell")
FENCE = re.compile(r"^(```+|~~~+)\s*([\w+-]*)\s*$")
MARK = re.compile(r"<!--\s*(file|not run)\s*:\s*(.*?)\s*-->", re.S)


class Block:
    def __init__(self, line, lang, text, mark):
        self.line, self.lang, self.text = line, lang, text
        self.kind, self.arg = mark if mark else (None, None)

    def __repr__(self):
        return "README.md:%d %s" % (self.line, self.lang or "sh")


def blocks(path=README):
    """The fenced code blocks of a Markdown file, each with the marker
    comment that ends right before it, if any."""
    with open(path) as f:
        lines = f.read().split("\n")
    out, i = [], 0
    while i < len(lines):
        m = FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        fence, lang, start = m.group(1), m.group(2), i
        j = i + 1
        while j < len(lines) and not lines[j].startswith(fence):
            j += 1
        # the comment ending on the nearest non-blank line above the fence
        k = start - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        mark = None
        if k >= 0 and lines[k].rstrip().endswith("-->"):
            top = k
            while top > 0 and "<!--" not in lines[top]:
                top -= 1
            m2 = MARK.search("\n".join(lines[top:k + 1]))
            if m2:
                mark = (m2.group(1), " ".join(m2.group(2).split()))
        out.append(Block(start + 1, lang, "\n".join(lines[start + 1:j]) + "\n", mark))
        i = j + 1
    return out


def indented_blocks(path=README):
    """Lines that start an indented (unfenced) code block: four spaces after a
    blank line, outside fences and lists."""
    with open(path) as f:
        lines = f.read().split("\n")
    found, fenced, prev = [], False, ""
    for n, line in enumerate(lines, 1):
        if FENCE.match(line):
            fenced = not fenced
        elif (not fenced and line.startswith("    ") and line.strip()
              and not prev.strip()):
            found.append(n)
        prev = line
    return found


BLOCKS = blocks()


def test_blocks_are_fenced_and_marked():
    """Every block can be run or says why not; none is indented."""
    assert BLOCKS, "no code blocks found in " + README
    assert indented_blocks() == [], \
        "indented code blocks at these README.md lines: fence them (```sh)"
    unknown = [b for b in BLOCKS if b.kind is None
               and b.lang not in SHELLS + ("python",)]
    assert unknown == [], ("blocks that need a <!-- file: NAME --> or "
                           "<!-- not run: REASON --> comment: %s" % unknown)
    bad = [b for b in BLOCKS if b.kind == "not run" and not b.arg]
    assert bad == [], "not run without a reason: %s" % bad
    notrun = [b for b in BLOCKS if b.kind == "not run"]
    print("README.md: %d code blocks, %d saved as files, %d run, %d not run"
          % (len(BLOCKS), sum(b.kind == "file" for b in BLOCKS),
             sum(b.kind is None for b in BLOCKS), len(notrun)))


def test_first_command_is_readme_setups():
    """The README's first line is scripts/demo.sh as it can be typed on a
    fresh Debian as root (bash, no sudo: a container has none), and it is
    the command readme_setup (setup.sh) runs before the other blocks."""
    first = BLOCKS[0].text.splitlines()[0].split("#")[0].split()
    assert first == ["bash", "scripts/demo.sh"], BLOCKS[0]
    with open(os.path.join(os.path.dirname(__file__), "setup.sh")) as f:
        assert 'bash "$PWRAP_SOURCE_DIR/scripts/demo.sh"' in f.read()


@pytest.fixture(scope="module")
def scratch():
    """The top of the tree as a newcomer has it, in a directory of our own."""
    if not SETUP or not os.path.isdir(os.path.join(SETUP, "build")):
        pytest.fail("PWRAP_README_SETUP (made by the readme_setup test) is missing")
    d = tempfile.mkdtemp(prefix="pwrap-readme.")
    for name in os.listdir(SRC):
        if not name.startswith("build") and not name.startswith("."):
            os.symlink(os.path.join(SRC, name), os.path.join(d, name))
    os.symlink(os.path.join(SETUP, "build"), os.path.join(d, "build"))
    yield d
    shutil.rmtree(d)


def installed_env():
    prefix = os.path.join(SETUP, "prefix")
    env = dict(os.environ)
    for k in ("LD_PRELOAD", "PAM_WRAPPER", "PAM_WRAPPER_SERVICE_DIR",
              "PAM_MATRIX_PASSWD", "PYTEST_ADDOPTS", "PYTEST_PLUGINS"):
        env.pop(k, None)
    python = os.environ.get("PWRAP_PYTHON", "/usr/bin/python3")
    libdirs = sorted({os.path.dirname(p) for p in
                      glob.glob(os.path.join(prefix, "lib*", "**", "libpamtest.so"),
                                recursive=True)})
    pcdirs = sorted({os.path.dirname(p) for p in
                     glob.glob(os.path.join(prefix, "**", "libpamtest.pc"), recursive=True)})
    pydirs = sorted({os.path.dirname(p) for p in
                     glob.glob(os.path.join(prefix, "**", "pypamtest*.so"), recursive=True)})
    assert libdirs and pcdirs and pydirs, "incomplete install in " + prefix
    env["PATH"] = ":".join([os.path.join(prefix, "bin"), os.path.dirname(python),
                            env.get("PATH", "/usr/bin:/bin")])
    env["PKG_CONFIG_PATH"] = ":".join(pcdirs)
    env["LD_LIBRARY_PATH"] = ":".join(libdirs)
    env["PYTHONPATH"] = ":".join(pydirs)
    return env


@pytest.mark.parametrize("block", BLOCKS, ids=repr)
def test_block(block, scratch):
    if block.kind == "not run":
        pytest.skip("README.md line %d not run: %s" % (block.line, block.arg))
    if block.kind == "file":
        assert "/" not in block.arg, "file: takes a plain name"
        with open(os.path.join(scratch, block.arg), "w") as f:
            f.write(block.text)
        return
    cmd = (["python3", "-c", block.text] if block.lang == "python"
           else ["bash", "-e", "-o", "pipefail", "-c", block.text])
    r = subprocess.run(cmd, cwd=scratch, env=installed_env(),
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.STDOUT, text=True, timeout=HANG)
    print(r.stdout)
    assert r.returncode == 0, "README.md line %d exited %d:\n%s\n--- output:\n%s" % (
        block.line, r.returncode, block.text, r.stdout)


def test_c_files_build_with_upstreams_header(scratch):
    """The C programs the README shows compile against the system's
    libpamtest.h (Debian's libpamtest0-dev: upstream's header) too."""
    header = "/usr/include/libpamtest.h"
    cfiles = [b for b in BLOCKS if b.kind == "file" and b.arg.endswith(".c")
              and "libpamtest.h" in b.text]
    assert cfiles, "no C file blocks that use libpamtest.h"
    if not os.path.exists(header):
        pytest.skip("no %s (Debian: libpamtest0-dev) to compile against" % header)
    for b in cfiles:
        path = os.path.join(scratch, "upstream-" + b.arg)
        with open(path, "w") as f:
            f.write(b.text)
        r = subprocess.run(["cc", "-fsyntax-only", "-Wall", "-Werror", path],
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        assert r.returncode == 0, "%s against %s:\n%s" % (b, header, r.stdout)
