# SPDX-License-Identifier: BSD-3-Clause
#
# The installed pytest plugin: `cmake --install` into a temporary prefix,
# then pytest runs with only that prefix's Python directory on PYTHONPATH
# (not the build tree) and no -p option.  pytest must find the plugin
# through its entry point (the installed dist-info), the plugin must find
# the installed libpam_wrapper.so next to the installed libpamtest and
# preload it, and the fixture's default service must find the installed
# pam_matrix.so.
import os
import subprocess
import sys

import pytest

# The shared helpers (tests/pytest_common); this directory has no conftest.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, os.pardir, "pytest_common"))
from pwrap_fixtures import HANG, cmake_installed, sanitizer_preload  # noqa: E402

pytest_plugins = ["pytester"]

PYDIR = os.environ.get("PWRAP_PYTHON_INSTALL_DIR", "")


@pytest.fixture(scope="module")
def prefix():
    with cmake_installed("plugin-install.") as d:
        yield d


@pytest.fixture
def installed_env(prefix, monkeypatch):
    pydir = PYDIR if os.path.isabs(PYDIR) else os.path.join(prefix, PYDIR)
    assert os.path.isfile(os.path.join(pydir, "pytest_pam_wrapper",
                                       "__init__.py"))
    san = sanitizer_preload()
    for k in list(os.environ):
        if k.startswith(("PAM_WRAPPER", "PAM_MATRIX", "PWRAP_",
                         "_PYTEST_PAM_WRAPPER", "PYTEST_")):
            monkeypatch.delenv(k)
    monkeypatch.delenv("LD_PRELOAD", raising=False)
    if san:
        monkeypatch.setenv("LD_PRELOAD", san)
    monkeypatch.setenv("PYTHONPATH", pydir)
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")
    return pydir


def test_dist_info_is_installed(prefix, installed_env):
    infos = [n for n in os.listdir(installed_env) if n.endswith(".dist-info")
             and n.startswith("pypamtest-")]
    assert len(infos) == 1, os.listdir(installed_env)
    with open(os.path.join(installed_env, infos[0], "RECORD")) as f:
        listed = sorted(line.split(",")[0] for line in f)
    assert listed == sorted(
        [n for n in os.listdir(installed_env) if n.startswith("pypamtest.")]
        + ["pytest_pam_wrapper/__init__.py", "pytest_pam_wrapper/autoload.py"]
        + [infos[0] + "/" + n
           for n in os.listdir(os.path.join(installed_env, infos[0]))])
    with open(os.path.join(installed_env, infos[0], "entry_points.txt")) as f:
        assert f.read().split() == ["[pytest11]", "pam_wrapper", "=",
                                    "pytest_pam_wrapper.autoload"]
    r = subprocess.run(
        [sys.executable, "-c",
         "import importlib.metadata as m; "
         "print([e.value for e in m.entry_points(group='pytest11') "
         "if e.name == 'pam_wrapper'])"],
        capture_output=True, text=True, check=True)
    assert r.stdout.strip() == "['pytest_pam_wrapper.autoload']"


def test_found_by_its_entry_point(pytester, prefix, installed_env):
    pytester.makepyfile(test_login="""
        import os
        import pypamtest

        def test_login(pam_wrapper):
            pam_wrapper.add_user("alice", "secret")
            pam_wrapper.run(None, "alice", [pypamtest.PAMTEST_AUTHENTICATE,
                                            pypamtest.PAMTEST_ACCOUNT],
                            echo_off=["secret"])
            assert pypamtest.__file__.startswith(%r)
            preloaded = os.environ["LD_PRELOAD"].split(":")[-1]
            assert preloaded.startswith(%r), preloaded
        """ % (installed_env, prefix + "/"))
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider", timeout=HANG)
    out = r.stdout.str() + r.stderr.str()
    assert r.ret == 0, out
    r.assert_outcomes(passed=1)
    assert "plugins: pypamtest-" in out
    # Loaded only by its entry point: re-run after collection.
    assert "running pytest again with LD_PRELOAD=%s/" % prefix in out


def test_entry_point_and_p_with_xdist(pytester, prefix, installed_env):
    pytest.importorskip("xdist")
    pytester.makepyfile(test_x="""
        import pytest

        @pytest.mark.parametrize("n", range(4))
        def test_login(pam_wrapper, n):
            pam_wrapper.add_user("u", "p")
            pam_wrapper.run(None, "u", [0], echo_off=["p"])
        """)
    r = pytester.runpytest_subprocess("-p", "no:cacheprovider",
                                      "-p", "pam_wrapper", "-n", "2",
                                      timeout=HANG)
    out = r.stdout.str() + r.stderr.str()
    assert r.ret == 0, out
    r.assert_outcomes(passed=4)
    assert out.count("test session starts") == 1
