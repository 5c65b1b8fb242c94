# SPDX-License-Identifier: BSD-3-Clause
"""Tests of the pamtest(1) scenario runner: the example scenarios, each
output format (JUnit checked with xml.etree), expectation failures with
their file:line, malformed scenarios, secrets kept out of the output and
cleanup of the private directories."""
import glob
import os
import re
import xml.etree.ElementTree as ET

import pytest

from tools_helpers import EXAMPLES, write_file

ALL_EXAMPLE_FILES = sorted(glob.glob(os.path.join(EXAMPLES, "*.pamtest")))
# Built against OpenPAM (PWRAP_PAM_KIND from CMake): these examples need
# Linux-PAM (the PAM_XDISPLAY item; a PAM variable removed at close_session,
# which OpenPAM can only empty).
OPENPAM = os.environ.get("PWRAP_PAM_KIND") == "OpenPAM"
LINUX_PAM_ONLY = {"set-get-items.pamtest", "login.pamtest"}
EXAMPLE_FILES = [f for f in ALL_EXAMPLE_FILES
                 if not (OPENPAM and os.path.basename(f) in LINUX_PAM_ONLY)]

MATRIX = "".join(f"    {g} required pam_matrix.so passdb=${{PASSDB}} verbose\n"
                 for g in ("auth", "account", "password", "session"))
HEADER = "service svc\n" + MATRIX + "user bob secret\n"

# A scenario with two passing and two failing test points (HEADER is lines
# 1-6); FAILING_LINES are the lines of the failing expectations.
FAILING = HEADER + """\
run authenticate
    prompt "Password: " answer "secret"
run authenticate
    prompt "Password: " answer "secret"
    info "Not what pam_matrix says"
    env HOMEDIR=/home/bob
run open_session
    env HOMEDIR=/home/bob
run authenticate
    prompt "Password: " answer "wrong-answer"
"""
FAILING_LINES = {"info": 11, "env": 12, "rc": 15}


def test_examples_exist():
    names = [os.path.basename(f) for f in ALL_EXAMPLE_FILES]
    assert "chauthtok.pamtest" in names and "set-get-items.pamtest" in names


@pytest.mark.parametrize("path", EXAMPLE_FILES, ids=os.path.basename)
def test_example_passes(tenv, path):
    r = tenv.pamtest(path)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "FAIL" not in r.stdout
    assert tenv.leftovers() == []


def test_all_examples_in_one_run(tenv):
    r = tenv.pamtest("--format", "tap", *EXAMPLE_FILES)
    assert r.returncode == 0, r.stdout + r.stderr
    plan = re.search(r"^1\.\.(\d+)$", r.stdout, re.M)
    oks = re.findall(r"^ok \d+ - ", r.stdout, re.M)
    assert plan and int(plan.group(1)) == len(oks) > 0
    assert "not ok" not in r.stdout


def test_human_output(tenv, workdir):
    sc = write_file(workdir, "f.pamtest", FAILING)
    r = tenv.pamtest(sc)
    assert r.returncode == 1
    out = r.stdout
    assert out.splitlines()[0] == sc
    assert "  ok    authenticate (line 7)" in out
    assert "  FAIL  authenticate (line 9)" in out
    assert f"{sc}:{FAILING_LINES['info']}: expected info message" in out
    assert f"{sc}:{FAILING_LINES['env']}: PAM environment variable HOMEDIR is not set" in out
    assert f"{sc}:{FAILING_LINES['rc']}: authenticate returned PAM_AUTH_ERR, expected PAM_SUCCESS" in out
    assert out.rstrip().splitlines()[-1] == "FAILED: 2 passed, 2 failed (1 scenario)"
    q = tenv.pamtest("--quiet", sc)
    assert "  ok " not in q.stdout and "  FAIL " in q.stdout


def test_tap_output(tenv, workdir):
    sc = write_file(workdir, "f.pamtest", FAILING)
    r = tenv.pamtest("-f", "tap", sc, EXAMPLE_FILES[0])
    assert r.returncode == 1
    lines = r.stdout.splitlines()
    assert lines[0] == "TAP version 13"
    n = int(re.fullmatch(r"1\.\.(\d+)", lines[1]).group(1))
    points = [ln for ln in lines if re.match(r"(not )?ok \d+ - ", ln)]
    assert len(points) == n
    assert [int(re.search(r"ok (\d+)", p).group(1)) for p in points] == list(range(1, n + 1))
    assert points[0].startswith("ok 1 - ") and points[1].startswith("not ok 2 - ")
    assert sum(p.startswith("not ok") for p in points) == 2
    assert f"# {sc}:{FAILING_LINES['info']}: " in r.stdout


def test_junit_output(tenv, workdir):
    sc = write_file(workdir, "f.pamtest", FAILING)
    out = os.path.join(workdir, "report.xml")
    r = tenv.pamtest("--format", "junit", "--output", out, sc, *EXAMPLE_FILES)
    assert r.returncode == 1
    assert r.stdout == ""
    root = ET.parse(out).getroot()
    assert root.tag == "testsuites"
    suites = root.findall("testsuite")
    assert [s.get("name") for s in suites] == [sc, *EXAMPLE_FILES]
    total = sum(len(s.findall("testcase")) for s in suites)
    assert int(root.get("tests")) == total
    assert int(root.get("failures")) == 2
    first = suites[0]
    assert int(first.get("tests")) == 4 and int(first.get("failures")) == 2
    cases = first.findall("testcase")
    assert [c.get("name") for c in cases] == [
        "authenticate (line 7)", "authenticate (line 9)", "open_session (line 13)",
        "authenticate (line 15)"]
    assert all(c.get("classname") == "f" for c in cases)
    fails = [c.find("failure") for c in cases]
    assert fails[0] is None and fails[2] is None
    assert f"{sc}:{FAILING_LINES['info']}:" in fails[1].get("message")
    assert f"{sc}:{FAILING_LINES['env']}:" in fails[1].text
    assert f"{sc}:{FAILING_LINES['rc']}:" in fails[3].text
    for s in suites[1:]:
        assert s.get("failures") == "0"
        assert all(c.find("failure") is None for c in s.findall("testcase"))


def test_junit_escapes_text(tenv, workdir):
    sc = write_file(workdir, "x&y.pamtest", HEADER + """\
run authenticate
    prompt "Password: " answer "secret"
    info "<&\\"'>\\tend"
""")
    r = tenv.pamtest("-f", "junit", sc)
    assert r.returncode == 1
    root = ET.fromstring(r.stdout)
    case = root.find("testsuite/testcase")
    assert "<&\\\"'>\\tend" in case.find("failure").get("message")
    assert root.find("testsuite").get("name") == sc


@pytest.mark.parametrize("body,line,message", [
    ("frobnicate\n", 7, 'unknown directive "frobnicate"'),
    ("run authenticate\n    prompt \"Password: \"\n", 8, "expected `answer VALUE`"),
    ("run authenticate expect PAM_NOPE\n", 7, 'unknown PAM code "PAM_NOPE"'),
    ("run fly\n", 7, 'unknown operation "fly"'),
    ("run authenticate PAM_LOUD\n", 7, 'unknown flag "PAM_LOUD"'),
    ("prompt \"x\" answer y\nrun authenticate\n", 7, "must follow a `run` line"),
    ("run authenticate\n    info \"open\n", 8, "unterminated quoted string"),
    ("run authenticate\n    info /[a-/\n", 8, "bad regular expression"),
    ("run authenticate\n    env 9X=1\n", 8, "invalid environment variable name"),
    ("run authenticate\n    item PAM_CONV x\n", 8, "unknown or non-text item"),
    ("user eve\nrun authenticate\n", 7, "missing password"),
    ("service svc\nrun authenticate\n", 7, 'service "svc" already declared at line 1'),
    ("run authenticate\nend expect\n", 8, "missing PAM code"),
    ("setenv X\nrun authenticate\n", 7, "`setenv` takes NAME=VALUE"),
    ("start user\nrun authenticate\n", 7, "missing user name"),
    ("  auth required pam_deny.so\nrun authenticate\n", 7, "looks like a service file line"),
    ("", 1, "no `run` line"),
    # Conversation faults.
    ("fault fail\nrun authenticate\n", 7, "`fault` must follow a `start` line"),
    ("run authenticate\nend\n    fault fail\n", 9, "`fault` must follow a `start` line"),
    ("run authenticate\n    fault\n", 8, "missing fault kind"),
    ("run authenticate\n    fault explode\n", 8, 'unknown fault "explode"'),
    ("run authenticate\n    fault fail at 0\n", 8,
     'call number after `at` must be a number from 1'),
    ("run authenticate\n    fault fail at -1\n", 8, 'not "-1"'),
    ("run authenticate\n    fault fail at 2x\n", 8, 'not "2x"'),
    ("run authenticate\n    fault fail at\n", 8, "missing call number after `at`"),
    ("run authenticate\n    fault fail at 1 at 2\n", 8, "`at` given twice"),
    ("run authenticate\n    fault null-resp code PAM_BUF_ERR\n", 8,
     "`code` goes only with `fault fail`"),
    ("run authenticate\n    fault fail code PAM_SUCCESS\n", 8, "cannot return PAM_SUCCESS"),
    ("run authenticate\n    fault fail code PAM_NOPE\n", 8, 'unknown PAM code "PAM_NOPE"'),
    ("run authenticate\n    fault fail length 5\n", 8,
     "`length` goes only with `fault long-answer`"),
    ("run authenticate\n    fault long-answer length 0\n", 8,
     "length after `length` must be a number from 1 to 16777216"),
    ("run authenticate\n    fault long-answer length 16777217\n", 8, 'not "16777217"'),
    ("start\n    fault null-entry soon\nrun authenticate\n", 8, 'unexpected "soon"'),
])
def test_malformed_scenario(tenv, workdir, body, line, message):
    sc = write_file(workdir, "bad.pamtest", HEADER + body)
    r = tenv.pamtest(sc)
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"{sc}:{line}: " in r.stderr
    err_line = [ln for ln in r.stderr.splitlines() if ln.startswith(f"{sc}:{line}: ")][0]
    assert message in err_line, r.stderr
    assert r.stdout == ""
    assert tenv.leftovers() == []


def test_malformed_service_lines(tenv, workdir):
    sc = write_file(workdir, "bad.pamtest",
                    "service svc\n    auth required pam_matrix.so passdb=${NOPE}\n"
                    "run authenticate\n")
    r = tenv.pamtest(sc)
    assert r.returncode == 2
    assert f"{sc}:2: unknown variable ${{NOPE}}" in r.stderr
    sc2 = write_file(workdir, "noservice.pamtest", "user bob secret\nrun authenticate\n")
    r = tenv.pamtest(sc2)
    assert r.returncode == 2 and f"{sc2}:1: no `service NAME` line" in r.stderr
    sc3 = write_file(workdir, "mixed.pamtest",
                     "service-dir .\nservice a\n    auth required pam_deny.so\n"
                     "run authenticate\n")
    r = tenv.pamtest(sc3)
    assert r.returncode == 2 and f"{sc3}:2: service \"a\" has its own lines" in r.stderr


def test_all_errors_of_a_file_are_reported(tenv, workdir):
    sc = write_file(workdir, "bad.pamtest", HEADER + "frob\nrun x\nrun authenticate\n  info\n")
    r = tenv.pamtest(sc)
    assert r.returncode == 2
    assert [int(m) for m in re.findall(re.escape(sc) + r":(\d+): ", r.stderr)] == [7, 8, 10]


def test_malformed_file_stops_every_file(tenv, workdir):
    good = EXAMPLE_FILES[0]
    bad = write_file(workdir, "bad.pamtest", HEADER + "oops\n")
    r = tenv.pamtest(good, bad)
    assert r.returncode == 2
    assert r.stdout == ""


def test_check_only(tenv, workdir):
    assert tenv.pamtest("--check", *EXAMPLE_FILES).returncode == 0
    bad = write_file(workdir, "bad.pamtest", HEADER + "oops\n")
    r = tenv.pamtest("--check", bad)
    assert r.returncode == 2 and f"{bad}:7:" in r.stderr


CHECK_MODULES = """\
service svc
    auth required pam_matrix.so passdb=${PASSDB}
    # a comment between service lines
    auth required pam_no_such_module.so
    -auth optional pam_missing_but_optional.so
    account [success=ok default=bad] pam_permit.so
    session required ${MODULE_DIR}/pam_not_ours.so \\
        some argument
    password required /nonexistent/pam_abs.so
    password required ${MODULE_DIR}/pam_chatty.so
service other
    auth required pam_deny_typo.so
user bob secret
run authenticate
"""


def test_check_reports_missing_modules_with_their_lines(tenv, workdir):
    sc = write_file(workdir, "mods.pamtest", CHECK_MODULES)
    r = tenv.pamtest("--check", sc)
    assert r.returncode == 2, r.stdout + r.stderr
    assert r.stdout == ""
    errs = [ln for ln in r.stderr.splitlines() if ln.startswith(sc + ":")]
    assert [int(ln.split(":")[1]) for ln in errs] == [4, 7, 9, 12], r.stderr
    assert 'service "svc": module pam_no_such_module.so not found' in errs[0]
    # A bare name is looked up where the wrapper looks at run time.
    sysdir = os.environ.get("PWRAP_SYSTEM_MODULE_DIR")
    moddir = os.environ.get("PWRAP_MODULE_DIR")
    for d in (sysdir, moddir):
        if d:
            assert d in errs[0] or os.path.realpath(d) in errs[0], errs[0]
    assert errs[0].index("neither in") < errs[0].index("nor in"), errs[0]
    if sysdir and moddir:
        # The system directory first, as at run time.
        assert errs[0].index(os.path.basename(sysdir)) < errs[0].index("nor in")
    assert "pam_not_ours.so not found" in errs[1]
    assert "/nonexistent/pam_abs.so not found" in errs[2]
    assert 'service "other": module pam_deny_typo.so' in errs[3]
    assert "pam_missing_but_optional" not in r.stderr
    # Every module present: fine (stock modules in the system directory,
    # ours in our module directory).
    good = write_file(workdir, "good.pamtest", CHECK_MODULES.replace(
        "pam_no_such_module.so", "pam_permit.so").replace(
        "pam_not_ours.so", "pam_matrix.so").replace(
        "/nonexistent/pam_abs.so", "pam_deny.so").replace(
        "pam_deny_typo.so", "pam_deny.so"))
    r = tenv.pamtest("--check", good)
    assert r.returncode == 0, r.stderr
    assert r.stderr == ""


def test_check_follows_service_dir_files_and_includes(tenv, workdir):
    write_file(workdir, "services/svc",
               "auth required pam_permit.so\nauth include common\n")
    write_file(workdir, "services/common",
               "# included\naccount required pam_permit.so\n"
               "account required pam_common_typo.so\n")
    sc = write_file(workdir, "dir.pamtest",
                    "service-dir services\nservice svc\nrun authenticate\n")
    r = tenv.pamtest("--check", sc)
    assert r.returncode == 2, r.stderr
    common = os.path.join(os.path.realpath(workdir), "services", "common")
    assert (f'{sc}:2: service "svc", {common}:3: module pam_common_typo.so '
            "not found") in r.stderr, r.stderr
    write_file(workdir, "services/common", "account required pam_permit.so\n")
    assert tenv.pamtest("--check", sc).returncode == 0


def test_missing_wrapper_after_reexec_is_refused(tenv, workdir):
    # A "wrapper" that is not libpam_wrapper.so: pamtest preloads it, starts
    # again and must then refuse to run against /etc/pam.d.
    not_the_wrapper = os.path.join(os.environ["PWRAP_MODULE_DIR"], "pam_chatty.so")
    sc = write_file(workdir, "s.pamtest", HEADER + "run authenticate\n")
    r = tenv.pamtest("--lib", not_the_wrapper, sc)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "LD_PRELOAD" in r.stderr and "libpam_wrapper.so" in r.stderr
    assert "not loaded" in r.stderr
    assert r.stdout == ""
    # The same when an unwrapped pamtest believes it was re-executed.
    r = tenv.pamtest(sc, PAMTEST_WRAPPED="1")
    assert r.returncode == 2 and "LD_PRELOAD" in r.stderr, r.stdout + r.stderr


@pytest.mark.parametrize("args,message", [
    ([], "no scenario file"),
    (["--format", "yaml", "x"], "--format"),
    (["--bogus"], "usage"),
    (["/nonexistent.pamtest"], "/nonexistent.pamtest"),
    (["--debug", "x", "y"], "--debug"),
])
def test_usage_errors(tenv, args, message):
    r = tenv.pamtest(*args)
    assert r.returncode == 2
    assert message in r.stderr


def test_help_and_version(tenv):
    r = tenv.pamtest("--help")
    assert r.returncode == 0 and "--format" in r.stdout
    r = tenv.pamtest("--version")
    assert r.returncode == 0 and r.stdout.startswith("pamtest ")


def test_expectation_failures(tenv, workdir):
    sc = write_file(workdir, "e.pamtest", HEADER + """\
run authenticate
    prompt "Wrong prompt: " answer "secret"
run authenticate
    prompt /^Pass/ answer "secret"
    prompt "Second: " answer "x"
run authenticate
run authenticate
    prompt echo-on "Password: " answer "secret"
run authenticate
    prompt "Password: " answer "secret"
    no-info
    error "Authentication failed"
run open_session
    absent-env HOMEDIR
    item PAM_USER=alice
    item PAM_RHOST=x
end expect PAM_ABORT
""")
    r = tenv.pamtest(sc)
    assert r.returncode == 1
    out = r.stdout
    expected = [
        (8, 'expected prompt "Wrong prompt: ", got "Password: "'),
        (11, 'prompt "Second: " was never asked'),
        (12, 'unexpected prompt "Password: "'),
        (14, 'prompt "Password: " was asked echo-off, expected echo-on'),
        (17, 'expected no info messages, got "Authentication succeeded"'),
        (18, 'expected error message "Authentication failed" was not sent'),
        (20, 'PAM environment variable HOMEDIR is set (to "/home/bob"), expected it absent'),
        (21, 'item PAM_USER is "bob", expected "alice"'),
        (22, "item PAM_RHOST is not set"),
        (23, "pam_end returned PAM_SUCCESS, expected PAM_ABORT"),
    ]
    for line, text in expected:
        assert f"{sc}:{line}: {text}" in out, (line, text, out)


def test_regex_prompts_and_messages(tenv, workdir):
    sc = write_file(workdir, "re.pamtest", HEADER + """\
run authenticate
    prompt /^pass[a-z]+: $/i answer "secret"
    info /succeeded$/
run authenticate expect PAM_AUTH_ERR
    prompt /word/ answer "nope"
    error /^Authentication fail/
""")
    r = tenv.pamtest(sc)
    assert r.returncode == 0, r.stdout + r.stderr


def test_echo_on_prompt(tenv, workdir):
    sc = write_file(workdir, "echo.pamtest", """\
service svc
    auth required pam_matrix.so passdb=${PASSDB} echo
user bob secret
run authenticate
    prompt echo-on "Password: " answer "secret"
""")
    r = tenv.pamtest(sc)
    assert r.returncode == 0, r.stdout + r.stderr


def test_secrets_never_printed(tenv, workdir):
    sc = write_file(workdir, "s.pamtest", """\
service svc
    auth required pam_set_items.so
    auth required pam_get_items.so
    auth required pam_matrix.so passdb=${PASSDB}
user bob Pw-In-Passdb
setenv PAM_AUTHTOK=Token-In-Env
run authenticate
    prompt "Password: " answer "Answer-To-Prompt"
    env PAM_AUTHTOK "Wrong-Expected-Token"
    env PAM_USER=Pw-In-Passdb
""")
    for fmt in ("human", "tap", "junit"):
        r = tenv.pamtest("--format", fmt, "--debug", "3", sc)
        assert r.returncode == 1
        both = r.stdout + r.stderr
        for secret in ("Pw-In-Passdb", "Token-In-Env", "Answer-To-Prompt"):
            assert secret not in both, (fmt, secret)
        assert "(hidden)" in r.stdout


def test_session_env_and_items(tenv, workdir):
    if OPENPAM:
        pytest.skip("unsetenv: OpenPAM cannot remove a PAM variable")
    sc = write_file(workdir, "items.pamtest", """\
service svc
    auth     required pam_get_items.so
    session  required pam_get_items.so
    session  required pam_matrix.so passdb=${PASSDB}
user bob secret
start user bob service svc
set-item PAM_RHOST "remote host"
putenv GREETING="hello world"
run authenticate
    env PAM_RHOST "remote host"
    env "PAM_USER=bob"
    env GREETING
    env GREETING /^hello/
    absent-env HOMEDIR
    item PAM_RHOST "remote host"
    item PAM_SERVICE=svc
putenv GREETING
set-item PAM_TTY tty9
run open_session
    absent-env GREETING
    env HOMEDIR=/home/bob
    env PAM_TTY=tty9
end
start no-user
run open_session expect PAM_BAD_ITEM
""")
    r = tenv.pamtest(sc)
    assert r.returncode == 0, r.stdout + r.stderr


def test_process_env_restored_between_files(tenv, workdir):
    svc = "service svc\n    auth required pam_set_items.so\n    auth required pam_get_items.so\n"
    first = write_file(workdir, "1.pamtest",
                       svc + "setenv PAM_RHOST=first\nrun authenticate\n    env PAM_RHOST=first\n")
    second = write_file(workdir, "2.pamtest",
                        svc + "run authenticate\n    absent-env PAM_RHOST\n")
    r = tenv.pamtest(first, second)
    assert r.returncode == 0, r.stdout + r.stderr


def test_service_dir_scenario(tenv, workdir):
    write_file(workdir, "services/svc",
               "".join(f"{g} required pam_matrix.so\n"
                       for g in ("auth", "account", "password", "session")))
    sc = write_file(workdir, "sub/dir.pamtest", """\
service-dir ../services
service svc
user bob secret
run authenticate
    prompt "Password: " answer "secret"
run acct_mgmt
start service missing expect PAM_ABORT
""")
    r = tenv.pamtest(sc)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "start (line 7)" in r.stdout
    assert tenv.leftovers() == []


def test_bare_service_without_directory_is_a_setup_error(tenv, workdir):
    sc = write_file(workdir, "bare.pamtest", "service svc\nrun authenticate\n")
    r = tenv.pamtest(sc)
    assert r.returncode == 2
    assert f"{sc}:1: service \"svc\" has no lines" in r.stdout
    r = tenv.pamtest("-f", "junit", sc)
    root = ET.fromstring(r.stdout)
    assert root.get("errors") == "1"
    assert root.find("testsuite/testcase/error") is not None


def test_keep_and_module_dir_variable(tenv, workdir):
    sc = write_file(workdir, "k.pamtest", """\
service svc
    auth required ${MODULE_DIR}/pam_matrix.so passdb=${PASSDB}
user bob secret
run authenticate
    prompt "Password: " answer "secret"
""")
    r = tenv.pamtest("--keep", sc)
    assert r.returncode == 0, r.stdout + r.stderr
    kept = [d for d in tenv.leftovers() if d.startswith("pamtest.")]
    assert len(kept) == 1 and kept[0] in r.stderr
    with open(os.path.join(tenv.tmpdir, kept[0], "svc")) as f:
        text = f.read()
    assert "/pam_matrix.so passdb=" + os.path.join(tenv.tmpdir, kept[0], "passdb") in text
    assert "${" not in text


def test_no_leftovers_after_failures(tenv, workdir):
    sc = write_file(workdir, "f.pamtest", FAILING)
    # both runs get as far as their failing expectations (exit 1)
    r = tenv.pamtest(sc)
    assert r.returncode == 1, r.stdout + r.stderr
    r = tenv.pamtest("-f", "junit", sc)
    assert r.returncode == 1, r.stdout + r.stderr
    assert tenv.leftovers() == []


def test_user_service_column(tenv, workdir):
    # pam_matrix checks the passdb's service column in account management.
    sc = write_file(workdir, "u.pamtest", """\
service one
    auth    required pam_matrix.so passdb=${PASSDB}
    account required pam_matrix.so passdb=${PASSDB}
service two
    auth    required pam_matrix.so passdb=${PASSDB}
    account required pam_matrix.so passdb=${PASSDB}
user bob b-pw
user alice a-pw two
start user alice service two
run authenticate
    prompt "Password: " answer "a-pw"
run acct_mgmt
start user alice service one
run acct_mgmt expect PAM_PERM_DENIED
start
run authenticate
    prompt "Password: " answer "b-pw"
    item PAM_SERVICE=one
    item PAM_USER=bob
run acct_mgmt
""")
    r = tenv.pamtest(sc)
    assert r.returncode == 0, r.stdout + r.stderr


# pam_matrix verbose under conversation faults: call 1 is the password
# prompt, call 2 the verbose message (HEADER is lines 1-6); in chauthtok
# call 2 is the verbose report of the old password, call 3 the new one.  As upstream's:
# a failed conversation or no reply array is PAM_AUTHINFO_UNAVAIL without
# a verbose report, a NULL answer PAM_CRED_ERR with one.
FAULTS = HEADER + """\
run authenticate expect PAM_AUTHINFO_UNAVAIL
    fault fail at 1
    no-error
run authenticate expect PAM_AUTHINFO_UNAVAIL
    fault fail code PAM_BUF_ERR
    no-error
run authenticate expect PAM_AUTHINFO_UNAVAIL
    fault null-resp at 1
run authenticate expect PAM_CRED_ERR
    fault null-entry at 1
    error "Authentication failed"
run authenticate expect PAM_AUTH_ERR
    fault long-answer length 513
    error "Authentication failed"
run authenticate
    prompt "Password: " answer secret
    fault null-resp at 2
    no-info
run chauthtok expect PAM_AUTHTOK_ERR
    prompt "Old password: " answer secret
    info "Authentication succeeded"
    fault null-entry at 3
start
    fault fail at 3
run authenticate
    prompt "Password: " answer secret
    info "Authentication succeeded"
run authenticate expect PAM_AUTHINFO_UNAVAIL
    no-error
run authenticate
    prompt "Password: " answer secret
"""


def test_conversation_faults(tenv, workdir):
    sc = write_file(workdir, "faults.pamtest", FAULTS)
    r = tenv.pamtest(sc)
    assert r.returncode == 0, r.stdout + r.stderr
    assert r.stdout.rstrip().splitlines()[-1] == "OK: 10 passed, 0 failed (1 scenario)"
    assert tenv.leftovers() == []


def test_fault_changes_the_outcome(tenv, workdir):
    # The same operations without the faults fail their expectations, and a
    # faulted prompt uses no `prompt` line: that one was never asked.
    sc = write_file(workdir, "f.pamtest", HEADER + """\
run authenticate expect PAM_CRED_ERR
    prompt "Password: " answer secret
run authenticate
    prompt "Password: " answer secret
    fault fail at 1
start
    fault long-answer
run authenticate
    prompt "Password: " answer secret
run authenticate expect PAM_AUTH_ERR
""")
    r = tenv.pamtest(sc)
    assert r.returncode == 1
    out = r.stdout
    assert f"{sc}:7: authenticate returned PAM_SUCCESS, expected PAM_CRED_ERR" in out
    assert (f"{sc}:9: authenticate returned PAM_AUTHINFO_UNAVAIL, "
            "expected PAM_SUCCESS") in out
    assert f'{sc}:10: prompt "Password: " was never asked' in out
    assert f"{sc}:14: authenticate returned PAM_AUTH_ERR, expected PAM_SUCCESS" in out
    assert "FAILED: 1 passed, 3 failed" in out


def test_faults_reach_the_module_exactly(tenv, workdir):
    # pam_lpt_test (tests/libpamtest) returns the code of a failed call,
    # tells "no array" (ifnull=) from "NULL answer" (ifnullentry=), and
    # checks the length and content of a long answer (offlen=).
    lpt = os.environ.get("PWRAP_LPT_MODULE")
    if not lpt or not os.path.exists(lpt):
        pytest.skip("PWRAP_LPT_MODULE (pam_lpt_test.so) is not set")
    # PAM_NO_MODULE_DATA and PAM_CRED_INSUFFICIENT, by number
    ifnull, ifnullentry = (24, 11) if OPENPAM else (18, 8)
    sc = write_file(workdir, "lpt.pamtest", f"""\
service lpt
    auth     required {lpt} ifnull={ifnull} ifnullentry={ifnullentry} off=x
    account  required {lpt} offlen=600
    password required {lpt} info=hello off=x
user neo x

run authenticate expect PAM_BUF_ERR
    fault fail code PAM_BUF_ERR
run authenticate expect 27
    fault fail at 1 code 27
run authenticate expect PAM_NO_MODULE_DATA
    fault null-resp
run authenticate expect PAM_CRED_INSUFFICIENT
    fault null-entry
run acct_mgmt
    fault long-answer length 600
run acct_mgmt expect PAM_AUTH_ERR
    fault long-answer length 599
run acct_mgmt expect PAM_AUTH_ERR
    fault long-answer
run chauthtok
    fault null-resp at 1
    prompt "off: " answer x
    no-info
run chauthtok
    fault long-answer at 1
    prompt "off: " answer x
    info hello
run authenticate
    prompt "off: " answer x
""")
    r = tenv.pamtest(sc)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "OK: 10 passed, 0 failed" in r.stdout


FLAGS = """service st
    auth     required pam_matrix.so passdb=${PASSDB}
    account  required pam_matrix.so passdb=${PASSDB}

user ann pw st locked
user bea pw st expired,must_change
user cid pw st

start user ann
run authenticate expect PAM_AUTH_ERR
    prompt echo-off "Password: " answer "pw"
run acct_mgmt expect PAM_PERM_DENIED
end

start user bea
run acct_mgmt expect PAM_ACCT_EXPIRED
end

start user cid
run acct_mgmt
end
"""


def test_user_account_flags(tenv, workdir):
    # A user line's fourth word is pam_matrix's account flags.
    sc = write_file(workdir, "flags.pamtest", FLAGS)
    r = tenv.pamtest(sc)
    assert r.returncode == 0, r.stdout + r.stderr
    bad = write_file(workdir, "badflag.pamtest",
                     FLAGS.replace("expired,must_change", "expired,frozen"))
    r = tenv.pamtest(bad)
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"{bad}:6:" in r.stderr and "unknown account flag" in r.stderr
