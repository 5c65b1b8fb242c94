# SPDX-License-Identifier: BSD-3-Clause
#
# `pam_wrapper --system` and pamtest's `service-dir system` (issue 36):
# Debian's own login, sshd, su, sudo and passwd stacks run for real with
# test doubles, as a normal user, with test users only (debian/*.pamtest);
# su for root through the real pam_rootok under uid_wrapper; pam_wheel
# enabled in a copy of /etc/pam.d; the authselect-style stack of
# authselect/ with the real pam_faillock and pam_pwquality; what the
# launcher refuses, swaps and reports; and, under strace, that nothing
# below /etc, /var or /run is written.
import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import (HANG, HERE, as_normal_user, bin_path, chown_normal, clean_env,
                      cwrap_lib, pamtest, report_count, run)

DEBIAN = os.path.join(HERE, "debian")


def debian_service(name):
    if not os.path.exists(os.path.join("/etc/pam.d", name)):
        pytest.fail(f"/etc/pam.d/{name} is missing: install the package that "
                    "brings it (scripts/install-deps.sh)")


@pytest.mark.parametrize("service", ["login", "sshd", "su", "sudo", "passwd"])
def test_debian_service(service):
    """Right password, wrong password, unknown user (and pam_nologin where
    the stack has it) through the system's own stack, as a normal user."""
    debian_service(service)
    r = pamtest(os.path.join(DEBIAN, service + ".pamtest"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert re.search(r"OK: \d+ passed, 0 failed", r.stdout), r.stdout
    # the report of what became of each module: once, at the default level
    assert report_count(r.stderr) == 1, r.stderr
    assert "pam_unix becomes pam_matrix.so as=pam_unix" in r.stderr


def test_su_root_through_pam_rootok():
    """Under uid_wrapper as root the real pam_rootok lets root su without
    a password; account management still asks the account source."""
    debian_service("su")
    env = clean_env(LD_PRELOAD=cwrap_lib("libuid_wrapper.so"),
                    UID_WRAPPER="1", UID_WRAPPER_ROOT="1")
    # (as whoever runs the suite: uid_wrapper makes it root)
    r = pamtest(os.path.join(DEBIAN, "su-root.pamtest"), user=False, env=env)
    assert r.returncode == 0, r.stdout + r.stderr
    assert "pam_rootok runs as it is" in r.stderr
    # the same scenario as a normal user is refused: it needs pam_rootok
    r = pamtest(os.path.join(DEBIAN, "su-root.pamtest"))
    assert r.returncode == 1, r.stdout + r.stderr


WHEEL_SCENARIO = """\
service su
service-dir system {src}
user root rootpw
user alice alicepw
{group}
start user root
run authenticate expect {code}
    prompt "Password: " answer "rootpw"
"""


def caller_name():
    """Who runs the scenarios (as_normal_user): nobody when we are root."""
    import pwd
    return pwd.getpwuid(65534 if os.getuid() == 0 else os.getuid()).pw_name


def test_su_with_pam_wheel_enabled(tmpdir_normal):
    """Debian's su with its commented pam_wheel line enabled, in a copy of
    /etc/pam.d: a caller outside the wheel group is refused even with
    root's right password, a member is let through (pam_wheel looks the
    caller and the group up through nss_wrapper)."""
    debian_service("su")
    pamd = os.path.join(tmpdir_normal, "pam.d")
    shutil.copytree("/etc/pam.d", pamd)
    with open(os.path.join(pamd, "su"), encoding="utf-8") as f:
        text = f.read()
    enabled, n = re.subn(r"^# (auth\s+required\s+pam_wheel\.so)\s*$", r"\1",
                         text, count=1, flags=re.M)
    assert n == 1, "Debian's su has no commented 'auth required pam_wheel.so'"
    with open(os.path.join(pamd, "su"), "w", encoding="utf-8") as f:
        f.write(enabled)
    cases = [("pam.d", "", "PAM_PERM_DENIED"),
             ("pam.d", "group wheel " + caller_name(), "PAM_SUCCESS"),
             ("", "", "PAM_SUCCESS")]  # the system's su: no pam_wheel
    for i, (src, group, code) in enumerate(cases):
        scen = os.path.join(tmpdir_normal, "wheel%d.pamtest" % i)
        with open(scen, "w", encoding="utf-8") as f:
            f.write(WHEEL_SCENARIO.format(src=src, group=group, code=code))
        chown_normal(tmpdir_normal)
        r = pamtest(scen)
        assert r.returncode == 0, (src, group, r.stdout + r.stderr)
        assert ("pam_wheel runs as it is" in r.stderr) == bool(src)


def test_authselect_stack(tmpdir_normal):
    """The authselect-style stack: faillock locks after three wrong
    passwords, pwquality refuses a short new password; pamtest's trace
    starts with the swap records."""
    trace = os.path.join(tmpdir_normal, "trace.json")
    r = pamtest("--trace", trace, os.path.join(HERE, "authselect.pamtest"))
    assert r.returncode == 0, r.stdout + r.stderr
    recs = [json.loads(line) for line in open(trace, encoding="utf-8")]
    swaps = [x for x in recs if x["kind"] == "swap"]
    assert recs[0]["kind"] == "swap" and len(swaps) > 10
    first_tx = next(i for i, x in enumerate(recs) if x["kind"] != "swap")
    assert all(x["kind"] != "swap" for x in recs[first_tx:])
    faillock = [x for x in recs if x["kind"] == "module"
                and x["module"] == "pam_faillock.so"]
    assert faillock and all(x["where"].split(":")[0].endswith(
        "/pam.d/system-auth") for x in faillock)
    assert "pam_faillock runs with its files in the private directory" \
        in r.stderr
    assert "pam_sss becomes pam_matrix.so as=pam_sss" in r.stderr


def launcher(*args, user=False, env=None, timeout=HANG):
    argv = [bin_path("pam_wrapper")] + list(args)
    return run(as_normal_user(argv) if user else argv,
               env if env is not None else clean_env(), timeout=timeout)


def test_faillock_state_is_private(tmpdir_normal):
    """The tally pam_faillock writes is in the private directory (kept with
    --prepare), not below /var/run/faillock."""
    prepared = os.path.join(tmpdir_normal, "p")
    r = launcher("--system=" + os.path.join(HERE, "authselect"),
                 "--service", "login", "--user", "carol:Right-pass-1",
                 "--prepare", prepared, user=True)
    assert r.returncode == 0, r.stderr
    env = clean_env(PAM_WRAPPER_LIB=os.environ["PWRAP_LIB"])
    for line in r.stdout.splitlines():
        name, _, value = line.partition("=")
        env[name] = value.strip("'")
    scen = os.path.join(tmpdir_normal, "fail.pamtest")
    with open(scen, "w", encoding="utf-8") as f:
        f.write("service login\n" + "".join(
            "start user carol\nrun authenticate expect PAM_AUTH_ERR\n"
            "    prompt \"Password: \" answer \"bad-%d\"\n" % i
            for i in range(3)))
    chown_normal(tmpdir_normal)
    r = run(as_normal_user([bin_path("pamtest"), scen]), env)
    assert r.returncode == 0, r.stdout + r.stderr
    tally = os.path.join(prepared, "state", "faillock", "carol")
    assert os.path.getsize(tally) > 0
    assert not os.path.exists("/var/run/faillock/carol")
    assert not os.path.exists("/run/faillock/carol")


UNKNOWN_STACK = """\
auth     required  pam_permit.so
auth     optional  pam_exec.so quiet /bin/true
account  required  pam_permit.so
"""


def test_unknown_module_is_refused_up_front(tmpdir_normal):
    pamd = os.path.join(tmpdir_normal, "pam.d")
    os.mkdir(pamd)
    with open(os.path.join(pamd, "app"), "w", encoding="utf-8") as f:
        f.write(UNKNOWN_STACK)
    r = launcher("--system=" + pamd, "--user", "u:p", "--", "true")
    assert r.returncode == 2, r.stderr
    assert f"{pamd}/app:2: pam_exec.so: no row of pam_wrapper's table" \
        in r.stderr
    assert "--swap pam_exec=real" in r.stderr
    assert "--swap pam_exec=standin" in r.stderr
    # a stand-in that fails: pam_exec's line is optional, so the stack
    # still succeeds, and the trace shows the stand-in's answer
    trace = os.path.join(tmpdir_normal, "trace.json")
    r = launcher("--system=" + pamd, "--swap", "pam_exec=standin:auth_err",
                 "--user", "u:p", "--trace", trace, "--",
                 bin_path("pamtest"), os.path.join(HERE, "app.pamtest"))
    assert r.returncode == 0, r.stdout + r.stderr
    recs = [json.loads(line) for line in open(trace, encoding="utf-8")]
    swaps = [x for x in recs if x["kind"] == "swap"]
    mods = [x for x in recs if x["kind"] == "module"]
    assert recs[0]["kind"] == "swap"
    assert [(x["where"], x["as"]) for x in swaps] == [
        (f"{pamd}/app:1", "real"), (f"{pamd}/app:2", "standin"),
        (f"{pamd}/app:3", "real")]
    assert swaps[1]["why"] == "--swap" and swaps[1]["module"] == "pam_exec.so"
    exec_call = [x for x in mods if x["where"].endswith("/app:2")]
    assert exec_call and exec_call[0]["rc"] == "PAM_AUTH_ERR"
    # run for real
    r = launcher("--system=" + pamd, "--swap", "pam_exec=real",
                 "--user", "u:p", "--", bin_path("pamtest"),
                 os.path.join(HERE, "app.pamtest"))
    assert r.returncode == 0, r.stdout + r.stderr
    assert "pam_exec runs as it is (it --swap)" in r.stderr


def test_report_and_trace_name_the_system_lines(tmpdir_normal):
    """The swap records name /etc/pam.d's file:line, and the copy keeps the
    line numbers, so the trace's module records name the same lines."""
    debian_service("login")
    trace = os.path.join(tmpdir_normal, "t.json")
    scen = os.path.join(tmpdir_normal, "sudo.pamtest")
    with open(scen, "w", encoding="utf-8") as f:
        f.write('service sudo\nstart user alice\nrun authenticate\n'
                '    prompt "Password: " answer "secret"\n')
    r = launcher("--system", "--service", "sudo", "--user", "alice:secret",
                 "--trace", trace, "--", bin_path("pamtest"), scen)
    assert r.returncode == 0, r.stdout + r.stderr
    assert report_count(r.stderr) == 1
    with open("/etc/pam.d/common-auth", encoding="utf-8") as f:
        unix_line = next(i for i, line in enumerate(f, 1)
                         if re.match(r"auth\s.*pam_unix\.so", line))
    recs = [json.loads(line) for line in open(trace, encoding="utf-8")]
    swap = [x for x in recs if x["kind"] == "swap"
            and x["where"] == f"/etc/pam.d/common-auth:{unix_line}"]
    assert swap and swap[0]["as"] == "matrix", recs[:5]
    calls = [x for x in recs if x["kind"] == "module"
             and x["where"].endswith(f"/pam.d/common-auth:{unix_line}")]
    assert calls and calls[0]["module"].endswith("/pam_matrix.so")


def test_prepare(tmpdir_normal):
    d = os.path.join(tmpdir_normal, "prep")
    r = launcher("--system", "--service", "login", "--user", "alice:pw",
                 "--group", "wheel:alice", "--prepare", d)
    assert r.returncode == 0, r.stderr
    env = dict(line.split("=", 1) for line in r.stdout.splitlines())
    assert env["PAM_WRAPPER_SERVICE_DIR"] == f"'{d}/pam.d'"
    assert env["PAM_WRAPPER_SYSTEM_DIR"] == f"'{d}/state'"
    assert env["PAM_MATRIX_PASSWD"] == f"'{d}/passdb'"
    assert "libnss_wrapper.so" in env["LD_PRELOAD"]
    assert sorted(os.listdir(os.path.join(d, "pam.d"))) == [
        "common-account", "common-auth", "common-password", "common-session",
        "login", "other"]
    with open(os.path.join(d, "passdb"), encoding="utf-8") as f:
        assert f.read() == "alice:pw:*\n"
    with open(os.path.join(d, "state", "group"), encoding="utf-8") as f:
        assert re.search(r"^wheel:x:\d+:alice$", f.read(), re.M)
    # an existing directory is refused, a command too
    r = launcher("--system", "--prepare", d)
    assert r.returncode == 2 and "--prepare" in r.stderr
    r = launcher("--system", "--prepare", d + "2", "true")
    assert r.returncode == 2 and "runs no command" in r.stderr


def test_system_needs_no_unknown_options():
    r = launcher("--system", "--swap", "pam_x", "true")
    assert r.returncode == 2 and "MODULE=REPLACEMENT" in r.stderr
    r = launcher("--system", "--service-dir", "/tmp", "true")
    assert r.returncode == 2 and "exclude each other" in r.stderr
    r = launcher("--user", "u:p:svc", "--swap", "pam_x=real", "true")
    assert r.returncode == 2 and "--swap needs --system" in r.stderr


def test_matrix_as_pam_unix():
    """pam_matrix as=pam_unix keeps pam_unix's options (nullok,
    use_first_pass, use_authtok, remember=) and codes, on inline stacks."""
    r = pamtest(os.path.join(HERE, "matrix_as.pamtest"), user=False)
    assert r.returncode == 0, r.stdout + r.stderr
    # remember= cannot be kept: said loudly
    assert "remember=5 (its password history" in r.stderr


def test_pam_double():
    r = pamtest(os.path.join(HERE, "double.pamtest"), user=False)
    assert r.returncode == 0, r.stdout + r.stderr


# ---- nothing below /etc, /var or /run is written ---------------------------

# strace -y shows "openat(3</etc/pam.d>, "x", ...)" and absolute paths.
WRITE_CALLS = re.compile(
    r"^(?:\[pid\s+\d+\]\s+|\d+\s+)?(open|openat|openat2|creat|unlink|unlinkat|"
    r"rename|renameat|renameat2|mkdir|mkdirat|rmdir|chmod|fchmodat|chown|"
    r"fchownat|lchown|link|linkat|symlink|symlinkat|truncate|utimensat|"
    r"mknod|mknodat|setxattr|removexattr)\((.*)$")
SYSTEM_PATH = re.compile(r'(?:<|")/(?:etc|var|run)(?:/[^">]*)?[">]')


def writes_to_system(line):
    """Whether a strace line writes (or could create) below /etc, /var or
    /run: a write/create open of such a path, or any call that changes
    one."""
    m = WRITE_CALLS.match(line)
    if m is None or not SYSTEM_PATH.search(m.group(2)):
        return False
    if m.group(1) in ("open", "openat", "openat2"):
        return re.search(r"O_WRONLY|O_RDWR|O_CREAT|O_TRUNC", m.group(2)) \
            is not None
    return True


def test_writes_to_system_spots_writes():
    """The check itself (it must be able to fail)."""
    assert writes_to_system(
        'openat(AT_FDCWD, "/var/run/faillock/alice", O_RDWR|O_CREAT, 0660) = 3')
    assert writes_to_system('12 unlink("/etc/security/opasswd") = 0')
    assert writes_to_system(
        'openat(4</run/faillock>, "alice", O_RDWR|O_CREAT, 0600) = -1 EACCES')
    assert not writes_to_system(
        'openat(AT_FDCWD, "/etc/pam.d/login", O_RDONLY|O_CLOEXEC) = 3')
    assert not writes_to_system(
        'openat(AT_FDCWD, "/tmp/x/state/nologin", O_WRONLY|O_CREAT, 0644) = 3')


def test_nothing_written_below_etc_var_run(tmpdir_normal):
    """Every scenario of this directory (Debian's stacks with nologin and
    a password change, the authselect stack with faillock and pwquality),
    under strace -f: no call writes below /etc, /var or /run, and the
    trace did see the system's files being read."""
    if shutil.which("strace") is None:
        pytest.fail("strace is missing: scripts/install-deps.sh")
    out = os.path.join(tmpdir_normal, "strace.txt")
    scens = [os.path.join(DEBIAN, n + ".pamtest")
             for n in ("login", "sshd", "su", "sudo", "passwd")]
    scens.append(os.path.join(HERE, "authselect.pamtest"))
    argv = as_normal_user(["strace", "-f", "-y", "-qq", "-o", out,
                           "-e", "trace=%file,%desc", bin_path("pamtest")]
                          + scens)
    r = subprocess.run(argv, env=clean_env(), capture_output=True, text=True,
                       timeout=HANG, stdin=subprocess.DEVNULL)
    if "ptrace" in r.stderr and "Operation not permitted" in r.stderr:
        pytest.skip("strace cannot trace here (ptrace not permitted): "
                    + r.stderr.strip())
    assert r.returncode == 0, r.stdout + r.stderr
    with open(out, encoding="utf-8", errors="replace") as f:
        lines = f.readlines()
    bad = [line for line in lines if writes_to_system(line)]
    assert bad == [], "".join(bad[:20])
    assert any('"/etc/pam.d/login"' in line or "</etc/pam.d>" in line
               for line in lines), "strace saw no read of /etc/pam.d"
    assert any("/state/faillock" in line and "O_CREAT" in line
               for line in lines), "faillock wrote no tally in the copy"


# ---- pam_wrapper(1) documents the table as it is ---------------------------

def table_rows():
    """(module, kind, why, codes) of tools/common/pwrap_system_table.c."""
    src = os.path.join(os.environ["PWRAP_SOURCE_DIR"], "tools", "common",
                       "pwrap_system_table.c")
    with open(src, encoding="utf-8") as f:
        text = f.read()
    body = text[text.index("pwrap_sys_table[] = {"):
                text.index("{ NULL, PWRAP_SYS_REAL")]
    lit = r'(?:\s*"(?:[^"\\]|\\.)*")+'

    def join(t):
        return "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', t))
    rows = []
    for m in re.finditer(r'(MATRIX|REAL|DOUBLE)\(\s*"([^"]+)"\s*,(%s)'
                         r'(?:\s*,(%s))?\s*\)' % (lit, lit), body):
        kind, mod, a, b = m.groups()
        rows.append((mod, kind, join(b), join(a)) if kind == "DOUBLE"
                    else (mod, kind, join(a), None))
    for m in re.finditer(r'\{\s*"([^"]+)",\s*PWRAP_SYS_STATE,.*?\},\s*(%s)'
                         r'\s*\}' % lit, body, re.S):
        rows.append((m.group(1), "STATE", join(m.group(2)), None))
    return rows


def man_entries():
    """kind -> {module: text} from pam_wrapper(1)'s table."""
    page = os.path.join(os.environ["PWRAP_SOURCE_DIR"], "doc", "pam_wrapper.1")
    with open(page, encoding="utf-8") as f:
        roff = f.read()
    sec = roff[roff.index(".SS The table"):roff.index(".SS What a run")]
    starts = {"MATRIX": "Account sources:", "STATE": "With their state",
              "REAL": "As they are", "DOUBLE": "Stand-ins:"}
    order = sorted(starts, key=lambda k: sec.index(starts[k]))
    out = {}
    for i, kind in enumerate(order):
        a = sec.index(starts[kind])
        b = sec.index(starts[order[i + 1]]) if i + 1 < len(order) else len(sec)
        entries = {}
        for entry in sec[a:b].split(".TP\n")[1:]:
            head, _, rest = entry.partition("\n")
            words = re.sub(r'\\f[BIRP]|"|,', " ", head.split(None, 1)[1])
            plain = re.sub(r"\\f[BIRP]|\\-|\\&", lambda m: "-" if m.group()
                           == "\\-" else "", rest)
            plain = re.sub(r"^\.(?:PP|SS).*", "", plain, flags=re.M | re.S)
            plain = re.sub(r"^\.\w+\s*", "", plain, flags=re.M)
            plain = " ".join(plain.split())
            for mod in words.split():
                entries[mod] = plain
        out[kind] = entries
    return out


def test_the_man_page_lists_the_table():
    rows = table_rows()
    assert len(rows) > 40
    man = man_entries()
    for mod, kind, why, codes in rows:
        assert mod in man[kind], f"{mod} ({kind}) is not in pam_wrapper(1)"
        assert why in man[kind][mod], (mod, why, man[kind][mod])
        if codes:
            assert codes in man[kind][mod], (mod, codes, man[kind][mod])
    listed = {m for entries in man.values() for m in entries}
    assert listed == {r[0] for r in rows}


def test_arguments_the_copy_cannot_keep_are_refused(tmpdir_normal):
    """What the line's own arguments ask that no double keeps is said
    before anything runs: pam_unix's remember= (its history is in /etc),
    a pam_faillock dir= of the line's own (it would write there).  A file
    a line names for reading (pam_env's envfile=) is fine."""
    pamd = os.path.join(tmpdir_normal, "pam.d")
    os.mkdir(pamd)
    with open(os.path.join(pamd, "app"), "w", encoding="utf-8") as f:
        f.write("auth     required pam_faillock.so preauth dir=/var/run/faillock\n"
                "auth     required pam_unix.so\n"
                "password required pam_unix.so use_authtok remember=5\n"
                "session  required pam_env.so envfile=/etc/default/locale\n")
    r = launcher("--system=" + pamd, "--user", "u:p", "--", "true")
    assert r.returncode == 2, r.stderr
    assert f"{pamd}/app:1: the line's own dir=/var/run/faillock would make " \
        "pam_faillock write there" in r.stderr
    assert f"{pamd}/app:3: pam_unix's remember=5 keeps a password history" \
        in r.stderr
    assert "app:4" not in r.stderr
    assert "2 problems above: nothing runs" in r.stderr
