# SPDX-License-Identifier: BSD-3-Clause
"""The tools' man pages: they render without groff warnings, and the
scenarios shown in pamtest-scenario(5) and pamtest(1) are well formed and
pass."""
import os
import re
import shutil
import subprocess

import pytest

from tools_helpers import SRC, write_file

PAGES = ["pam_wrapper.1", "pamtest.1", "pamtest-scenario.5"]


@pytest.mark.skipif(shutil.which("groff") is None, reason="groff is not installed")
@pytest.mark.parametrize("page", PAGES)
def test_page_renders_cleanly(page):
    r = subprocess.run(["groff", "-man", "-Tutf8", "-ww", "-z",
                        os.path.join(SRC, "doc", page)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                       env={**os.environ, "LC_ALL": "C.UTF-8"})
    assert r.returncode == 0 and r.stderr == "", r.stderr


def roff_examples(page):
    """The .EX/.EE blocks of a page that are scenarios, as plain text."""
    with open(os.path.join(SRC, "doc", page)) as f:
        text = f.read()
    out = []
    for block in re.findall(r"^\.EX\n(.*?)^\.EE$", text, re.M | re.S):
        plain = block.replace("\\-", "-").replace("\\(dq", '"').replace("\\e", "\\")
        if plain.startswith("service ") and "\\f" not in plain:
            out.append(plain)
    return out


def test_scenario_examples_of_the_pages_pass(tenv, workdir):
    examples = roff_examples("pamtest-scenario.5") + roff_examples("pamtest.1")
    assert len(examples) >= 3
    # `service-dir system` runs the machine's own stacks, whose modules are
    # Debian's libpam's: only against that libpam (tests/system covers them)
    if os.environ.get("PWRAP_TOOLS_SYSTEM") != "1":
        examples = [ex for ex in examples
                    if not re.search(r"^service-dir system$", ex, re.M)]
    paths = [write_file(workdir, f"ex{i}.pamtest", ex) for i, ex in enumerate(examples)]
    r = tenv.pamtest(*paths)
    assert r.returncode == 0, r.stdout + r.stderr
