# SPDX-License-Identifier: BSD-3-Clause
"""Tests of the pam_wrapper(1) launcher: exit status propagation, the
private directory (contents, cleanup, --keep), --service-dir, --user,
--nss and usage errors.  The wrapped program is either sh or
tools_login_app, a plain PAM application."""
import os
import signal
import subprocess
import time

import pytest

from tools_helpers import APP, HANG, LAUNCHER, LIB, PAMTEST, write_file

SH = "/bin/sh"


def test_help_and_version(tenv):
    r = tenv.launcher("--help")
    assert r.returncode == 0
    assert "--service-dir" in r.stdout and "--user" in r.stdout
    r = tenv.launcher("--version")
    assert r.returncode == 0 and r.stdout.startswith("pam_wrapper ")


@pytest.mark.parametrize("code", [0, 1, 7, 42, 255])
def test_exit_status_is_the_commands(tenv, code):
    r = tenv.launcher("--user", "bob:secret:svc", "--", SH, "-c", f"exit {code}")
    assert r.returncode == code, r.stderr
    assert tenv.leftovers() == []


def test_exit_status_of_a_signal(tenv):
    r = tenv.launcher("--user", "bob:secret:svc", "--", SH, "-c", "kill -TERM $$")
    assert r.returncode == 128 + signal.SIGTERM
    assert tenv.leftovers() == []


def test_command_not_found_and_not_executable(tenv, workdir):
    r = tenv.launcher("--user", "bob:secret:svc", "--", "/nonexistent/cmd")
    assert r.returncode == 127
    assert "/nonexistent/cmd" in r.stderr
    path = write_file(workdir, "notexec", "#!/bin/sh\n")
    os.chmod(path, 0o644)
    r = tenv.launcher("--user", "bob:secret:svc", path)
    assert r.returncode == 126
    assert tenv.leftovers() == []


def test_environment_of_the_command(tenv):
    r = tenv.launcher("--user", "bob:secret", "--service", "myapp", "--debug", "2",
                      SH, "-c", 'echo "$LD_PRELOAD|$PAM_WRAPPER|$PAM_WRAPPER_SERVICE_DIR|'
                                '$PAM_MATRIX_PASSWD|$PAM_WRAPPER_DEBUGLEVEL"')
    assert r.returncode == 0, r.stderr
    preload, enabled, svcdir, passdb, debug = r.stdout.strip().split("|")
    assert os.path.basename(preload.split(":")[-1]) == "libpam_wrapper.so"
    assert enabled == "1" and debug == "2"
    assert os.path.dirname(svcdir) == tenv.tmpdir
    assert os.path.basename(svcdir).startswith("pwrap_launch.")
    assert passdb == os.path.join(svcdir, "passdb")
    assert tenv.leftovers() == []


def test_private_dir_contents(tenv):
    script = 'cd "$PAM_WRAPPER_SERVICE_DIR" && ls && cat myapp other passdb'
    r = tenv.launcher("-u", "bob:secret", "-u", "alice:pw:other", "-s", "myapp",
                      SH, "-c", script)
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    assert lines[:3] == ["myapp", "other", "passdb"]
    groups = [ln.split()[0] for ln in lines if "pam_matrix.so" in ln]
    assert groups == ["auth", "account", "password", "session"] * 2
    assert all("passdb=" in ln for ln in lines if "pam_matrix.so" in ln)
    assert "bob:secret:myapp" in lines
    assert "alice:pw:other" in lines
    # A user without a service gets every --service, not alice's.
    assert "bob:secret:other" not in lines


def test_existing_preload_is_kept_after_ours(tenv, workdir):
    other = write_file(workdir, "libother.so", "")
    r = tenv.launcher("-u", "bob:x:svc", SH, "-c", 'echo "$LD_PRELOAD"',
                      LD_PRELOAD=other)
    parts = r.stdout.strip().split(":")
    assert parts[-1] == other
    assert os.path.basename(parts[-2]) == "libpam_wrapper.so"


def test_user_logs_in(tenv):
    r = tenv.launcher("--user", "bob:secret", "--service", "myapp", "--",
                      APP, "myapp", "bob", "secret")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "result: PAM_SUCCESS" in r.stdout
    assert "HOMEDIR=/home/bob" in r.stdout
    assert tenv.leftovers() == []


def test_wrong_password_and_unknown_user(tenv):
    r = tenv.launcher("--user", "bob:secret:myapp", APP, "myapp", "bob", "wrong")
    assert r.returncode == 1
    assert "result: PAM_SUCCESS" not in r.stdout
    r = tenv.launcher("--user", "bob:secret:myapp", APP, "myapp", "eve", "secret")
    assert r.returncode == 1
    assert tenv.leftovers() == []


@pytest.mark.parametrize("flags,result", [
    ("", "result: PAM_SUCCESS"),
    ("locked", "result: PAM_AUTH_ERR"),
    ("expired", "result: PAM_ACCT_EXPIRED"),
])
def test_user_account_flags(tenv, flags, result):
    spec = "bob:secret:myapp" + (":" + flags if flags else "")
    r = tenv.launcher("--user", spec, APP, "myapp", "bob", "secret")
    assert result in r.stdout, r.stdout + r.stderr
    assert r.returncode == (0 if not flags else 1)
    assert tenv.leftovers() == []


def test_user_limited_to_its_service(tenv):
    args = ["-u", "bob:secret:one", "-u", "alice:pw", "-s", "two"]
    assert tenv.launcher(*args, APP, "one", "bob", "secret").returncode == 0
    assert tenv.launcher(*args, APP, "two", "bob", "secret").returncode == 1
    assert tenv.launcher(*args, APP, "two", "alice", "pw").returncode == 0
    assert tenv.launcher(*args, APP, "one", "alice", "pw").returncode == 1


def test_service_dir(tenv, workdir):
    passdb = write_file(workdir, "passdb", "carol:c-pass:login\n")
    svc = "".join(f"{g} required pam_matrix.so passdb={passdb}\n"
                  for g in ("auth", "account", "password", "session"))
    write_file(workdir, "svcdir/login", svc)
    svcdir = os.path.join(workdir, "svcdir")
    r = tenv.launcher("--service-dir", svcdir, "--", APP, "login", "carol", "c-pass")
    assert r.returncode == 0, r.stdout + r.stderr
    assert "HOMEDIR=/home/carol" in r.stdout
    r = tenv.launcher("--service-dir", svcdir, "--", APP, "login", "carol", "nope")
    assert r.returncode == 1
    # No private directory without --user.
    r = tenv.launcher("-d", svcdir, SH, "-c", 'echo "$PAM_WRAPPER_SERVICE_DIR"')
    assert r.stdout.strip() == os.path.realpath(svcdir)
    assert tenv.leftovers() == []


def test_service_dir_with_user_passdb(tenv, workdir):
    # The service file names no passdb: pam_matrix uses PAM_MATRIX_PASSWD,
    # which --user points at its own passdb.
    svc = "".join(f"{g} required pam_matrix.so\n"
                  for g in ("auth", "account", "password", "session"))
    write_file(workdir, "svcdir/login", svc)
    r = tenv.launcher("-d", os.path.join(workdir, "svcdir"), "-u", "dave:d-pass:login",
                      APP, "login", "dave", "d-pass")
    assert r.returncode == 0, r.stdout + r.stderr
    assert tenv.leftovers() == []


def test_keep(tenv):
    r = tenv.launcher("--keep", "-u", "bob:secret:svc", SH, "-c", "true")
    assert r.returncode == 0
    kept = [d for d in tenv.leftovers() if d.startswith("pwrap_launch.")]
    assert len(kept) == 1
    assert os.path.join(tenv.tmpdir, kept[0]) in r.stderr
    assert sorted(os.listdir(os.path.join(tenv.tmpdir, kept[0]))) == ["passdb", "svc"]


def wait_for(path, proc, timeout=HANG):
    """Wait until the wrapped command has written path (it is ready)."""
    deadline = time.time() + timeout
    while not os.path.exists(path):
        assert proc.poll() is None, "the command ended early"
        assert time.time() < deadline, "the command never got ready"
        time.sleep(0.02)


def test_cleanup_when_the_launcher_is_terminated(tenv, workdir):
    # SIGTERM to the launcher goes on to the command; the directory still goes.
    mark = os.path.join(workdir, "ready")
    p = subprocess.Popen([LAUNCHER, "-u", "bob:secret:svc", SH, "-c",
                          f"echo > {mark}; exec sleep {HANG}"],
                         env=tenv.env(), stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        wait_for(mark, p)
        assert [d for d in tenv.leftovers() if d.startswith("pwrap_launch.")]
        p.send_signal(signal.SIGTERM)
        rc = p.wait(timeout=HANG)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert rc == 128 + signal.SIGTERM
    assert tenv.leftovers() == []


def test_sigint_is_forwarded_once(tenv, workdir):
    mark = os.path.join(workdir, "ready")
    p = subprocess.Popen([LAUNCHER, "-u", "bob:secret:svc", SH, "-c",
                          "trap 'echo got-int; kill $!; exit 5' INT; "
                          f"sleep {HANG} >/dev/null 2>&1 & echo > {mark}; wait"],
                         env=tenv.env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         text=True)
    try:
        wait_for(mark, p)
        p.send_signal(signal.SIGINT)
        out, _ = p.communicate(timeout=HANG)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    assert p.returncode == 5
    assert out.count("got-int") == 1
    assert [d for d in tenv.leftovers() if d.startswith("pwrap_launch.")] == []


def nss_available():
    r = subprocess.run([LAUNCHER, "-u", "x:y:z", "--nss", "true"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    return "not installed" not in r.stderr


@pytest.mark.skipif(not nss_available(), reason="libnss_wrapper.so is not installed")
def test_nss_adds_the_users(tenv):
    r = tenv.launcher("--nss", "-u", "bob:secret:svc", "-u", "alice:pw:svc", SH, "-c",
                      'getent passwd bob; getent passwd alice; getent group bob; '
                      'id -un; echo "$NSS_WRAPPER_PASSWD|$LD_PRELOAD"')
    assert r.returncode == 0, r.stderr
    lines = r.stdout.splitlines()
    bob = lines[0].split(":")
    alice = lines[1].split(":")
    assert bob[0] == "bob" and bob[5] == "/home/bob"
    assert alice[0] == "alice" and alice[2] != bob[2]
    assert lines[2].startswith("bob:x:" + bob[3] + ":")
    # The calling user still resolves.
    assert lines[3] == subprocess.run(["id", "-un"], stdout=subprocess.PIPE,
                                      text=True).stdout.strip()
    passwd, preload = lines[4].split("|")
    assert os.path.dirname(passwd).startswith(tenv.tmpdir)
    assert "libnss_wrapper.so" in preload
    assert tenv.leftovers() == []


@pytest.mark.skipif(not nss_available(), reason="libnss_wrapper.so is not installed")
def test_nss_user_logs_in(tenv):
    r = tenv.launcher("--nss", "-u", "bob:secret", "-s", "myapp", APP, "myapp", "bob", "secret")
    assert r.returncode == 0, r.stdout + r.stderr
    assert tenv.leftovers() == []


def test_nss_missing_is_a_clear_error(tenv):
    r = tenv.launcher("--nss", "-u", "bob:secret:svc", SH, "-c", "exit 0",
                      PAM_WRAPPER_NSS_LIB="/nonexistent/libnss_wrapper.so")
    assert r.returncode == 2
    assert "libnss_wrapper.so is not installed" in r.stderr
    assert tenv.leftovers() == []


@pytest.mark.parametrize("args,message", [
    ([], "no command"),
    (["-u", "bob:x:svc"], "no command"),
    (["true"], "--service-dir"),
    (["-u", "bob", "true"], "USER:PASSWORD"),
    (["-u", ":x:svc", "true"], "invalid user name"),
    (["-u", "bob:x", "true"], "no service"),
    (["-u", "bob:x:a/b", "true"], "invalid service"),
    # the fourth field is pam_matrix's account flags, known ones only
    (["-u", "a:b:c:d", "true"], "unknown account flag"),
    (["-u", "a:b:c:locked:x", "true"], "too many ':'"),
    # the wrapper ignores service files whose name starts with '.'
    (["-u", "bob:x:.hidden", "true"], "invalid service"),
    (["-u", "bob:x", "-s", ".hidden", "true"], "invalid service"),
    (["-s", "svc", "-d", "/tmp", "true"], "--service needs"),
    (["--nss", "-d", "/tmp", "true"], "--nss needs"),
    (["--debug", "9", "-d", "/tmp", "true"], "--debug"),
    (["--frobnicate", "true"], "usage"),
    (["-d", "/nonexistent/dir", "true"], "/nonexistent/dir"),
    (["--lib", "/nonexistent/libpam_wrapper.so", "-d", "/tmp", "true"], "no such library"),
])
def test_usage_errors(tenv, args, message):
    r = tenv.launcher(*args)
    assert r.returncode == 2, r.stderr
    assert message in r.stderr
    assert tenv.leftovers() == []


def test_lib_from_environment_and_option(tenv):
    r = tenv.launcher("-d", "/tmp", SH, "-c", 'echo "$LD_PRELOAD"', PAM_WRAPPER_LIB=LIB)
    assert r.returncode == 0
    assert os.path.realpath(r.stdout.strip().split(":")[-1]) == os.path.realpath(LIB)
    r = tenv.launcher("--lib", LIB, "-d", "/tmp", SH, "-c", 'echo "$LD_PRELOAD"')
    assert os.path.realpath(r.stdout.strip().split(":")[-1]) == os.path.realpath(LIB)


def test_password_not_on_stderr_with_debug(tenv):
    r = tenv.launcher("--debug", "3", "-u", "bob:Sekr1t-Pw:myapp", APP, "myapp", "bob",
                      "Sekr1t-Pw")
    assert r.returncode == 0
    assert "PWRAP_TRACE[" in r.stderr  # the debug output did reach stderr
    assert "Sekr1t-Pw" not in r.stderr


def test_pamtest_under_the_launcher(tenv, workdir):
    # A scenario with a bare service uses the launcher's directory and passdb.
    sc = write_file(workdir, "bare.pamtest",
                    "service myapp\n"
                    "start user bob\n"
                    "run authenticate\n"
                    '    prompt "Password: " answer "secret"\n'
                    "run open_session\n"
                    "    env HOMEDIR=/home/bob\n")
    r = tenv.launcher("-u", "bob:secret", "-s", "myapp", PAMTEST, sc)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "2 passed, 0 failed" in r.stdout
    assert tenv.leftovers() == []
