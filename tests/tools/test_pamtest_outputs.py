# SPDX-License-Identifier: BSD-3-Clause
"""What pamtest writes, and what it reads (issue 34's low items for
pamtest; tests/hardening/README.md lists each threat with its test here):
a report that could not be written fails the run; no line of a TAP report
can be forged by a file name; no answer of a scenario reaches any output;
a scenario file is read only from a regular file, with a bound.  Every
case runs the real pamtest against the real libpam."""
import os
import re
import resource
import subprocess

import pytest

from pwrap_fixtures import sanitizer_preload
from tools_helpers import HANG, PAMTEST, write_file

PASSING = """\
service svc
    auth required pam_matrix.so passdb=${PASSDB}
user bob secret
run authenticate
    prompt "Password: " answer "secret"
"""
FORMATS = ["human", "tap", "junit"]


def pamtest(tenv, argv, **popen):
    return subprocess.run([PAMTEST, *argv], env=tenv.env(), stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, text=True, timeout=HANG, **popen)


# --- a report that did not reach its file -------------------------------------

@pytest.mark.parametrize("fmt", FORMATS)
def test_report_to_a_full_file_fails(tenv, workdir, fmt):
    sc = write_file(workdir, "s.pamtest", PASSING)
    r = pamtest(tenv, ["-f", fmt, "-o", "/dev/full", sc])
    assert r.returncode == 2, r.stdout + r.stderr
    assert "/dev/full: the report could not be written: No space left on device" \
        in r.stderr, r.stderr
    assert tenv.leftovers() == []


@pytest.mark.parametrize("fmt", FORMATS)
def test_report_to_a_full_stdout_fails(tenv, workdir, fmt):
    sc = write_file(workdir, "s.pamtest", PASSING)
    with open("/dev/full", "w") as full:
        r = subprocess.run([PAMTEST, "-f", fmt, sc], env=tenv.env(), stdout=full,
                           stderr=subprocess.PIPE, text=True, timeout=HANG)
    assert r.returncode == 2, r.stderr
    assert "standard output: the report could not be written" in r.stderr, r.stderr


@pytest.mark.parametrize("fmt", FORMATS)
def test_report_to_a_closed_stdout_fails(tenv, workdir, fmt):
    # Nothing can take descriptor 1's place (a passdb, a service file):
    # the run stops before anything runs.
    sc = write_file(workdir, "s.pamtest", PASSING)
    r = subprocess.run([PAMTEST, "-f", fmt, sc], env=tenv.env(),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       timeout=HANG, preexec_fn=lambda: os.close(1))
    assert r.returncode == 2, r.stderr
    assert "standard output is closed" in r.stderr, r.stderr
    assert tenv.leftovers() == []
    # With -o the report has a place to go.
    out = os.path.join(workdir, "report")
    r = subprocess.run([PAMTEST, "-f", fmt, "-o", out, sc], env=tenv.env(),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       timeout=HANG, preexec_fn=lambda: os.close(1))
    assert r.returncode == 0, r.stderr
    assert os.path.getsize(out) > 0


def test_explore_to_a_closed_stdout_fails(tenv, workdir):
    svcdir = os.path.join(workdir, "services")
    write_file(svcdir, "svc", "auth required pam_matrix.so\n")
    r = subprocess.run([PAMTEST, "explore", "-d", svcdir, "svc"], env=tenv.env(),
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True,
                       timeout=HANG, preexec_fn=lambda: os.close(1))
    assert r.returncode == 2, r.stderr
    assert "standard output is closed" in r.stderr, r.stderr


# --- a file name that forges a TAP line ---------------------------------------

TAP_LINE = re.compile(r"^(TAP version 13|1\.\.\d+|(not )?ok \d+ - .*|#.*)$")


@pytest.mark.parametrize("name", ["x\nok 2 - injected\n", "x\rok 2 - injected\r"],
                         ids=["newline", "carriage-return"])
def test_tap_lines_cannot_be_forged_by_a_file_name(tenv, workdir, name):
    sc = write_file(workdir, name + ".pamtest", PASSING.replace(
        'answer "secret"', 'answer "wrong"'))
    r = pamtest(tenv, ["-f", "tap", sc])
    assert r.returncode == 1, r.stdout + r.stderr
    lines = r.stdout.split("\n")
    assert lines[-1] == ""
    for line in lines[:-1]:
        assert TAP_LINE.match(line) and "\r" not in line, repr(line)
    results = [line for line in lines if re.match(r"(not )?ok \d+", line)]
    assert results == [line for line in results if line.startswith("not ok 1 - ")] \
        and len(results) == 1, r.stdout
    assert "injected" in r.stdout and "\\x0" in r.stdout  # shown, escaped
    # The human report cannot be forged either.
    r = pamtest(tenv, [sc])
    assert not any(line.startswith(("ok", "OK:")) for line in r.stdout.splitlines()), \
        r.stdout


# --- answers never printed ------------------------------------------------------

PIN = """\
service svc
    auth required pam_matrix.so passdb=${{PASSDB}}
    auth required {lpt} on=4711x logans
user bob s3cretpw
run authenticate{expect}
    prompt "Password: " answer "s3cretpw"
    prompt echo-on "on: " answer "4711x"
    info "never sent 4711x"
"""


@pytest.mark.parametrize("fmt", FORMATS)
@pytest.mark.parametrize("failing", [False, True], ids=["passing", "failing"])
def test_answers_never_printed(tenv, workdir, fmt, failing):
    """A module that logs every answer it gets (a PIN, on an echo-on
    prompt): the log line pamtest relays shows *** instead, in every
    format, at every debug level; so do its own messages and the report."""
    lpt = os.environ.get("PWRAP_LPT_MODULE")
    assert lpt, "PWRAP_LPT_MODULE (pam_lpt_test.so) is not set: run under ctest"
    sc = write_file(workdir, "pin.pamtest", PIN.format(
        lpt=lpt, expect=" expect PAM_AUTH_ERR" if failing else ""))
    out = os.path.join(workdir, "report")
    for level in ("0", "3"):
        r = pamtest(tenv, ["-f", fmt, "-D", level, "-o", out, "--trace", "-", sc])
        with open(out) as f:
            report = f.read()
        everything = report + r.stdout + r.stderr
        assert r.returncode == 1, everything  # the info line is never sent
        assert "answer: ***" in r.stderr, r.stderr
        assert "4711x" not in everything and "s3cretpw" not in everything, everything
    assert tenv.leftovers() == []


# --- scenario files: regular, bounded -----------------------------------------

def limit_memory():
    # 9c82650 read /dev/zero without bound (2.6 GB in 4 s): with this
    # limit it would fail for want of memory instead of refusing.  (Not in
    # a sanitizer build: ASan reserves terabytes of address space for its
    # shadow at start and aborts under any such limit; the refusal
    # asserted below still shows the file was not read.)
    if not sanitizer_preload():
        resource.setrlimit(resource.RLIMIT_AS, (1 << 30, 1 << 30))


@pytest.mark.parametrize("what", ["/dev/zero", "/dev/urandom", "fifo", "directory"])
def test_scenario_only_from_a_regular_file(tenv, workdir, what):
    path = what
    if what == "fifo":
        path = os.path.join(workdir, "s.pamtest")
        os.mkfifo(path)  # no writer: a blocking open would hang
    elif what == "directory":
        path = workdir
    for argv in (["-c", path], [path]):
        r = subprocess.run([PAMTEST, *argv], env=tenv.env(), stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, text=True, timeout=HANG,
                           preexec_fn=limit_memory)
        assert r.returncode == 2, r.stdout + r.stderr
        assert "%s: not a regular file" % path in r.stderr, r.stderr
        assert r.stdout == ""


def test_scenario_over_the_bound_refused(tenv, workdir):
    path = os.path.join(workdir, "big.pamtest")
    with open(path, "w") as f:
        f.write(PASSING)
        f.truncate(16 * 1024 * 1024 + 1)  # sparse: costs no disk
    r = subprocess.run([PAMTEST, "-c", path], env=tenv.env(), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=HANG,
                       preexec_fn=limit_memory)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "%s: larger than 16 MiB (refused)" % path in r.stderr, r.stderr
    # At the bound it is read (and then found to hold NUL bytes).
    os.truncate(path, 16 * 1024 * 1024)
    r = pamtest(tenv, ["-c", path])
    assert r.returncode == 2 and "NUL byte in line" in r.stderr, r.stderr
