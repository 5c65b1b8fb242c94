# SPDX-License-Identifier: BSD-3-Clause
#
# pypamtest's Python surface, without running PAM: where the module comes
# from, its constants, TestCase/TestResult/PamTestError and the type stub.
import ast
import os
import sysconfig

import pytest

import pypamtest


def test_module_comes_from_this_build():
    build = os.environ.get("PWRAP_BUILD_DIR")
    assert build, "run this suite through ctest (PWRAP_BUILD_DIR is unset)"
    # Named with the interpreter's EXT_SUFFIX, like any extension module.
    expected = os.path.join(build, "python", "pypamtest"
                            + sysconfig.get_config_var("EXT_SUFFIX"))
    assert os.path.realpath(pypamtest.__file__) == os.path.realpath(expected)
    assert not pypamtest.__file__.startswith("/usr/lib/python3")


def test_wrapper_is_preloaded():
    lib = os.environ.get("PWRAP_LIB")
    assert lib, "run this suite through ctest (PWRAP_LIB is unset)"
    with open("/proc/self/maps", encoding="utf-8") as f:
        maps = f.read()
    assert os.path.realpath(lib) in maps
    assert os.environ.get("PAM_WRAPPER") == "1"


def test_runs_as_nobody_in_the_nobody_twin():
    if os.environ.get("PWRAP_AS_NOBODY") == "1":
        assert os.getuid() != 0 and os.geteuid() != 0


def test_operation_constants():
    assert pypamtest.PAMTEST_AUTHENTICATE == 0
    assert pypamtest.PAMTEST_SETCRED == 1
    assert pypamtest.PAMTEST_ACCOUNT == 2
    assert pypamtest.PAMTEST_OPEN_SESSION == 3
    assert pypamtest.PAMTEST_CLOSE_SESSION == 4
    assert pypamtest.PAMTEST_CHAUTHTOK == 5
    assert pypamtest.PAMTEST_GETENVLIST == 20
    assert pypamtest.PAMTEST_KEEPHANDLE == 21


# Built against OpenPAM (PWRAP_PAM_KIND from CMake), the constants have
# OpenPAM's values.
OPENPAM = os.environ.get("PWRAP_PAM_KIND") == "OpenPAM"


def test_flag_constants():
    if OPENPAM:
        flags = (0x1, 0x2, 0x4, 0x8, -0x80000000, 0x1, 0x4)
    else:
        flags = (0x2, 0x4, 0x8, 0x10, 0x8000, 0x1, 0x20)
    assert (pypamtest.PAMTEST_FLAG_ESTABLISH_CRED,
            pypamtest.PAMTEST_FLAG_DELETE_CRED,
            pypamtest.PAMTEST_FLAG_REINITIALIZE_CRED,
            pypamtest.PAMTEST_FLAG_REFRESH_CRED,
            pypamtest.PAM_SILENT,
            pypamtest.PAM_DISALLOW_NULL_AUTHTOK,
            pypamtest.PAM_CHANGE_EXPIRED_AUTHTOK) == flags
    assert pypamtest.PAM_ESTABLISH_CRED == pypamtest.PAMTEST_FLAG_ESTABLISH_CRED


def test_error_code_constants():
    assert [pypamtest.PAMTEST_ERR_OK, pypamtest.PAMTEST_ERR_START,
            pypamtest.PAMTEST_ERR_CASE, pypamtest.PAMTEST_ERR_OP,
            pypamtest.PAMTEST_ERR_END, pypamtest.PAMTEST_ERR_KEEPHANDLE,
            pypamtest.PAMTEST_ERR_INTERNAL] == list(range(7))


# Linux-PAM's return codes, in the order of security/_pam_types.h.
PAM_CODES = [
    "PAM_SUCCESS", "PAM_OPEN_ERR", "PAM_SYMBOL_ERR", "PAM_SERVICE_ERR",
    "PAM_SYSTEM_ERR", "PAM_BUF_ERR", "PAM_PERM_DENIED", "PAM_AUTH_ERR",
    "PAM_CRED_INSUFFICIENT", "PAM_AUTHINFO_UNAVAIL", "PAM_USER_UNKNOWN",
    "PAM_MAXTRIES", "PAM_NEW_AUTHTOK_REQD", "PAM_ACCT_EXPIRED",
    "PAM_SESSION_ERR", "PAM_CRED_UNAVAIL", "PAM_CRED_EXPIRED", "PAM_CRED_ERR",
    "PAM_NO_MODULE_DATA", "PAM_CONV_ERR", "PAM_AUTHTOK_ERR",
    "PAM_AUTHTOK_RECOVERY_ERR", "PAM_AUTHTOK_LOCK_BUSY",
    "PAM_AUTHTOK_DISABLE_AGING", "PAM_TRY_AGAIN", "PAM_IGNORE", "PAM_ABORT",
    "PAM_AUTHTOK_EXPIRED", "PAM_MODULE_UNKNOWN", "PAM_BAD_ITEM",
    "PAM_CONV_AGAIN", "PAM_INCOMPLETE",
]


# OpenPAM's, in the order of its security/pam_constants.h (XSSO's); None:
# OpenPAM's own codes, which pypamtest does not export.
OPENPAM_CODES = [
    "PAM_SUCCESS", "PAM_OPEN_ERR", "PAM_SYMBOL_ERR", "PAM_SERVICE_ERR",
    "PAM_SYSTEM_ERR", "PAM_BUF_ERR", "PAM_CONV_ERR", "PAM_PERM_DENIED",
    "PAM_MAXTRIES", "PAM_AUTH_ERR", "PAM_NEW_AUTHTOK_REQD",
    "PAM_CRED_INSUFFICIENT", "PAM_AUTHINFO_UNAVAIL", "PAM_USER_UNKNOWN",
    "PAM_CRED_UNAVAIL", "PAM_CRED_EXPIRED", "PAM_CRED_ERR",
    "PAM_ACCT_EXPIRED", "PAM_AUTHTOK_EXPIRED", "PAM_SESSION_ERR",
    "PAM_AUTHTOK_ERR", "PAM_AUTHTOK_RECOVERY_ERR", "PAM_AUTHTOK_LOCK_BUSY",
    "PAM_AUTHTOK_DISABLE_AGING", "PAM_NO_MODULE_DATA", "PAM_IGNORE",
    "PAM_ABORT", "PAM_TRY_AGAIN", "PAM_MODULE_UNKNOWN", None, None,
    "PAM_BAD_ITEM",
]


@pytest.mark.parametrize("value,name", [
    (v, n) for v, n in enumerate(OPENPAM_CODES if OPENPAM else PAM_CODES)
    if n is not None])
def test_pam_return_code_constants(value, name):
    assert getattr(pypamtest, name) == value


def test_linux_pam_only_codes():
    """PAM_CONV_AGAIN and PAM_INCOMPLETE exist only with Linux-PAM."""
    for name in ("PAM_CONV_AGAIN", "PAM_INCOMPLETE"):
        assert hasattr(pypamtest, name) != OPENPAM


def test_testcase_defaults():
    tc = pypamtest.TestCase(pypamtest.PAMTEST_AUTHENTICATE)
    assert (tc.pam_operation, tc.expected_rv, tc.flags) == (0, 0, 0)
    assert repr(tc) == "{ pam_operation [0] expected_rv [0] flags [0] }"


def test_testcase_positional_and_keywords():
    tc = pypamtest.TestCase(pypamtest.PAMTEST_SETCRED, pypamtest.PAM_CRED_ERR,
                            pypamtest.PAMTEST_FLAG_DELETE_CRED)
    assert repr(tc) == "{ pam_operation [1] expected_rv [%d] flags [%d] }" % (
        pypamtest.PAM_CRED_ERR, pypamtest.PAMTEST_FLAG_DELETE_CRED)
    tc = pypamtest.TestCase(flags=8, expected_rv=7,
                            pam_operation=pypamtest.PAMTEST_CHAUTHTOK)
    assert (tc.pam_operation, tc.expected_rv, tc.flags) == (5, 7, 8)
    assert str(tc) == "{ pam_operation [5] expected_rv [7] flags [8] }"
    tc = pypamtest.TestCase(pypamtest.PAMTEST_KEEPHANDLE)
    assert repr(tc) == "{ pam_operation [21] expected_rv [0] flags [0] }"


@pytest.mark.parametrize("attr", ["pam_operation", "expected_rv", "flags"])
def test_testcase_members_are_read_only(attr):
    tc = pypamtest.TestCase(pypamtest.PAMTEST_ACCOUNT)
    with pytest.raises(AttributeError):
        setattr(tc, attr, 3)
    with pytest.raises(AttributeError):
        delattr(tc, attr)
    assert getattr(tc, attr) == (2 if attr == "pam_operation" else 0)


@pytest.mark.parametrize("op", [-1, 6, 7, 19, 22, 100, 2**31 - 1])
def test_testcase_unknown_operation(op):
    with pytest.raises(ValueError):
        pypamtest.TestCase(op)


def test_testcase_bad_arguments():
    with pytest.raises(TypeError):
        pypamtest.TestCase()
    with pytest.raises(TypeError):
        pypamtest.TestCase("0")
    with pytest.raises(TypeError):
        pypamtest.TestCase(0, "0")
    with pytest.raises(TypeError):
        pypamtest.TestCase(0, 0, 0, 0)
    with pytest.raises(TypeError):
        pypamtest.TestCase(0, bogus=1)
    with pytest.raises(OverflowError):
        pypamtest.TestCase(2**40)


def test_testcase_outputs_absent_before_a_run():
    tc = pypamtest.TestCase(pypamtest.PAMTEST_GETENVLIST)
    assert not hasattr(tc, "pam_env")
    assert not hasattr(tc, "pam_handle")
    with pytest.raises(AttributeError, match="pam_env"):
        tc.pam_env
    with pytest.raises(AttributeError):
        tc.pam_env = {}
    with pytest.raises(AttributeError):
        tc.pam_handle = None


def test_testresult_empty():
    for res in (pypamtest.TestResult(), pypamtest.TestResult([]),
                pypamtest.TestResult(None, None), pypamtest.TestResult((), [])):
        assert res.info == () and res.errors == ()
        assert type(res.info) is tuple and type(res.errors) is tuple
        assert repr(res) == "{ errors: {  } infos: {  } }"
        assert str(res) == repr(res)


def test_testresult_from_lists():
    res = pypamtest.TestResult(["i1", "i2"], ["e1"])
    assert res.info == ("i1", "i2")
    assert res.errors == ("e1",)
    # The errors part shows the errors (upstream printed the info twice).
    assert repr(res) == "{ errors: { {e1} } infos: { {i1}{i2} } }"
    assert str(res) == repr(res)
    res = pypamtest.TestResult(("only info",))
    assert res.info == ("only info",) and res.errors == ()
    assert repr(res) == "{ errors: {  } infos: { {only info} } }"
    res = pypamtest.TestResult(iter(["a"]), (m for m in ["b", "c"]))
    assert repr(res) == "{ errors: { {b}{c} } infos: { {a} } }"


def test_testresult_copies_its_lists():
    info = ["x"]
    res = pypamtest.TestResult(info, info)
    info.append("y")
    assert res.info == ("x",) and res.errors == ("x",)


def test_testresult_is_read_only():
    res = pypamtest.TestResult(["i"], ["e"])
    for attr in ("info", "errors"):
        with pytest.raises(AttributeError):
            setattr(res, attr, ())


@pytest.mark.parametrize("args", [("abc",), (b"abc",), ([1],), (["a", None],),
                                  ([], [b"e"]), (3,), ([], [], [])])
def test_testresult_bad_arguments(args):
    with pytest.raises(TypeError):
        pypamtest.TestResult(*args)


def test_testresult_arguments_are_positional():
    with pytest.raises(TypeError):
        pypamtest.TestResult(info_list=["i"])
    with pytest.raises(TypeError):
        pypamtest.TestResult(["i"], errors=["e"])


def test_pamtesterror_is_an_oserror():
    assert issubclass(pypamtest.PamTestError, OSError)
    assert pypamtest.PamTestError.__module__ == "pypamtest"
    assert pypamtest.PamTestError.__name__ == "PamTestError"


def test_run_pamtest_needs_its_arguments():
    with pytest.raises(TypeError):
        pypamtest.run_pamtest()
    with pytest.raises(TypeError):
        pypamtest.run_pamtest("user", "service")
    with pytest.raises(TypeError):
        pypamtest.run_pamtest(1, "service", [])
    with pytest.raises(TypeError):
        pypamtest.run_pamtest("user", None, [])
    with pytest.raises(ValueError):
        pypamtest.run_pamtest("us\0er", "service", [])


def test_signatures_for_introspection():
    import inspect
    assert str(inspect.signature(pypamtest.run_pamtest)) == (
        "(username, service, tests, echo_off=None, echo_on=None, handle=None, "
        "*, conv_fail_at=0, conv_fail_code=None, conv_null_resp_at=0, "
        "conv_null_entry_at=0, conv_long_answer=False, conv_long_answer_at=0, "
        "conv_long_answer_len=None, trace=False)")
    assert str(inspect.signature(pypamtest.read_trace)) == "(path)"
    assert str(inspect.signature(pypamtest.TestCase)) == (
        "(pam_operation, expected_rv=0, flags=0)")
    assert str(inspect.signature(pypamtest.TestResult)) == (
        "(info_list=(), error_list=(), /)")
    assert "PAM transaction" in pypamtest.run_pamtest.__doc__
    assert pypamtest.TestCase.__doc__


def _public_names(tree):
    names = set()
    for node in tree.body:
        if isinstance(node, (ast.ClassDef, ast.FunctionDef)):
            names.add(node.name)
        elif isinstance(node, ast.AnnAssign):
            names.add(node.target.id)
    return {n for n in names if not n.startswith("_")}


def _stub():
    path = os.path.join(os.path.dirname(pypamtest.__file__), "pypamtest.pyi")
    assert os.path.exists(path), "the type stub must sit next to the module"
    with open(path, encoding="utf-8") as f:
        return ast.parse(f.read(), path)


def test_type_stub_matches_the_module():
    tree = _stub()
    module_names = {n for n in dir(pypamtest) if not n.startswith("_")}
    stub_names = _public_names(tree)
    if OPENPAM:  # the stub also lists Linux-PAM's two extra codes
        stub_names -= {"PAM_CONV_AGAIN", "PAM_INCOMPLETE"}
    assert stub_names == module_names


def test_type_stub_describes_the_signatures():
    tree = _stub()
    funcs = {n.name: n for n in tree.body if isinstance(n, ast.FunctionDef)}
    args = [a.arg for a in funcs["run_pamtest"].args.args]
    assert args == ["username", "service", "tests", "echo_off", "echo_on",
                    "handle"]
    kwonly = [a.arg for a in funcs["run_pamtest"].args.kwonlyargs]
    assert kwonly == ["conv_fail_at", "conv_fail_code", "conv_null_resp_at",
                      "conv_null_entry_at", "conv_long_answer",
                      "conv_long_answer_at", "conv_long_answer_len", "trace"]
    classes = {n.name: n for n in tree.body if isinstance(n, ast.ClassDef)}
    members = {n.name for n in classes["TestCase"].body
               if isinstance(n, ast.FunctionDef)}
    assert members == {"__new__", "pam_operation", "expected_rv", "flags",
                       "pam_env", "pam_handle"}
    new_args = [a.arg for a in next(
        n for n in classes["TestCase"].body if n.name == "__new__").args.args]
    assert new_args == ["cls", "pam_operation", "expected_rv", "flags"]
    members = {n.name for n in classes["TestResult"].body
               if isinstance(n, ast.FunctionDef)}
    assert members == {"__new__", "info", "errors", "trace"}
    new = next(n for n in classes["TestResult"].body if n.name == "__new__")
    assert [a.arg for a in new.args.posonlyargs] == [
        "cls", "info_list", "error_list"]
    assert classes["PamTestError"].bases[0].id == "OSError"
