# SPDX-License-Identifier: BSD-3-Clause
#
# The pytest plugin pytest_pam_wrapper (src/python/pytest_pam_wrapper),
# from the build tree: each case writes a small test project with pytester
# and runs pytest on it in a child python that is NOT wrapped (no
# libpam_wrapper.so in LD_PRELOAD, no PAM_WRAPPER), as a user would.  The
# plugin must then re-run pytest under the wrapper by itself, once, for
# each way of loading it (-p, pytest_plugins in a conftest, its entry
# point), give every test its own services and passdb, restore the
# environment after each test, work under pytest-xdist, and say clearly why
# when it cannot work.  This file's own python is not wrapped either
# (tests/python/CMakeLists.txt); in sanitizer builds both keep the
# sanitizer runtimes preloaded, which the plugin must keep first.
import os
import re
import sys

import pytest

# The shared helpers (tests/pytest_common); this directory has no conftest.
sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)),
                                os.pardir, os.pardir, "pytest_common"))
from pwrap_fixtures import HANG  # noqa: E402

pytest_plugins = ["pytester"]

SELF_LIB = os.environ.get("PWRAP_LIB", "")


def sanitizer_preload():
    """The sanitizer runtimes of PWRAP_PRELOAD (empty in normal builds)."""
    lib = os.path.basename(SELF_LIB or "libpam_wrapper.so")
    return ":".join(p for p in os.environ.get("PWRAP_PRELOAD", "").split(":")
                    if p and os.path.basename(p) != lib)


@pytest.fixture(autouse=True)
def unwrapped_env(monkeypatch):
    """The children start as a user's pytest would: not wrapped."""
    for k in list(os.environ):
        if k.startswith(("PAM_WRAPPER", "PAM_MATRIX", "_PYTEST_PAM_WRAPPER",
                         "PYTEST_XDIST", "PYTEST_ADDOPTS")):
            monkeypatch.delenv(k)
    monkeypatch.delenv("LD_PRELOAD", raising=False)
    if sanitizer_preload():
        monkeypatch.setenv("LD_PRELOAD", sanitizer_preload())
    monkeypatch.setenv("PYTHONDONTWRITEBYTECODE", "1")


def run(pytester, *args, timeout=HANG):
    return pytester.runpytest_subprocess("-p", "no:cacheprovider", *args,
                                         timeout=timeout)


# Counts the imports of the project's conftest.py: 2 when pytest was
# re-executed (execve keeps the pid), 1 when not.
COUNTING_CONFTEST = """
import os
with open(os.path.join(os.path.dirname(__file__), "imports.log"), "a") as f:
    f.write("%d\\n" % os.getpid())
"""


def conftest_imports(pytester):
    path = pytester.path / "imports.log"
    return path.read_text().split() if path.exists() else []


LOGIN_TESTS = r'''
import os
import pypamtest

AUTH = pypamtest.PAMTEST_AUTHENTICATE
ACCOUNT = pypamtest.PAMTEST_ACCOUNT
CHAUTHTOK = pypamtest.PAMTEST_CHAUTHTOK
DIRS = []


def test_login(pam_wrapper):
    pam_wrapper.add_user("alice", "secret")
    res = pam_wrapper.run(None, "alice", [AUTH, ACCOUNT], echo_off=["secret"])
    assert res.info == () and res.errors == ()
    DIRS.append(pam_wrapper.service_dir)


def test_wrong_password(pam_wrapper):
    pam_wrapper.add_user("alice", "secret")
    with pytest.raises(pypamtest.PamTestError) as e:
        pam_wrapper.run("matrix", "alice", [AUTH], echo_off=["wrong"])
    assert "PAM_AUTH_ERR" in str(e.value)
    pam_wrapper.run("matrix", "alice",
                    [pypamtest.TestCase(AUTH, pypamtest.PAM_AUTH_ERR)],
                    echo_off=["wrong"])
    DIRS.append(pam_wrapper.service_dir)


def test_password_change_stays_in_this_test(pam_wrapper):
    # A passdb of its own: alice of the tests above does not exist here.
    pam_wrapper.add_user("bob", "old")
    pam_wrapper.run(None, "bob", [CHAUTHTOK], echo_off=["old", "new", "new"])
    pam_wrapper.run(None, "bob", [AUTH], echo_off=["new"])
    pam_wrapper.run(None, "alice",
                    [pypamtest.TestCase(AUTH, pypamtest.PAM_AUTH_ERR)],
                    echo_off=["secret"])
    DIRS.append(pam_wrapper.service_dir)


def test_environment(pam_wrapper):
    assert os.environ["PAM_WRAPPER"] == "1"
    assert os.environ["PAM_WRAPPER_SERVICE_DIR"] == pam_wrapper.service_dir
    assert os.environ["PAM_MATRIX_PASSWD"] == pam_wrapper.passdb
    assert os.path.isfile(os.path.join(pam_wrapper.service_dir, "matrix"))
    assert pam_wrapper.default_service == "matrix"
    assert os.path.isdir(pam_wrapper.runtime_dir)
    assert os.environ["PAM_WRAPPER_RUNTIME_DIR"] == pam_wrapper.runtime_dir
    # The wrapper is preloaded, after what LD_PRELOAD held before.
    assert os.path.basename(os.environ["LD_PRELOAD"].split(":")[-1]) \
        .startswith("libpam_wrapper.so")
    assert "_PYTEST_PAM_WRAPPER_REEXEC" not in os.environ
    DIRS.append(pam_wrapper.service_dir)


def test_every_test_had_its_own_directory():
    assert len(DIRS) == 4 and len(set(DIRS)) == 4
    # Restored after each test.
    assert "PAM_WRAPPER_SERVICE_DIR" not in os.environ
    assert "PAM_MATRIX_PASSWD" not in os.environ
'''.replace("import pypamtest\n", "import pypamtest\nimport pytest\n", 1)


def assert_passed(result, n):
    out = result.stdout.str() + result.stderr.str()
    assert result.ret == 0, out
    result.assert_outcomes(passed=n)
    return out


def test_loaded_with_p_reexecutes_once(pytester):
    pytester.makeconftest(COUNTING_CONFTEST)
    pytester.makepyfile(test_login=LOGIN_TESTS)
    r = run(pytester, "-p", "pytest_pam_wrapper", "-v")
    out = assert_passed(r, 5)
    # Re-executed before any output: one header, two conftest imports.
    assert out.count("test session starts") == 1
    assert len(conftest_imports(pytester)) == 2
    assert re.search(r"^pam_wrapper: .*libpam_wrapper\.so", out, re.M)


def test_loaded_from_conftest(pytester):
    pytester.makeconftest(COUNTING_CONFTEST
                          + 'pytest_plugins = ["pytest_pam_wrapper"]\n')
    pytester.makepyfile(test_login=LOGIN_TESTS)
    r = run(pytester)
    out = assert_passed(r, 5)
    assert out.count("test session starts") == 1
    assert len(conftest_imports(pytester)) == 2


def test_loaded_with_p_in_addopts(pytester):
    pytester.makeini("[pytest]\naddopts = -p pytest_pam_wrapper\n")
    pytester.makeconftest(COUNTING_CONFTEST)
    pytester.makepyfile(test_login=LOGIN_TESTS)
    assert_passed(run(pytester), 5)
    assert len(conftest_imports(pytester)) == 2


def test_loaded_with_pytest_plugins_env(pytester, monkeypatch):
    # PYTEST_PLUGINS is loading on purpose too: at once, one header.
    monkeypatch.setenv("PYTEST_PLUGINS", "pytest_pam_wrapper")
    pytester.makeconftest(COUNTING_CONFTEST)
    pytester.makepyfile(test_login=LOGIN_TESTS)
    out = assert_passed(run(pytester), 5)
    assert out.count("test session starts") == 1
    assert len(conftest_imports(pytester)) == 2


def test_loaded_from_a_test_module(pytester):
    # Registered during collection: only the late re-run can help.
    pytester.makeconftest(COUNTING_CONFTEST)
    pytester.makepyfile(test_login='pytest_plugins = ["pytest_pam_wrapper"]\n'
                        + LOGIN_TESTS)
    out = assert_passed(run(pytester), 5)
    assert "running pytest again with LD_PRELOAD=" in out
    assert len(conftest_imports(pytester)) == 2


def test_no_reexec_loop_when_loaded_late(pytester, monkeypatch):
    not_wrapper = os.path.join(os.path.dirname(SELF_LIB), "libpamtest.so")
    if not os.path.exists(not_wrapper):
        pytest.skip("no libpamtest.so next to PWRAP_LIB")
    monkeypatch.setenv("PAM_WRAPPER_LIB", not_wrapper)
    pytester.makeconftest(COUNTING_CONFTEST)
    pytester.makepyfile(test_x='pytest_plugins = ["pytest_pam_wrapper"]\n'
                        "def test_a(pam_wrapper): pass\n")
    r = run(pytester)
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    assert "is still not loaded" in r.stderr.str()
    assert len(conftest_imports(pytester)) == 2


def test_already_wrapped_is_not_reexecuted(pytester, monkeypatch):
    preload = [p for p in (sanitizer_preload(), SELF_LIB) if p]
    monkeypatch.setenv("LD_PRELOAD", ":".join(preload))
    pytester.makeconftest(COUNTING_CONFTEST)
    pytester.makepyfile(test_x="""
        import os

        def test_a(pam_wrapper):
            assert os.environ["PAM_WRAPPER"] == "1"

        def test_b():
            # PAM_WRAPPER was unset: the fixture set it for test_a only.
            assert "PAM_WRAPPER" not in os.environ
        """)
    assert_passed(run(pytester, "-p", "pytest_pam_wrapper"), 2)
    assert len(conftest_imports(pytester)) == 1


def test_environment_is_restored(pytester, monkeypatch):
    monkeypatch.setenv("PAM_WRAPPER_SERVICE_DIR", "/nonexistent/user-value")
    monkeypatch.setenv("PAM_MATRIX_PASSWD", "/nonexistent/passdb")
    pytester.makepyfile(test_x="""
        import os

        def test_a(pam_wrapper):
            assert os.environ["PAM_WRAPPER_SERVICE_DIR"] == pam_wrapper.service_dir
            os.environ["PAM_WRAPPER_SERVICE_DIR"] = "/elsewhere"
            # run() always uses the fixture's directory.
            pam_wrapper.add_user("u", "p")
            pam_wrapper.run(None, "u", [0], echo_off=["p"])

        def test_b():
            assert os.environ["PAM_WRAPPER_SERVICE_DIR"] == "/nonexistent/user-value"
            assert os.environ["PAM_MATRIX_PASSWD"] == "/nonexistent/passdb"
            assert os.environ["PAM_WRAPPER"] == "1"   # set by the re-run
        """)
    assert_passed(run(pytester, "-p", "pytest_pam_wrapper"), 2)


def test_add_user_and_add_service(pytester):
    pytester.makepyfile(test_x=r'''
        import os
        import pytest
        import pypamtest

        def read(path):
            with open(path) as f:
                return f.read()

        def test_passdb_lines(pam_wrapper):
            pam_wrapper.add_user("a", "pa")
            pam_wrapper.add_user("b", "pb", service="login")
            pam_wrapper.add_user("c", "pc", flags=["locked", "expired"])
            pam_wrapper.add_user("d", "pd", flags="disabled")
            pam_wrapper.add_user("e", "pe", flags=[])
            pam_wrapper.add_user("a", "new")      # replaces a's line
            assert read(pam_wrapper.passdb) == (
                "b:pb:login\nc:pc:matrix:locked,expired\nd:pd:matrix:disabled\n"
                "e:pe:matrix\na:new:matrix\n")

        @pytest.mark.parametrize("args, exc", [
            (("x:y", "p"), ValueError),
            (("x", "p:q"), ValueError),
            (("x", "p\nq"), ValueError),
            (("", "p"), ValueError),
            (("x", "p", "s:t"), ValueError),
            (("x", "p", "svc", ["a,b"]), ValueError),
            (("x", "p", "svc", ["a", ""]), ValueError),
            (("x", "p", "svc", "a b"), ValueError),
            (("x", 5), TypeError),
            ((None, "p"), TypeError),
        ])
        def test_bad_users(pam_wrapper, args, exc):
            with pytest.raises(exc):
                pam_wrapper.add_user(*args)
            assert read(pam_wrapper.passdb) == ""

        def test_services(pam_wrapper):
            path = pam_wrapper.add_service("permit", "auth required pam_permit.so\n")
            assert path == os.path.join(pam_wrapper.service_dir, "permit")
            pam_wrapper.add_service("chatty", [
                "auth required pam_chatty.so info num_lines=2"])
            pam_wrapper.run("permit", "nobody-in-passdb", [0])
            res = pam_wrapper.run("chatty", "x", [pypamtest.PAMTEST_AUTHENTICATE])
            assert res.info == ("Authentication succeeded",) * 2
            for bad in ("", ".hidden", "a/b", "a:b"):
                with pytest.raises(ValueError):
                    pam_wrapper.add_service(bad, "")
            # The default service can be replaced.
            pam_wrapper.add_service("matrix", "auth required pam_deny.so\n")
            with pytest.raises(pypamtest.PamTestError):
                pam_wrapper.run(None, "x", [0])

        def test_account_states(pam_wrapper):
            # pam_matrix reads the fourth field add_user(flags=) writes.
            AUTH, ACCOUNT = 0, pypamtest.PAMTEST_ACCOUNT
            pam_wrapper.add_user("l", "p", flags="locked")
            pam_wrapper.add_user("e", "p", flags=["expired"])
            pam_wrapper.add_user("m", "p", flags=["must_change"])
            pam_wrapper.run(None, "l", [pypamtest.TestCase(AUTH, pypamtest.PAM_AUTH_ERR)],
                            echo_off=["p"])
            pam_wrapper.run(None, "l", [pypamtest.TestCase(ACCOUNT, pypamtest.PAM_PERM_DENIED)])
            pam_wrapper.run(None, "e", [AUTH, pypamtest.TestCase(ACCOUNT, pypamtest.PAM_ACCT_EXPIRED)],
                            echo_off=["p"])
            res = pam_wrapper.run(None, "m", [AUTH, pypamtest.TestCase(
                ACCOUNT, pypamtest.PAM_NEW_AUTHTOK_REQD)], echo_off=["p"])
            assert len(res.info) == 1
            pam_wrapper.run(None, "m", [pypamtest.PAMTEST_CHAUTHTOK, ACCOUNT],
                            echo_off=["p", "q", "q"])
            assert "m:q:matrix\n" in read(pam_wrapper.passdb)

        def test_conversation_faults_pass_through(pam_wrapper):
            pam_wrapper.add_user("a", "pa")
            pam_wrapper.run(None, "a", [pypamtest.TestCase(
                0, pypamtest.PAM_AUTHINFO_UNAVAIL)],
                            echo_off=["pa"], conv_fail_at=1)
            keep = pypamtest.TestCase(pypamtest.PAMTEST_KEEPHANDLE)
            pam_wrapper.run(None, "a", [0, keep], echo_off=["pa"])
            pam_wrapper.run(None, None, [pypamtest.PAMTEST_ACCOUNT],
                            handle=keep.pam_handle)
        ''')
    assert_passed(run(pytester, "-p", "pytest_pam_wrapper"), 14)


def test_trace(pytester):
    """The fixture's module trace: run(trace=True), enable_trace() and
    .trace (also a child process's records), the variables restored after
    the test."""
    pytester.makepyfile(test_x=r'''
        import os
        import subprocess
        import sys
        import pytest
        import pypamtest

        AUTH = pypamtest.PAMTEST_AUTHENTICATE
        # the action: Linux-PAM's for the code, OpenPAM's control flag
        # (doc/trace-format.md)
        ACTION = "required" if %r else "ok"

        def test_run_trace(pam_wrapper):
            pam_wrapper.add_user("a", "pa")
            res = pam_wrapper.run(None, "a", [AUTH], echo_off=["pa"], trace=True)
            mods = [r for r in res.trace if r["kind"] == "module"]
            assert [(m["module"], m["rc"], m["action"]) for m in mods] == [
                ("pam_matrix.so", "PAM_SUCCESS", ACTION)]
            assert mods[0]["where"] == os.path.join(pam_wrapper.service_dir,
                                                    "matrix") + ":1"
            with pytest.raises(RuntimeError):
                pam_wrapper.trace

        def test_enable_trace(pam_wrapper):
            pam_wrapper.add_user("a", "pa")
            path = pam_wrapper.enable_trace()
            assert path == pam_wrapper.trace_file
            assert pam_wrapper.trace == []
            with pytest.raises(pypamtest.PamTestError):
                pam_wrapper.run(None, "a", [AUTH], echo_off=["wrong"])
            # a child process (a PAM application under test) appends too
            code = ("import pypamtest; pypamtest.run_pamtest('a', 'matrix', "
                    "[pypamtest.TestCase(pypamtest.PAMTEST_ACCOUNT)])")
            subprocess.run([sys.executable, "-c", code], check=True)
            recs = pam_wrapper.trace
            assert [r["kind"] for r in recs] == ["start", "module", "result"] * 2
            assert recs[2]["rc"] == "PAM_AUTH_ERR"
            assert recs[5]["call"] == "pam_acct_mgmt"
            assert recs[0]["pid"] != recs[3]["pid"]
            assert "wrong" not in open(path).read()

        def test_restored():
            assert "PAM_WRAPPER_TRACE" not in os.environ
            assert "PAM_WRAPPER_TRACE_FORMAT" not in os.environ
        ''' % (os.environ.get("PWRAP_PAM_KIND") == "OpenPAM"))
    assert_passed(run(pytester, "-p", "pytest_pam_wrapper"), 3)


def test_xdist(pytester):
    pytest.importorskip("xdist")
    pytester.makeconftest(COUNTING_CONFTEST)
    pytester.makepyfile(test_x="""
        import os
        import pytest
        import pypamtest

        @pytest.mark.parametrize("n", range(8))
        def test_login(pam_wrapper, n):
            assert os.environ.get("PYTEST_XDIST_WORKER")
            pam_wrapper.add_user("u%d" % n, "p%d" % n)
            pam_wrapper.run(None, "u%d" % n, [0, 2], echo_off=["p%d" % n])
        """)
    # -v: xdist names the worker of each result ("[gw1] ... PASSED"); its
    # non-verbose header says "gw0 [8]" in xdist 3.1 (Debian 12) but only
    # "2 workers [8 items]" in 3.6 (Debian 13).  Its first batch gives
    # each worker two of the eight, so both must have run some.
    r = run(pytester, "-p", "pytest_pam_wrapper", "-n", "2", "-v")
    out = assert_passed(r, 8)
    ran = set(re.findall(r"^\[(gw\d+)\].* PASSED ", out, re.M))
    assert ran == {"gw0", "gw1"}, out


def test_inprocess_run_fails_with_a_reason(pytester):
    # pytest.main() inside this (unwrapped) process: no re-execution; the
    # fixture fails and says why and what to do.
    pytester.makepyfile(test_x="""
        def test_a(pam_wrapper):
            pass
        """)
    r = pytester.runpytest_inprocess("-p", "pytest_pam_wrapper",
                                     "-p", "no:cacheprovider")
    r.assert_outcomes(errors=1)
    out = r.stdout.str()
    assert "libpam_wrapper.so is not loaded" in out
    assert "pytest was started from Python code" in out
    assert "LD_PRELOAD" in out


def test_library_not_found(pytester, monkeypatch):
    monkeypatch.setenv("PAM_WRAPPER_LIB", "/nonexistent/libpam_wrapper.so")
    pytester.makepyfile(test_x="def test_a(pam_wrapper): pass\n")
    r = run(pytester, "-p", "pytest_pam_wrapper")
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    err = r.stderr.str()
    assert "PAM_WRAPPER_LIB=/nonexistent/libpam_wrapper.so does not exist" in err


def test_no_reexec_loop(pytester, monkeypatch):
    # A library that is not the wrapper: one re-run, then a clear error.
    not_wrapper = os.path.join(os.path.dirname(SELF_LIB), "libpamtest.so")
    if not os.path.exists(not_wrapper):
        pytest.skip("no libpamtest.so next to PWRAP_LIB")
    monkeypatch.setenv("PAM_WRAPPER_LIB", not_wrapper)
    pytester.makeconftest(COUNTING_CONFTEST)
    pytester.makepyfile(test_x="def test_a(pam_wrapper): pass\n")
    r = run(pytester, "-p", "pytest_pam_wrapper")
    assert r.ret == pytest.ExitCode.USAGE_ERROR
    assert "is still not loaded" in r.stderr.str()
    assert len(conftest_imports(pytester)) == 2


# A file written into the wrapper's runtime directory wins over the service
# directory's: the fixture removes what a test added or changed there, so
# the outcome of a test does not depend on the tests run before it.
LEAKING_TEST = r'''
def test_writes_runtime_dir(pam_wrapper):
    RUNTIME_DIRS.append(pam_wrapper.runtime_dir)
    for name in ("matrix", "extra"):
        with open(os.path.join(pam_wrapper.runtime_dir, name), "w") as f:
            f.write("auth required pam_permit.so\n")
    os.mkdir(os.path.join(pam_wrapper.runtime_dir, "subdir"))
    # Both win: anyone gets in.
    pam_wrapper.run(None, "nobody-in-passdb", [AUTH], echo_off=["x"])
    pam_wrapper.run("extra", "nobody-in-passdb", [AUTH], echo_off=["x"])
'''
CLEAN_TEST = r'''
def test_starts_clean(pam_wrapper):
    RUNTIME_DIRS.append(pam_wrapper.runtime_dir)
    pam_wrapper.add_user("alice", "secret")
    pam_wrapper.run(None, "alice", [AUTH], echo_off=["secret"])
    with pytest.raises(pypamtest.PamTestError) as e:
        pam_wrapper.run(None, "alice", [AUTH], echo_off=["wrong"])
    assert "PAM_AUTH_ERR" in str(e.value)
    with pytest.raises(pypamtest.PamTestError):   # no such service, no other
        pam_wrapper.run("extra", "alice", [AUTH], echo_off=["secret"])
    assert not {"extra", "subdir"} & set(os.listdir(pam_wrapper.runtime_dir))
'''
LAST_TEST = r'''
def test_same_runtime_dir():
    # The wrapper kept its directory; the tests above did use it.
    assert len(RUNTIME_DIRS) == 2 and RUNTIME_DIRS[0] == RUNTIME_DIRS[1]
    assert not {"extra", "subdir"} & set(os.listdir(RUNTIME_DIRS[0]))
'''
LEAK_HEADER = """
import os
import pytest
import pypamtest

AUTH = pypamtest.PAMTEST_AUTHENTICATE
RUNTIME_DIRS = []
"""


@pytest.mark.parametrize("order", ["leaking first", "clean first"])
def test_runtime_dir_changes_do_not_leak(pytester, order):
    tests = [LEAKING_TEST, CLEAN_TEST]
    if order == "clean first":
        tests.reverse()
    pytester.makepyfile(test_x=LEAK_HEADER + "".join(tests) + LAST_TEST)
    out = assert_passed(run(pytester, "-p", "pytest_pam_wrapper", "-v"), 3)
    names = re.findall(r"::(test_\w+) PASSED", out)
    assert names[:2] == (["test_writes_runtime_dir", "test_starts_clean"]
                         if order == "leaking first" else
                         ["test_starts_clean", "test_writes_runtime_dir"])


def test_names_that_can_never_work(pytester):
    # A passdb line starting with '#' is a comment; Linux-PAM lowercases
    # service names (OpenPAM keeps them).
    openpam = os.environ.get("PWRAP_PAM_KIND") == "OpenPAM"
    pytester.makepyfile(test_x=r'''
        import pytest
        import pypamtest

        AUTH = pypamtest.PAMTEST_AUTHENTICATE
        OPENPAM = %r

        def test_hash_user(pam_wrapper):
            with pytest.raises(ValueError, match="comment"):
                pam_wrapper.add_user("#bob", "secret")

        def test_capitals(pam_wrapper):
            if OPENPAM:
                pam_wrapper.add_service("Login", "auth required pam_permit.so\n")
                pam_wrapper.run("Login", "x", [AUTH])
                return
            for call in (lambda: pam_wrapper.add_service("Login", "auth required pam_permit.so\n"),
                         lambda: pam_wrapper.add_user("bob", "secret", service="Login")):
                with pytest.raises(ValueError, match="lowercases"):
                    call()
            # An application may still pass capitals: libpam lowercases them.
            pam_wrapper.add_user("bob", "secret")
            pam_wrapper.run("MATRIX", "bob", [AUTH], echo_off=["secret"])

        def test_hash_service_works(pam_wrapper):
            if OPENPAM:
                # OpenPAM's pam_start refuses names outside the portable
                # file-name set: refused up front, and an application's
                # pam_start fails
                for call in (lambda: pam_wrapper.add_service("#svc", "auth required pam_matrix.so\n"),
                             lambda: pam_wrapper.add_user("bob", "secret", service="#svc")):
                    with pytest.raises(ValueError, match="OpenPAM accepts only"):
                        call()
                pam_wrapper.add_user("bob", "secret")
                with pytest.raises(pypamtest.PamTestError):
                    pam_wrapper.run("#svc", "bob", [AUTH], echo_off=["secret"])
                return
            pam_wrapper.add_service("#svc", "auth required pam_matrix.so\n")
            pam_wrapper.add_user("bob", "secret", service="#svc")
            pam_wrapper.run("#svc", "bob", [AUTH], echo_off=["secret"])
        ''' % openpam)
    assert_passed(run(pytester, "-p", "pytest_pam_wrapper"), 3)


def entry_point_dir(tmp_path):
    """A directory with the plugin's dist-info only (as installed)."""
    d = tmp_path / "site"
    info = d / "pytest_pam_wrapper-0.0.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        "Metadata-Version: 2.1\nName: pytest-pam-wrapper\nVersion: 0.0\n")
    (info / "entry_points.txt").write_text(
        "[pytest11]\npam_wrapper = pytest_pam_wrapper.autoload\n")
    return str(d)


@pytest.fixture
def entry_point(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", entry_point_dir(tmp_path) + os.pathsep
                       + os.environ.get("PYTHONPATH", ""))


def test_entry_point_reexecutes_late_when_needed(pytester, entry_point):
    pytester.makeconftest(COUNTING_CONFTEST)
    pytester.makepyfile(test_login=LOGIN_TESTS)
    r = run(pytester)
    out = assert_passed(r, 5)
    assert "plugins: pam-wrapper-0.0" in out
    assert "running pytest again with LD_PRELOAD=" in out
    assert len(conftest_imports(pytester)) == 2


def test_entry_point_leaves_other_projects_alone(pytester, entry_point):
    pytester.makeconftest(COUNTING_CONFTEST)
    pytester.makepyfile(test_x="""
        import os

        def test_not_wrapped():
            assert "libpam_wrapper" not in os.environ.get("LD_PRELOAD", "")
            assert "PAM_WRAPPER" not in os.environ
        """)
    out = assert_passed(run(pytester), 1)
    assert "plugins: pam-wrapper-0.0" in out
    assert len(conftest_imports(pytester)) == 1


def test_entry_point_and_explicit_loading_together(pytester, entry_point):
    # No "Plugin already registered", and loaded on purpose: early.
    pytester.makeconftest(COUNTING_CONFTEST
                          + 'pytest_plugins = ["pytest_pam_wrapper"]\n')
    pytester.makepyfile(test_login=LOGIN_TESTS)
    out = assert_passed(run(pytester), 5)
    assert out.count("test session starts") == 1
    out = assert_passed(run(pytester, "-p", "pytest_pam_wrapper"), 5)
    assert out.count("test session starts") == 1
    out = assert_passed(run(pytester, "-p", "pam_wrapper"), 5)
    assert out.count("test session starts") == 1


def test_entry_point_and_pytest_plugins_env(pytester, entry_point,
                                            monkeypatch):
    monkeypatch.setenv("PYTEST_PLUGINS", "pytest_pam_wrapper")
    pytester.makepyfile(test_login=LOGIN_TESTS)
    out = assert_passed(run(pytester), 5)
    assert out.count("test session starts") == 1


def test_entry_point_can_be_disabled(pytester, entry_point):
    pytester.makepyfile(test_x="def test_a(pam_wrapper): pass\n")
    r = run(pytester, "-p", "no:pam_wrapper")
    assert r.ret != 0
    assert "fixture 'pam_wrapper' not found" in r.stdout.str()


def test_entry_point_with_xdist_needs_explicit_loading(pytester, entry_point):
    pytest.importorskip("xdist")
    pytester.makepyfile(test_x="def test_a(pam_wrapper): pass\n")
    r = run(pytester, "-n", "1")
    assert r.ret != 0
    assert "pytest-xdist worker" in r.stdout.str()
    assert_passed(run(pytester, "-n", "1", "-p", "pam_wrapper"), 1)

