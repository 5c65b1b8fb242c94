# SPDX-License-Identifier: BSD-3-Clause
"""Trust of the command-line tools (issue 23; tests/hardening/README.md
lists each threat with its test here): the launcher never runs its
command unwrapped; a signal that ends the launcher or pamtest reaches the
command and leaves nothing behind (their directories hold a cleartext
passdb); names that can never work are refused up front; a TMPDIR with
blanks, or a relative one, still gives service files that name the passdb;
pamtest's JUnit output is well-formed XML whatever names and messages hold.
Every case runs the real libpam through tools_login_app or pamtest."""
import os
import signal
import subprocess
import time
import xml.dom.minidom
import xml.etree.ElementTree as ET

import pytest

from tools_helpers import APP, HANG, LAUNCHER, LIB, PAMTEST, write_file

SH = "/bin/sh"
MODDIR = os.environ.get("PWRAP_MODULE_DIR", os.path.join(os.path.dirname(LIB), "pam_wrapper"))
OPENPAM = os.environ.get("PWRAP_PAM_KIND") == "OpenPAM"


def wait_for(path, proc, timeout=HANG):
    """Wait until path has content (the command is ready)."""
    deadline = time.time() + timeout
    while not (os.path.exists(path) and os.path.getsize(path) > 0):
        assert proc.poll() is None, "ended early: %r" % (proc.communicate(),)
        assert time.time() < deadline, "never got ready"
        time.sleep(0.02)
    time.sleep(0.05)  # the line is complete


def gone(pid, timeout=HANG):
    """Whether process pid has ended (a zombie counts as ended)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        try:
            with open("/proc/%d/stat" % pid) as f:
                if f.read().rsplit(")", 1)[1].split()[0] == "Z":
                    return True
        except FileNotFoundError:
            return True
        time.sleep(0.05)
    return False


def kill_quietly(pid):
    try:
        os.kill(pid, signal.SIGKILL)
    except ProcessLookupError:
        pass


# --- item 3: never run the command unwrapped --------------------------------

def test_launcher_refuses_a_library_that_is_not_the_wrapper(tenv, workdir):
    mark = os.path.join(workdir, "ran")
    chatty = os.path.join(MODDIR, "pam_chatty.so")
    r = tenv.launcher("--lib", chatty, "--module-dir", MODDIR, "-u", "bob:secret:svc",
                      SH, "-c", f"echo ran > {mark}")
    assert r.returncode == 2, r.stdout + r.stderr
    assert not os.path.exists(mark), "the command ran unwrapped"
    assert "not libpam_wrapper.so" in r.stderr and chatty in r.stderr
    assert "/etc/pam.d" in r.stderr
    assert tenv.leftovers() == []


def test_launcher_refuses_a_library_path_with_a_blank(tenv, workdir):
    d = os.path.join(workdir, "a b")
    os.mkdir(d)
    lib = os.path.join(d, "libpam_wrapper.so")
    os.symlink(os.path.realpath(LIB), lib)
    mark = os.path.join(workdir, "ran")
    r = tenv.launcher("--lib", lib, "--module-dir", MODDIR, "-u", "bob:secret:svc",
                      SH, "-c", f"echo ran > {mark}")
    assert r.returncode == 2, r.stdout + r.stderr
    assert not os.path.exists(mark), "the command ran unwrapped"
    assert lib in r.stderr and "blank" in r.stderr
    assert tenv.leftovers() == []
    # The same library through a path without blanks (a link to it) works.
    other = os.path.join(workdir, "lib")
    os.mkdir(other)
    os.symlink(lib, os.path.join(other, "libpam_wrapper.so"))
    r = tenv.launcher("--lib", os.path.join(other, "libpam_wrapper.so"), "--module-dir",
                      MODDIR, "-u", "bob:secret:svc", APP, "svc", "bob", "secret")
    assert r.returncode == 0 and "result: PAM_SUCCESS" in r.stdout, r.stdout + r.stderr


def test_launcher_mark_does_not_reach_the_command(tenv):
    r = tenv.launcher("-u", "bob:secret:svc", SH, "-c", "env")
    assert r.returncode == 0, r.stderr
    assert "PWRAP_LAUNCHER_WRAPPED" not in r.stdout


# --- item 6: signals ---------------------------------------------------------

SIGNALS = [signal.SIGTERM, signal.SIGHUP, signal.SIGUSR1, signal.SIGUSR2,
           signal.SIGALRM, signal.SIGPIPE, signal.SIGRTMIN + 2]


def signame(sig):
    if sig > signal.SIGRTMIN and sig <= signal.SIGRTMAX:
        return "SIGRTMIN+%d" % (sig - signal.SIGRTMIN)
    return signal.Signals(sig).name


def signal_when_ready(tenv, argv, mark, sig, pids, while_running=None, **popen):
    """Run argv until the pids it writes to mark are there (appended to
    pids, for the caller to clean up), call while_running(), send sig and
    wait: returns (exit status, stdout, stderr)."""
    p = subprocess.Popen(argv, env=tenv.env(), stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, **popen)
    try:
        wait_for(mark, p)
        with open(mark) as f:
            pids.extend(int(x) for x in f.read().split())
        if while_running is not None:
            while_running()
        p.send_signal(sig)
        out, err = p.communicate(timeout=HANG)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return p.returncode, out, err


@pytest.mark.parametrize("sig", SIGNALS, ids=signame)
def test_launcher_signal_reaches_the_command_and_cleans_up(tenv, workdir, sig):
    mark = os.path.join(workdir, "pid")
    pids = []

    def private_dir_there():
        # The private directory, passdb in cleartext, is there meanwhile.
        assert [d for d in tenv.leftovers() if d.startswith("pwrap_launch.")]

    try:
        rc, _, err = signal_when_ready(
            tenv, [LAUNCHER, "-u", "bob:secret:svc", SH, "-c",
                   f"echo $$ > {mark}; exec sleep {HANG}"], mark, sig, pids, private_dir_there)
    finally:
        for pid in pids:
            if not gone(pid):
                kill_quietly(pid)
                pytest.fail("the command kept running")
    assert rc == 128 + sig, err
    assert tenv.leftovers() == []


def test_launcher_keeps_ignored_signals_ignored(tenv, workdir):
    # nohup: a signal ignored when the launcher starts stays ignored, for
    # the command too.
    mark = os.path.join(workdir, "pid")
    rc, out, err = signal_when_ready(
        tenv, [LAUNCHER, "-u", "bob:secret:svc", SH, "-c",
               f"echo $$ > {mark}; sleep 1; echo done"], mark, signal.SIGHUP, [],
        preexec_fn=lambda: signal.signal(signal.SIGHUP, signal.SIG_IGN))
    assert rc == 0 and out.strip() == "done", out + err
    assert tenv.leftovers() == []


BLOCKING = """\
service svc
    auth required {lpt} pidfile={mark} sleep={hang}
    auth required pam_matrix.so passdb=${{PASSDB}}
user bob secret
run authenticate
    prompt "Password: " answer "secret"
"""


@pytest.mark.parametrize("sig", [signal.SIGTERM, signal.SIGINT, signal.SIGHUP,
                                 signal.SIGUSR1, signal.SIGALRM],
                         ids=signame)
def test_pamtest_signal_cleans_up(tenv, workdir, sig):
    # pam_lpt_test writes the pid of the process running PAM, then sleeps:
    # pamtest is in the middle of a transaction when the signal comes.
    mark = os.path.join(workdir, "pid")
    lpt = os.environ.get("PWRAP_LPT_MODULE")
    assert lpt, "PWRAP_LPT_MODULE (pam_lpt_test.so) is not set: run under ctest"
    sc = write_file(workdir, "s.pamtest", BLOCKING.format(lpt=lpt, mark=mark, hang=HANG))
    pids = []

    def private_dir_there():
        assert [d for d in tenv.leftovers() if d.startswith("pamtest.")]

    rc, _, err = signal_when_ready(tenv, [PAMTEST, sc], mark, sig, pids,
                                   private_dir_there)
    # The process running the transaction ended too.
    ended = gone(pids[0])
    if not ended:
        kill_quietly(pids[0])
    assert rc == 128 + sig, err
    assert ended, "the transaction kept running"
    # No passdb, no service file, no wrapper runtime directory left.
    assert tenv.leftovers() == []


def test_pamtest_exit_status_and_cleanup_unchanged(tenv, workdir):
    sc = write_file(workdir, "s.pamtest", "service svc\n"
                    "    auth required pam_matrix.so passdb=${PASSDB}\n"
                    "user bob secret\nrun authenticate\n"
                    '    prompt "Password: " answer "wrong"\n')
    r = tenv.pamtest(sc)
    assert r.returncode == 1 and "FAILED: 0 passed, 1 failed" in r.stdout, r.stderr
    assert tenv.leftovers() == []


# --- item 8: names that can never work ---------------------------------------

def test_launcher_refuses_a_user_starting_with_hash(tenv):
    r = tenv.launcher("-u", "#bob:secret:svc", APP, "svc", "#bob", "secret")
    assert r.returncode == 2, r.stdout + r.stderr
    assert '"#bob"' in r.stderr and "comment" in r.stderr
    assert "result:" not in r.stdout
    assert tenv.leftovers() == []


@pytest.mark.parametrize("args", [["-u", "bob:secret:Login"],
                                  ["-u", "bob:secret", "-s", "Login"]])
def test_launcher_service_with_capitals(tenv, args):
    r = tenv.launcher(*args, APP, "Login", "bob", "secret")
    if OPENPAM:
        # OpenPAM keeps the case: the name works as written.
        assert r.returncode == 0 and "result: PAM_SUCCESS" in r.stdout, r.stdout + r.stderr
    else:
        assert r.returncode == 2, r.stdout + r.stderr
        assert '"Login"' in r.stderr and "lowercase" in r.stderr
        assert "result:" not in r.stdout
    assert tenv.leftovers() == []


@pytest.mark.skipif(OPENPAM, reason="OpenPAM keeps the case of service names")
def test_application_may_pass_capitals(tenv):
    # Linux-PAM lowercases what the application gives pam_start().
    r = tenv.launcher("-u", "bob:secret:login", APP, "LOGIN", "bob", "secret")
    assert r.returncode == 0 and "result: PAM_SUCCESS" in r.stdout, r.stdout + r.stderr


def test_service_starting_with_hash_works(tenv, workdir):
    # Linux-PAM takes such a name; OpenPAM's pam_start refuses any name
    # outside the portable file-name set, so there it is refused up front.
    r = tenv.launcher("-u", "bob:secret:#svc", APP, "#svc", "bob", "secret")
    if OPENPAM:
        assert r.returncode == 2, r.stdout + r.stderr
        assert '"#svc"' in r.stderr and "OpenPAM accepts only" in r.stderr
        assert "result:" not in r.stdout
    else:
        assert r.returncode == 0 and "result: PAM_SUCCESS" in r.stdout, r.stdout + r.stderr
    sc = write_file(workdir, "h.pamtest", "service #svc\n"
                    "    auth required pam_matrix.so passdb=${PASSDB}\n"
                    "user bob secret #svc\nrun authenticate\n"
                    '    prompt "Password: " answer "secret"\n')
    r = tenv.pamtest(sc)
    if OPENPAM:
        assert r.returncode == 2, r.stdout + r.stderr
        assert f"{sc}:1: " in r.stderr and "OpenPAM accepts only" in r.stderr
        assert r.stdout == ""
    else:
        assert r.returncode == 0, r.stdout + r.stderr
    assert tenv.leftovers() == []


def test_application_service_outside_openpam_set(tenv):
    # What the application passes pam_start() is its own: on OpenPAM a name
    # outside the portable set fails there (PAM_SYSTEM_ERR), and the
    # wrapper says why (not that libpam went around it); Linux-PAM takes it.
    if OPENPAM:
        r = tenv.launcher("-u", "bob:secret:svc", APP, "svc+x", "bob", "secret")
        assert r.returncode == 1, r.stdout + r.stderr
        assert "result: PAM_SYSTEM_ERR" in r.stdout, r.stdout + r.stderr
        assert "service name 'svc+x': OpenPAM refuses it" in r.stderr, r.stderr
        assert "LD_PRELOAD" not in r.stderr
    else:
        r = tenv.launcher("-u", "bob:secret:svc+x", APP, "svc+x", "bob", "secret")
        assert r.returncode == 0 and "result: PAM_SUCCESS" in r.stdout, r.stdout + r.stderr
    assert tenv.leftovers() == []


SERVICE_LINES = "    auth required pam_matrix.so passdb=${PASSDB}\n"


@pytest.mark.parametrize("text,line,message", [
    ("service svc\n" + SERVICE_LINES + "user #bob secret\n", 3, "comment"),
    ("service Svc\n" + SERVICE_LINES + "user bob secret\n", 1, "lowercase"),
    ("service svc\n" + SERVICE_LINES + "user bob secret Svc\n", 3, "lowercase"),
], ids=["hash-user", "capital-service", "capital-user-service"])
def test_pamtest_names_that_can_never_work(tenv, workdir, text, line, message):
    sc = write_file(workdir, "n.pamtest", text + "run authenticate\n"
                    '    prompt "Password: " answer "secret"\n')
    r = tenv.pamtest(sc)
    if OPENPAM and message == "lowercase":
        assert r.returncode == 0, r.stdout + r.stderr
        return
    assert r.returncode == 2, r.stdout + r.stderr
    assert f"{sc}:{line}: " in r.stderr and message in r.stderr
    assert r.stdout == ""
    assert tenv.leftovers() == []


@pytest.mark.skipif(OPENPAM, reason="OpenPAM keeps the case of service names")
def test_pamtest_start_may_pass_capitals(tenv, workdir):
    sc = write_file(workdir, "c.pamtest", "service svc\n" + SERVICE_LINES
                    + "user bob secret\nstart service SVC\nrun authenticate\n"
                    '    prompt "Password: " answer "secret"\n')
    r = tenv.pamtest(sc)
    assert r.returncode == 0, r.stdout + r.stderr


# --- item 9: TMPDIR with blanks, relative TMPDIR ----------------------------

def login_without_env_passdb(*args):
    """The command: tools_login_app with PAM_MATRIX_PASSWD unset, so that
    only the service file's passdb= can name the passdb."""
    return [SH, "-c", 'unset PAM_MATRIX_PASSWD; cd / && exec "$0" "$@"', APP, *args]


@pytest.mark.parametrize("name", ["t b", "t\tb", "t b]x", "[t] b"])
def test_launcher_tmpdir_with_blanks(tenv, name):
    tmp = os.path.join(tenv.tmpdir, name)
    os.mkdir(tmp)
    r = tenv.launcher("-u", "bob:secret:svc", *login_without_env_passdb("svc", "bob", "secret"),
                      TMPDIR=tmp)
    assert r.returncode == 0 and "result: PAM_SUCCESS" in r.stdout, r.stdout + r.stderr
    r = tenv.launcher("-u", "bob:secret:svc", *login_without_env_passdb("svc", "bob", "wrong"),
                      TMPDIR=tmp)
    assert r.returncode == 1 and "result: PAM_AUTH_ERR" in r.stdout, r.stdout + r.stderr
    assert os.listdir(tmp) == []


def test_launcher_relative_tmpdir_and_chdir(tenv):
    os.mkdir(os.path.join(tenv.tmpdir, "rel"))
    cmd = login_without_env_passdb("svc", "bob", "secret")
    r = subprocess.run([LAUNCHER, "-u", "bob:secret:svc", *cmd], cwd=tenv.tmpdir,
                       env=tenv.env(TMPDIR="rel"), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, text=True, timeout=HANG)
    assert r.returncode == 0 and "result: PAM_SUCCESS" in r.stdout, r.stdout + r.stderr
    assert os.listdir(os.path.join(tenv.tmpdir, "rel")) == []


@pytest.mark.parametrize("name", ["t#b", "t\nb"])
def test_launcher_tmpdir_a_service_file_cannot_name(tenv, name):
    tmp = os.path.join(tenv.tmpdir, name)
    os.mkdir(tmp)
    r = tenv.launcher("-u", "bob:secret:svc", APP, "svc", "bob", "secret", TMPDIR=tmp)
    assert r.returncode == 2, r.stdout + r.stderr
    assert "TMPDIR" in r.stderr and "result:" not in r.stdout
    assert os.listdir(tmp) == []


# --- item 10: well-formed JUnit ---------------------------------------------

# Not XML characters or not UTF-8: U+FFFE, U+FFFF, a lone surrogate, overlong
# forms of '/' and of U+002F in three bytes, beyond U+10FFFF, a control.
BAD = [b"\xef\xbf\xbe", b"\xef\xbf\xbf", b"\xed\xa0\x80", b"\xc0\xaf", b"\xe0\x80\xaf",
       b"\xf4\x90\x80\x80", b"\x01", b"\xff"]
GOOD = "é€😀".encode()


def test_junit_is_well_formed_whatever_the_text(tenv, workdir):
    bad = b"".join(BAD)
    name = os.path.join(workdir.encode(), b"n" + bad + GOOD + b".pamtest")
    with open(name, "wb") as f:
        f.write(b"service svc\n    auth required pam_matrix.so passdb=${PASSDB} verbose\n"
                b"user bob secret\nrun authenticate\n"
                b'    prompt "Password: " answer "secret"\n'
                b'    info "' + bad + GOOD + b'"\n'
                b'run authenticate expect PAM_AUTH_ERR\n'
                b'    prompt "' + bad + b'" answer "x"\n')
    r = subprocess.run([PAMTEST, "-f", "junit", name], env=tenv.env(),
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=HANG)
    assert r.returncode == 1, r.stderr
    xml.dom.minidom.parseString(r.stdout)
    root = ET.fromstring(r.stdout)
    suite = root.find("testsuite")
    assert suite.get("name").endswith(".pamtest") and GOOD.decode() in suite.get("name")
    cases = suite.findall("testcase")
    assert len(cases) == 2
    for case in cases:
        failure = case.find("failure")
        assert failure is not None
        text = failure.get("message") + failure.text
        assert "\ufffd" in text
        assert not any(0xd800 <= ord(c) <= 0xdfff or c in "\ufffe\uffff\x01" for c in text)
    assert GOOD.decode() in cases[0].find("failure").text
    assert tenv.leftovers() == []
