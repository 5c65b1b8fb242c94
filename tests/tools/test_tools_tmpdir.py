# SPDX-License-Identifier: BSD-3-Clause
"""The tools' private directories under another user's reach (issue 34;
tests/hardening/README.md lists each threat with its test here).

Root runs pam_wrapper(1), pamtest(1) or pamtest explore with a TMPDIR that
belongs to another local user (`sudo -E` keeps the caller's), here nobody.
That user renames what root made there and puts their own directory at the
same path between two transactions, or swaps a `sub/` for a link to a
root-only directory while root removes the tree.  Every case runs the real
tools and libpam; the attacker is a forked child that became nobody, so
these cases need root (the .nobody twin skips them, saying so)."""
import contextlib
import ctypes
import os
import pwd
import shutil
import subprocess
import tempfile
import time

import pytest

from tools_helpers import APP, HANG, LAUNCHER, PAMTEST, write_file

SH = "/bin/sh"
LIBDIR = os.path.dirname(os.environ.get("PWRAP_LIB", ""))
MODDIR = os.environ.get("PWRAP_MODULE_DIR", os.path.join(LIBDIR, "pam_wrapper"))
ROOT = os.geteuid() == 0
needs_root = pytest.mark.skipif(
    not ROOT, reason="the attacker is another local user (nobody): acting as "
    "root and as nobody needs root")


def nobody_ids():
    pw = pwd.getpwnam("nobody")
    return pw.pw_uid, pw.pw_gid


@contextlib.contextmanager
def other_users_tmpdir():
    """A TMPDIR that belongs to nobody: <root's 0755 directory below /tmp,
    which every user can reach>/t, owned by nobody, mode 0755."""
    outer = tempfile.mkdtemp(prefix="pwrap-other.", dir="/tmp")
    try:
        os.chmod(outer, 0o755)
        t = os.path.join(outer, "t")
        os.mkdir(t, 0o755)
        os.chown(t, *nobody_ids())
        yield t
    finally:
        shutil.rmtree(outer, ignore_errors=True)


class Attacker:
    """A child process that is nobody: start(fn, *args) runs fn there and
    returns at once; fn gets a `say(text)` to report lines back.  wait()
    gives the lines (and fails the test when fn raised)."""

    def __init__(self):
        self.pid = None

    def start(self, fn, *args):
        r, w = os.pipe()
        pid = os.fork()
        if pid == 0:  # the attacker
            os.close(r)
            code = 2
            try:
                uid, gid = nobody_ids()
                os.setgroups([])
                os.setgid(gid)
                os.setuid(uid)

                def say(text):
                    os.write(w, (text + "\n").encode())
                fn(say, *args)
                code = 0
            except BaseException as e:  # noqa: B902 - reported to the test
                os.write(w, ("raised: %r\n" % (e,)).encode())
            os._exit(code)
        os.close(w)
        self.pid, self.r = pid, r
        return self

    def wait(self):
        chunks = []
        while True:
            b = os.read(self.r, 65536)
            if not b:
                break
            chunks.append(b)
        os.close(self.r)
        _, st = os.waitpid(self.pid, 0)
        lines = b"".join(chunks).decode().splitlines()
        assert os.waitstatus_to_exitcode(st) == 0, lines
        return lines


def wait_file(path, proc):
    """Until path exists (the tool's command got there); the tool must not
    have ended before."""
    deadline = time.monotonic() + HANG
    while not os.path.exists(path):
        assert proc.poll() is None, "ended early: %r" % (proc.communicate(),)
        assert time.monotonic() < deadline, "hangs"
        time.sleep(0.02)


def evil_stack(d, owned):
    """nobody's service file and passdb in d: bob's password is "wrong",
    and nobody's module (pam_lpt_test, writing `owned`) runs first."""
    passdb = write_file(d, "evil.passdb", "bob:wrong:svc\n")
    lpt = os.environ["PWRAP_LPT_MODULE"]
    matrix = os.path.join(MODDIR, "pam_matrix.so")
    return "".join("%s required %s pidfile=%s\n%s required %s passdb=%s\n" % (
        g, lpt, owned, g, matrix, passdb) for g in ("auth", "account", "session"))


def take_over(say, tmpdir, prefix, inner_prefix=None):
    """nobody: every directory prefix.* of root's in tmpdir is renamed away
    and one of nobody's put at its path, with a service file `svc` (and a
    passdb) that accept bob with the wrong password; with inner_prefix, the
    one named so inside it gets replaced (reachable only when root made it
    in nobody's directory).  Says each path it replaced."""
    owned = os.path.join(tmpdir, "owned")
    for name in sorted(os.listdir(tmpdir)):
        path = os.path.join(tmpdir, name)
        if not name.startswith(prefix + ".") or os.stat(path).st_uid != 0:
            continue
        os.rename(path, os.path.join(tmpdir, "stolen." + name))
        os.mkdir(path, 0o755)
        write_file(path, "svc", evil_stack(path, owned))
        write_file(path, "passdb", "bob:wrong:svc\n")
        say(path)


def watch_names(tmpdir):
    return sorted(n for n in os.listdir(tmpdir) if n not in ("owned",))


def attacked_between(argv, env, ready, go, att, prefix):
    """Runs argv until `ready` exists (its first transaction is done), has
    nobody take over every prefix.* in att, lets it go on (`go`) and waits:
    (exit status, stdout, stderr, what att held, what nobody replaced)."""
    p = subprocess.Popen(argv, env=env, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True)
    try:
        wait_file(ready, p)
        seen = watch_names(att)
        replaced = Attacker().start(take_over, att, prefix).wait()
        open(go, "w").close()
        out, err = p.communicate(timeout=HANG)
    finally:
        if p.poll() is None:
            p.kill()
            p.wait()
    return p.returncode, out, err, seen, replaced


# --- HIGH: a TMPDIR of another user ------------------------------------------

@needs_root
def test_launcher_tmpdir_of_another_user(tenv, workdir):
    """Between two transactions of the launched command, nobody replaces
    the launcher's --user directory in its TMPDIR: the second login, with
    the wrong password, must still fail and nobody's module never run."""
    ready, go = os.path.join(workdir, "ready"), os.path.join(workdir, "go")
    with other_users_tmpdir() as att:
        cmd = ('"$0" svc bob secret; : > %s; while [ ! -e %s ]; do sleep 0.02; done; '
               'exec "$0" svc bob wrong' % (ready, go))
        rc, out, err, seen, replaced = attacked_between(
            [LAUNCHER, "-u", "bob:secret:svc", SH, "-c", cmd, APP], tenv.env(TMPDIR=att),
            ready, go, att, "pwrap_launch")
        assert out.count("result: PAM_SUCCESS") == 1, out + err
        assert "result: PAM_AUTH_ERR" in out and rc == 1, out + err
        assert not os.path.exists(os.path.join(att, "owned")), "nobody's module ran as root"
        # Nothing was made in nobody's directory; the launcher said why.
        assert seen == [] and replaced == [], (seen, replaced)
        # (the tool's own line: the wrapper in the command says so too)
        assert "pam_wrapper: not using TMPDIR %s (owned by uid" % att in err, err
        assert os.listdir(att) == []


SCENARIO = """\
service svc
    auth required pam_matrix.so passdb=${{PASSDB}}
    auth required {lpt} pidfile={ready} waitfor={go}
user bob secret
run authenticate
    prompt "Password: " answer "secret"
start
run authenticate expect PAM_AUTH_ERR
    prompt "Password: " answer "wrong"
"""


def kept_dirs(err):
    """The directories pamtest --keep said it kept."""
    return [line.split("private directory ", 1)[1].rsplit(" (kept)", 1)[0]
            for line in err.splitlines() if "private directory " in line]


@needs_root
@pytest.mark.parametrize("keep", [False, True], ids=["removed", "kept"])
def test_pamtest_tmpdir_of_another_user(tenv, workdir, keep):
    """The same against pamtest: its private directory (kept with -k, so
    directly in TMPDIR; else below pamtest's own directory there) replaced
    between two transactions of one scenario."""
    ready, go = os.path.join(workdir, "ready"), os.path.join(workdir, "go")
    sc = write_file(workdir, "s.pamtest", SCENARIO.format(
        lpt=os.environ["PWRAP_LPT_MODULE"], ready=ready, go=go))
    with other_users_tmpdir() as att:
        argv = [PAMTEST] + (["-k"] if keep else []) + [sc]
        rc, out, err, seen, replaced = attacked_between(
            argv, tenv.env(TMPDIR=att), ready, go, att, "pamtest")
        for d in kept_dirs(err):
            shutil.rmtree(d, ignore_errors=True)
        assert rc == 0 and "2 passed" in out, out + err
        assert not os.path.exists(os.path.join(att, "owned")), "nobody's module ran as root"
        assert seen == [] and replaced == [], (seen, replaced)
        assert "pamtest: not using TMPDIR %s (owned by uid" % att in err, err
        if keep:
            assert kept_dirs(err) and not kept_dirs(err)[0].startswith(att + "/"), err
        assert os.listdir(att) == []


@needs_root
def test_pamtest_explore_tmpdir_of_another_user(tenv, workdir):
    """pamtest explore's own directory (its replays' runtime directory
    below it) is never made in another user's TMPDIR either; with -k it
    makes none, and what it keeps is not there."""
    svcdir = os.path.join(workdir, "services")
    write_file(svcdir, "svc", "auth required pam_matrix.so\n")
    with other_users_tmpdir() as att:
        for keep in ([], ["-k"]):
            r = tenv.pamtest("explore", *keep, "-d", svcdir, "svc", TMPDIR=att)
            for d in [line.split("directory ", 1)[1].rsplit(" (kept)", 1)[0]
                      for line in r.stderr.splitlines() if line.endswith(" (kept)")]:
                assert not d.startswith(att + "/"), r.stderr
                shutil.rmtree(d, ignore_errors=True)
            assert r.returncode in (0, 1), r.stdout + r.stderr
            assert "replays on libpam agree" in r.stdout, r.stdout + r.stderr
            if not keep:
                assert "pamtest: not using TMPDIR %s (owned by uid" % att in r.stderr, \
                    r.stderr
            assert os.listdir(att) == []


# --- HIGH: removal following another user's links ---------------------------

RENAME_EXCHANGE = 2
NFILES = 20000


def renameat2_exchange():
    libc = ctypes.CDLL(None, use_errno=True)
    f = libc.renameat2
    f.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_int, ctypes.c_char_p,
                  ctypes.c_uint]
    return f


def fill(d, n):
    os.makedirs(d, exist_ok=True)
    for i in range(n):
        with open(os.path.join(d, "f%05d" % i), "w"):
            pass


def swap_during_removal(say, tmpdir, victim, stop):
    """nobody: replaces root's pwrap_launch.* with a directory of its own
    whose sub/ holds NFILES files, next to a link to the victim; once the
    command was told to end, swaps sub and the link as fast as it can until
    `stop` exists."""
    exchange = renameat2_exchange()
    for name in sorted(os.listdir(tmpdir)):
        path = os.path.join(tmpdir, name)
        if not name.startswith("pwrap_launch.") or os.stat(path).st_uid != 0:
            continue
        os.rename(path, os.path.join(tmpdir, "stolen." + name))
        os.mkdir(path, 0o755)
        fill(os.path.join(path, "sub"), NFILES)
        os.symlink(victim, os.path.join(path, "lnk"))
        say("planted " + path)
    say("ready")
    planted = [os.path.join(tmpdir, n) for n in os.listdir(tmpdir)
               if n.startswith("pwrap_launch.")]
    AT = -100
    while not os.path.exists(stop):
        for p in planted:
            exchange(AT, os.path.join(p, "sub").encode(), AT,
                     os.path.join(p, "lnk").encode(), RENAME_EXCHANGE)


@needs_root
def test_launcher_removal_does_not_follow_swapped_links(tenv, workdir):
    """While the launcher removes its directory, nobody exchanges a sub/
    of NFILES files for a link to a root-only directory of NFILES files
    (renameat2 RENAME_EXCHANGE, as fast as it can): root deletes none of
    the root-only files (on 9c82650 about 99% of them went)."""
    victim = os.path.join(workdir, "root-only")
    fill(victim, NFILES)
    os.chmod(victim, 0o700)
    ready, go = os.path.join(workdir, "ready"), os.path.join(workdir, "go")
    with other_users_tmpdir() as att:
        stop = os.path.join(os.path.dirname(att), "stop")
        cmd = ': > %s; while [ ! -e %s ]; do sleep 0.02; done' % (ready, go)
        p = subprocess.Popen([LAUNCHER, "-u", "bob:secret:svc", SH, "-c", cmd],
                             env=tenv.env(TMPDIR=att), stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE, text=True)
        attacker = Attacker()
        try:
            wait_file(ready, p)
            attacker.start(swap_during_removal, att, victim, stop)
            # the attacker says "ready" once planted (or found nothing)
            line = b""
            while not line.endswith(b"ready\n"):
                b = os.read(attacker.r, 1)
                assert b, "the attacker ended early"
                line += b
            open(go, "w").close()
            out, err = p.communicate(timeout=HANG)
        finally:
            open(stop, "w").close()
            if p.poll() is None:
                p.kill()
                p.wait()
        attacker.wait()
        left = len(os.listdir(victim))
        assert left == NFILES, "root deleted %d root-only files; %r" % (NFILES - left, line)
        assert p.returncode == 0, out + err
        assert b"planted" not in line, line
