# SPDX-License-Identifier: BSD-3-Clause
#
# Linux-PAM's own modules (Debian's libpam-modules, loaded by bare name from
# the system module directory) in service files read through
# libpam_wrapper.so, driven by real applications (pamtester, python3-pam),
# as a normal user.  Where a module looks users up (pam_env's @{HOME},
# pam_succeed_if's uid and group tests) the accounts come from Debian's
# nss_wrapper, so nothing in /etc is touched or needed.
import pytest

from conftest import cwrap_lib, need_program, preload, run, run_driver

PAMTESTER = "/usr/bin/pamtester"

PAM_AUTH_ERR = 7
PAM_SESSION_ERR = 14
PAM_AUTHTOK_ERR = 20


@pytest.fixture
def nss(work):
    """nss_wrapper accounts: alice (uid 1000, in group testers), bob (500)."""
    passwd = work.file("passwd",
                       "alice:x:1000:1000:Alice:/home/wonderland:/bin/sh\n"
                       "bob:x:500:500:Bob:/home/bob:/bin/false\n")
    group = work.file("group",
                      "alice:x:1000:\n"
                      "bob:x:500:\n"
                      "testers:x:2000:alice\n")
    return {"LD_PRELOAD": preload(cwrap_lib("libnss_wrapper.so")),
            "NSS_WRAPPER_PASSWD": passwd, "NSS_WRAPPER_GROUP": group}


def pamtester(work, service, user, *ops, answers=(), env=None):
    argv = [need_program(PAMTESTER), "-v", service, user, *ops]
    return run(argv, work.env(**(env or {})),
               stdin_text="".join(a + "\n" for a in answers))


def driver(work, service, user, ops, answers=(), env=None):
    return run_driver(work, {"service": service, "user": user,
                             "answers": list(answers), "ops": ops},
                      env=work.env(**(env or {})))


def rcs(out):
    return [r["rc"] for r in out["results"]]


ALL_OPS = ["authenticate", "acct_mgmt", "open_session", "close_session",
           "chauthtok"]


# --- pam_permit / pam_deny ---------------------------------------------

def test_pam_permit(work):
    work.service("permit", *(f"{g} required pam_permit.so"
                             for g in ("auth", "account", "password",
                                       "session")))
    out = driver(work, "permit", "anyone", ALL_OPS)
    assert rcs(out) == [0] * 5, out
    assert out["conversation"] == []
    res = pamtester(work, "permit", "anyone", *ALL_OPS)
    assert res.returncode == 0, res.stderr
    assert "authentication token altered successfully" in res.stdout


def test_pam_deny(work):
    work.service("deny", *(f"{g} required pam_deny.so"
                           for g in ("auth", "account", "password",
                                     "session")))
    out = driver(work, "deny", "alice", ALL_OPS)
    assert rcs(out) == [PAM_AUTH_ERR, PAM_AUTH_ERR, PAM_SESSION_ERR,
                        PAM_SESSION_ERR, PAM_AUTHTOK_ERR], out
    res = pamtester(work, "deny", "alice", "authenticate")
    assert res.returncode == 1
    assert "Authentication failure" in res.stderr


@pytest.mark.parametrize("lines,expected", [
    (["auth sufficient pam_permit.so", "auth required pam_deny.so"], 0),
    (["auth requisite pam_deny.so", "auth required pam_permit.so"],
     PAM_AUTH_ERR),
    (["auth optional pam_deny.so", "auth required pam_permit.so"], 0),
    (["auth [success=1 default=ignore] pam_permit.so",
      "auth required pam_deny.so", "auth required pam_permit.so"], 0),
])
def test_control_flags(work, lines, expected):
    # The stack semantics are libpam's own: the wrapper only moved the file.
    work.service("stack", *lines)
    out = driver(work, "stack", "alice", ["authenticate"])
    assert rcs(out) == [expected], out


# --- pam_env -------------------------------------------------------------

@pytest.fixture
def env_files(work):
    conf = work.file("pam_env.conf",
                     "GREETING  DEFAULT=hello\n"
                     "WHO       DEFAULT=@{PAM_USER}\n"
                     "MYHOME    DEFAULT=@{HOME}\n"
                     "MYSHELL   DEFAULT=@{SHELL}\n"
                     "EMPTYOVR  DEFAULT=def OVERRIDE=${NOT_SET_ANYWHERE}\n")
    envfile = work.file("environment", "FROM_ENVFILE=yes\n"
                                       "export EXPORTED=also\n")
    return conf, envfile


@pytest.mark.parametrize("readenv", [1, 0])
def test_pam_env(work, nss, env_files, readenv):
    conf, envfile = env_files
    work.service("env",
                 "auth    required pam_permit.so",
                 f"session required pam_env.so readenv={readenv} "
                 f"user_readenv=0 conffile={conf} envfile={envfile}")
    out = driver(work, "env", "alice", ["authenticate", "open_session"],
                 env=nss)
    assert rcs(out) == [0, 0], out
    env = out["results"][1]["env"]
    assert env["GREETING"] == "hello"
    assert env["WHO"] == "alice"
    # @{HOME} and @{SHELL} come from the passwd entry: nss_wrapper's.
    assert env["MYHOME"] == "/home/wonderland"
    assert env["MYSHELL"] == "/bin/sh"
    assert env["EMPTYOVR"] == "def"
    if readenv:
        assert env["FROM_ENVFILE"] == "yes"
        assert env["EXPORTED"] == "also"
    else:
        assert "FROM_ENVFILE" not in env and "EXPORTED" not in env
    # Nothing of the system's /etc/environment or pam_env.conf leaked in.
    assert set(env) <= {"GREETING", "WHO", "MYHOME", "MYSHELL", "EMPTYOVR",
                        "FROM_ENVFILE", "EXPORTED"}


def test_pam_env_setcred(work, nss, env_files):
    conf, envfile = env_files
    work.service("envauth",
                 f"auth required pam_env.so readenv=0 conffile={conf}",
                 "auth required pam_permit.so")
    out = driver(work, "envauth", "alice", ["authenticate", "setcred"],
                 env=nss)
    assert rcs(out) == [0, 0], out
    assert out["results"][1]["env"]["WHO"] == "alice"


# --- pam_succeed_if ---------------------------------------------------------

@pytest.mark.parametrize("condition,alice_ok,bob_ok", [
    ("user = alice", True, False),
    ("uid >= 1000", True, False),
    ("uid < 1000", False, True),
    ("user ingroup testers", True, False),
    ("shell = /bin/sh", True, False),
    ("home =~ /home/w*", True, False),
])
def test_pam_succeed_if(work, nss, condition, alice_ok, bob_ok):
    work.service("ifsvc",
                 f"auth required pam_succeed_if.so quiet {condition}",
                 "auth required pam_permit.so")
    for user, ok in (("alice", alice_ok), ("bob", bob_ok)):
        res = pamtester(work, "ifsvc", user, "authenticate", env=nss)
        assert (res.returncode == 0) == ok, (user, res.stdout, res.stderr)


def test_pam_succeed_if_unknown_user(work, nss):
    # mallory is in no passwd the process can see.
    work.service("ifsvc", "auth required pam_succeed_if.so uid >= 0")
    out = driver(work, "ifsvc", "mallory", ["authenticate"], env=nss)
    assert rcs(out) == [10], out  # PAM_USER_UNKNOWN
    out = driver(work, "ifsvc", "alice", ["authenticate"], env=nss)
    assert rcs(out) == [0], out


# --- pam_echo ---------------------------------------------------------------

def test_pam_echo_file(work):
    motd = work.file("motd", "Hello %u, this is %s.\n")
    work.service("echo", f"auth optional pam_echo.so file={motd}",
                 "auth required pam_permit.so")
    res = pamtester(work, "echo", "alice", "authenticate")
    assert res.returncode == 0, res.stderr
    assert "Hello alice, this is echo." in res.stdout
    out = driver(work, "echo", "alice", ["authenticate"])
    assert out["conversation"] == [{"style": "info", "op": "authenticate",
                                    "msg": "Hello alice, this is echo."}]


def test_pam_echo_text(work):
    work.service("echo", "session optional pam_echo.so Welcome, %u!",
                 "session required pam_permit.so",
                 "auth required pam_permit.so")
    res = pamtester(work, "echo", "bob", "authenticate", "open_session")
    assert res.returncode == 0, res.stderr
    assert "Welcome, bob!" in res.stdout


# --- pam_exec ---------------------------------------------------------------

EXEC_SCRIPT = """#!/bin/sh
# Run by pam_exec: PAM items arrive in the environment, the token (with
# expose_authtok) on stdin.  Succeeds when the token is the expected one.
out="$1"
expected="$2"
{
  echo "user=$PAM_USER"
  echo "type=$PAM_TYPE"
  echo "service=$PAM_SERVICE"
} >> "$out.env"
cat > "$out.tok"
[ -z "$expected" ] || [ "$(tr -d '\\000' < "$out.tok")" = "$expected" ]
"""


@pytest.fixture
def exec_script(work):
    return work.file("hook.sh", EXEC_SCRIPT, mode=0o755)


def seen(path):
    env = dict(line.split("=", 1)
               for line in (path.parent / (path.name + ".env"))
               .read_text().splitlines())
    tok = (path.parent / (path.name + ".tok")).read_bytes().rstrip(b"\0")
    return env, tok.decode()


@pytest.mark.parametrize("answer,ok", [("opensesame", True),
                                       ("wrong", False)])
def test_pam_exec_expose_authtok_after_matrix(work, exec_script, answer, ok):
    # pam_matrix prompts and checks; its token (PAM_AUTHTOK) reaches the
    # script on stdin.  The script accepts only "opensesame".
    passdb = work.passdb(("alice", answer, "exec"))
    outfile = work.path / "hook"
    work.service("exec",
                 f"auth required pam_matrix.so passdb={passdb}",
                 f"auth required pam_exec.so expose_authtok quiet "
                 f"{exec_script} {outfile} opensesame")
    res = pamtester(work, "exec", "alice", "authenticate", answers=[answer])
    assert (res.returncode == 0) == ok, res.stdout + res.stderr
    env, tok = seen(outfile)
    assert env == {"user": "alice", "type": "auth", "service": "exec"}
    assert tok == answer


def test_pam_exec_prompts_itself(work, exec_script):
    # Alone in the stack, pam_exec asks for the token it exposes.
    outfile = work.path / "hook"
    work.service("exec",
                 f"auth required pam_exec.so expose_authtok "
                 f"{exec_script} {outfile} letmein")
    out = driver(work, "exec", "bob", ["authenticate"], answers=["letmein"])
    assert rcs(out) == [0], out
    assert [c["style"] for c in out["conversation"]] == ["echo_off"]
    env, tok = seen(outfile)
    assert env["user"] == "bob" and tok == "letmein"


def test_pam_exec_session_and_stdout(work, exec_script):
    outfile = work.path / "hook"
    work.service("exec",
                 "auth required pam_permit.so",
                 f"session required pam_exec.so {exec_script} {outfile}",
                 "session optional pam_exec.so stdout /bin/echo "
                 "said by pam_exec")
    res = pamtester(work, "exec", "carol", "authenticate", "open_session",
                    "close_session")
    assert res.returncode == 0, res.stderr
    assert "said by pam_exec" in res.stdout
    types = [line for line in
             (work.path / "hook.env").read_text().splitlines()
             if line.startswith("type=")]
    assert types == ["type=open_session", "type=close_session"]
