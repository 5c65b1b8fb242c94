# SPDX-License-Identifier: BSD-3-Clause
"""P7: sshd, the canonical user.  Debian's OpenSSH sshd as in
examples/sshd (a normal user's sshd, or nobody's when run as root;
nss_wrapper and uid_wrapper for the account, pam_matrix through the
wrapper) takes N password logins from Debian's ssh, for each variant:

  ours      our libpam_wrapper.so and pam_matrix.so
  upstream  Debian's libpam-wrapper 1.1.4 and its pam_matrix.so
  nopam     the floor: the same sshd with `UsePAM no` (the password is a
            DES crypt hash in nss_wrapper's passwd), no pam_wrapper

One sample is a whole sshd run: start, wait until it listens, N logins
one after the other (`ssh ... true`), SIGTERM, and the end of every
process the run made.  Variants are interleaved in rounds (rotating order)
like the other benchmarks.  The bench (Python) is a child subreaper during
P7, so every process of sshd's tree ends up reaped by it: the CPU of a
sample is the growth of RUSAGE_CHILDREN minus the ssh clients' own (each
client is reaped with wait4, which gives its rusage), i.e. user+system time
of sshd's whole tree.  Wall is per login (client start to exit).

A separate pass per wrapped variant runs one sample under `strace -f` and
counts, per login: runtime directories made, files written into them
(copies into services/, rewrites into conf/), directories removed by the
process that made them, removed by another process (the sweep), left when
the run ended, and the system calls of sshd's tree.  That pass is not timed.

Used by bench.py (Bench.p7); see doc/benchmarks.md.
"""
import os
import re
import resource
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time

SSHD = "/usr/sbin/sshd"
SSH = "/usr/bin/ssh"
SSH_KEYGEN = "/usr/bin/ssh-keygen"
CWRAP_DIRS = ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib")
PASSWORD = "secret"
DES_HASH = "abNANd1rDfiNc"  # crypt("secret", "ab"): as cheap as a compare

CONFIG = """\
# bench/p7_sshd.py: examples/sshd/sshd_config.in, loopback only
ListenAddress 127.0.0.1
Port {port}
HostKey {hostkey}
PidFile {dir}/sshd.pid
UsePAM {use_pam}
PasswordAuthentication yes
KbdInteractiveAuthentication {use_pam}
PubkeyAuthentication no
AuthorizedKeysFile none
StrictModes no
UseDNS no
PrintMotd no
PrintLastLog no
X11Forwarding no
AllowTcpForwarding no
LogLevel VERBOSE
"""

ASKPASS = "#!/bin/sh\nprintf '%s\\n' \"$P7_PASSWORD\"\n"


def cwrap_lib(name):
    for d in CWRAP_DIRS:
        p = os.path.join(d, name)
        if os.path.isfile(p):
            return p
    return None


def missing():
    """Why P7 cannot run here (None: it can)."""
    need = [SSHD, SSH, SSH_KEYGEN]
    gone = [p for p in need if not os.access(p, os.X_OK)]
    gone += [n for n in ("libuid_wrapper.so", "libnss_wrapper.so")
             if cwrap_lib(n) is None]
    if gone:
        return ("missing " + ", ".join(gone) + " (packages openssh-server, "
                "openssh-client, libuid-wrapper, libnss-wrapper)")
    return None


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def cpu_of(ru):
    return ru.ru_utime + ru.ru_stime


class Variant:
    """One sshd setup: its own directory, port, TMPDIR and environment."""

    def __init__(self, name, work, owner, hostkey, lib=None, matrix=None,
                 tmp=None):
        self.name = name
        self.dir = os.path.join(work, "p7" + name)
        self.tmp = tmp or os.path.join(self.dir, "tmp")
        self.lib = lib
        self.port = free_port()
        home = os.path.join(self.dir, "home")
        os.makedirs(home)
        os.makedirs(self.tmp, exist_ok=True)
        os.chmod(self.dir, 0o755)
        uid, gid = owner
        os.chown(self.tmp, uid, gid)
        pw = "x" if lib else DES_HASH
        self.write("passwd", f"alice:{pw}:{uid}:{gid}:Alice:{home}:/bin/sh\n")
        self.write("group", f"alice:x:{gid}:\n")
        self.write("passdb", f"alice:{PASSWORD}:sshd\n")
        self.key = os.path.join(self.dir, "hostkey")
        shutil.copy(hostkey, self.key)
        shutil.copy(hostkey + ".pub", self.key + ".pub")
        os.chmod(self.key, 0o600)
        self.services = os.path.join(self.dir, "services")
        os.makedirs(self.services)
        if lib:
            passdb = os.path.join(self.dir, "passdb")
            # examples/sshd/sshd.pam with the module by absolute path,
            # without `verbose`: upstream's pam_matrix then dies of a
            # SIGSEGV in sshd's password conversation
            lines = [f"auth     required {matrix} passdb={passdb}",
                     f"account  required {matrix} passdb={passdb}",
                     f"password required {matrix} passdb={passdb}",
                     f"session  required {matrix} passdb={passdb}"]
            self.write("services/sshd", "\n".join(lines) + "\n")
            self.write("services/other", "# every service has its file\n")
        self.config = self.write("sshd_config", CONFIG.format(
            port=self.port, hostkey=self.key, dir=self.dir,
            use_pam="yes" if lib else "no"))
        self.pidfile = os.path.join(self.dir, "sshd.pid")
        self.log = os.path.join(self.dir, "sshd.log")
        pre = [cwrap_lib("libuid_wrapper.so"), cwrap_lib("libnss_wrapper.so")]
        self.env = {"PATH": "/usr/bin:/bin", "HOME": self.dir,
                    "TMPDIR": self.tmp, "UID_WRAPPER": "1",
                    "NSS_WRAPPER_PASSWD": os.path.join(self.dir, "passwd"),
                    "NSS_WRAPPER_GROUP": os.path.join(self.dir, "group")}
        if lib:
            pre.append(lib)
            self.env.update({"PAM_WRAPPER": "1",
                             "PAM_WRAPPER_SERVICE_DIR": self.services})
        self.env["LD_PRELOAD"] = ":".join(pre)
        if os.geteuid() != uid:
            # sshd reads its host key only when it owns it
            for root, dirs, files in os.walk(self.dir):
                for n in dirs + files + ["."]:
                    os.chown(os.path.join(root, n), uid, gid)

    def write(self, rel, text):
        p = os.path.join(self.dir, rel)
        with open(p, "w") as f:
            f.write(text)
        return p


class SshdBench:
    """Runs the P7 samples; `bench` is bench.Bench (log, errlog, work)."""

    def __init__(self, bench, ours_lib, ours_matrix, upstream_lib=None,
                 upstream_matrix=None, user="nobody", disk=True):
        self.b = bench
        if os.geteuid() == 0:
            import pwd
            pw = pwd.getpwnam(user)
            self.owner = (pw.pw_uid, pw.pw_gid)
            self.drop = {"user": pw.pw_uid, "group": pw.pw_gid,
                         "extra_groups": []}
        else:
            self.owner = (os.getuid(), os.getgid())
            self.drop = {}
        work = bench.work
        os.chmod(work, 0o755)
        # ours: a TMPDIR of its own on the file system of its default base
        # (/dev/shm, where it goes with TMPDIR unset, as in libssh's
        # suite), kept apart from other jobs; ours-disk: on the disk, where
        # upstream always goes (/tmp)
        self.shm = None
        shm_tmp = None
        if os.path.isdir("/dev/shm"):
            self.shm = shm_tmp = tempfile.mkdtemp(prefix="pwrap-bench-p7.",
                                                  dir="/dev/shm")
            os.chmod(self.shm, 0o755)
        hostkey = os.path.join(work, "p7hostkey")
        subprocess.run([SSH_KEYGEN, "-q", "-t", "ed25519", "-N", "", "-C",
                        "p7", "-f", hostkey], check=True,
                       stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL)
        self.variants = [Variant("ours", work, self.owner, hostkey,
                                 ours_lib, ours_matrix,
                                 shm_tmp and os.path.join(shm_tmp, "tmp"))]
        if upstream_lib:
            self.variants.append(Variant("upstream", work, self.owner,
                                         hostkey, upstream_lib,
                                         upstream_matrix))
        self.variants.append(Variant("nopam", work, self.owner, hostkey))
        if shm_tmp and disk:
            self.variants.append(Variant("ours-disk", work, self.owner,
                                         hostkey, ours_lib, ours_matrix))
        client = os.path.join(work, "p7client")
        os.makedirs(client)
        askpass = os.path.join(client, "askpass")
        with open(askpass, "w") as f:
            f.write(ASKPASS)
        os.chmod(askpass, 0o755)
        self.client_env = {k: v for k, v in os.environ.items()
                           if k != "LD_PRELOAD" and
                           not k.startswith(("PAM_WRAPPER", "SSH_"))}
        self.client_env.update({"HOME": client, "SSH_ASKPASS": askpass,
                                "SSH_ASKPASS_REQUIRE": "force",
                                "P7_PASSWORD": PASSWORD})
        self.client_env.pop("DISPLAY", None)

    def close(self):
        if self.shm:
            shutil.rmtree(self.shm, ignore_errors=True)

    # -- one sshd run ----------------------------------------------------
    def client_argv(self, v):
        return [SSH, "-F", "/dev/null", "-T", "-p", str(v.port),
                "-o", "StrictHostKeyChecking=no",
                "-o", "UserKnownHostsFile=/dev/null", "-o", "LogLevel=ERROR",
                "-o", "PubkeyAuthentication=no", "-o", "IdentityAgent=none",
                "-o", "NumberOfPasswordPrompts=1", "-o", "ConnectTimeout=30",
                "-o", "PreferredAuthentications=password",
                "alice@127.0.0.1", "true"]

    def start(self, v, prefix=()):
        """Starts sshd (under prefix, strace: which gets sshd's environment
        through -E, not in its own); returns the Popen once it listens."""
        for p in (v.pidfile, v.log):
            if os.path.exists(p):
                os.unlink(p)
        with open(v.log, "w") as log:
            if self.drop:
                os.chown(v.log, *self.owner)
            env = v.env
            if prefix:
                prefix = list(prefix) + [f"-E{k}={x}" for k, x in env.items()]
                env = {"PATH": env["PATH"]}
            proc = subprocess.Popen(
                list(prefix) + [SSHD, "-D", "-e", "-f", v.config],
                env=env, stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL, stderr=log, cwd=v.dir,
                **self.drop)
        want = f"Server listening on 127.0.0.1 port {v.port}."
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            with open(v.log, errors="replace") as f:
                if want in f.read() and os.path.exists(v.pidfile):
                    return proc
            if proc.poll() is not None:
                break
            time.sleep(0.002)
        self.reap(proc, 5)
        with open(v.log, errors="replace") as f:
            raise RuntimeError(f"P7 {v.name}: sshd did not start: "
                               f"{f.read()[-500:]}")

    def login(self, v):
        """One ssh password login; returns (wall s, client CPU s, ok)."""
        t0 = time.monotonic()
        errfd = os.open(self.b.errlog, os.O_WRONLY | os.O_APPEND | os.O_CREAT)
        try:
            pid = os.posix_spawn(SSH, self.client_argv(v), self.client_env,
                                 file_actions=[
                                     (os.POSIX_SPAWN_OPEN, 0, "/dev/null",
                                      os.O_RDONLY, 0),
                                     (os.POSIX_SPAWN_OPEN, 1, "/dev/null",
                                      os.O_WRONLY, 0),
                                     (os.POSIX_SPAWN_DUP2, errfd, 2)])
        finally:
            os.close(errfd)
        _, st, ru = os.wait4(pid, 0)
        return time.monotonic() - t0, cpu_of(ru), st == 0

    def stop(self, v, proc):
        """SIGTERM to the listener (its pid file: under strace, proc is
        strace), then reaps the whole tree."""
        try:
            with open(v.pidfile) as f:
                os.kill(int(f.read().strip()), signal.SIGTERM)
        except (OSError, ValueError):
            proc.terminate()
        return self.reap(proc, 30)

    def reap(self, proc, secs):
        """Reaps every child (we are a subreaper, so all of sshd's tree);
        True when some had to be killed."""
        deadline = time.monotonic() + secs
        killed = False
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == proc.pid:
                proc.returncode = 0
            if pid == 0:
                if time.monotonic() > deadline:
                    killed = True
                    self.kill_children()
                    deadline = time.monotonic() + 5
                time.sleep(0.001)
        return killed

    def kill_children(self):
        me = os.getpid()
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open(f"/proc/{d}/stat") as f:
                    st = f.read().rsplit(")", 1)[1].split()
                if int(st[1]) == me:
                    os.kill(int(d), signal.SIGKILL)
            except (OSError, IndexError, ValueError):
                pass

    def upstream_leftovers(self, v):
        """Upstream's /tmp/pam.X directories of this variant (it never
        removes those of processes that end with _exit)."""
        return upstream_dirs(v.dir)

    def children_of(self, pid):
        """Children of pid (/proc), zombies included: a zombie's CPU is
        not in its parent's rusage until the parent reaps it."""
        found = []
        for d in os.listdir("/proc"):
            if not d.isdigit():
                continue
            try:
                with open(f"/proc/{d}/stat") as f:
                    st = f.read().rsplit(")", 1)[1].split()
            except (OSError, IndexError):
                continue
            if int(st[1]) == pid:
                found.append(int(d))
        return found

    def settle(self, proc, listeners):
        """After a login: waits until the connection's processes are gone
        and returns the CPU seconds of those that outlived their parent
        (sshd's session process outlives the per-connection process that
        forked it, so it comes to us, the subreaper, not to the
        listener); the others are in the listener's rusage."""
        cpu = 0.0
        deadline = time.monotonic() + 20
        while True:
            try:
                pid, _, ru = os.wait4(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid != 0:
                cpu += cpu_of(ru)
                continue
            if (not self.children_of(proc.pid) and
                    set(self.children_of(os.getpid())) <= listeners) or \
                    time.monotonic() > deadline:
                break
            time.sleep(0.001)
        return cpu

    def finish(self, v, proc):
        """Stops one variant's sshd once its listener has reaped every
        per-connection process (so their CPU is in the listener's
        children's), and returns the CPU seconds of its whole tree, or
        None when part of the tree ended up elsewhere (then the sample is
        a failure)."""
        deadline = time.monotonic() + 20
        while self.children_of(proc.pid) and time.monotonic() < deadline:
            time.sleep(0.005)
        os.kill(proc.pid, signal.SIGTERM)
        _, st, ru = os.wait4(proc.pid, 0)
        proc.returncode = 0
        return cpu_of(ru)

    def round(self, variants, n, r):
        """One round: every variant's sshd runs at once and the n logins
        of each are interleaved one by one, in an order that rotates, so
        that a burst of load from another job hits all variants alike
        (pairs of samples a second apart, not a minute).  Per variant:
        wall per login, CPU of its sshd tree per login (the listener's
        rusage once it has reaped all its connections), failures,
        upstream's directories left."""
        procs = {v.name: self.start(v) for v in variants}
        listeners = {p.pid for p in procs.values()}
        out = {v.name: {"wall": 0.0, "cpu": 0.0, "fails": 0, "left": 0}
               for v in variants}
        for i in range(n):
            for k in range(len(variants)):
                v = variants[(k + i + r) % len(variants)]
                w, _, ok = self.login(v)
                out[v.name]["wall"] += w / n
                out[v.name]["fails"] += 0 if ok else 1
                out[v.name]["cpu"] += self.settle(procs[v.name],
                                                  listeners) / n
        for v in variants:
            out[v.name]["cpu"] += self.finish(v, procs[v.name]) / n
        # a process that outlived its parent came to us (we are the
        # subreaper): its CPU is in no listener's; the round counts as a
        # failure of every variant
        orphans = 0
        while True:
            try:
                pid, _ = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            orphans += 1
        for v in variants:
            if orphans:
                out[v.name]["fails"] += 1
            if v.name == "upstream":
                for d in self.upstream_leftovers(v):
                    out[v.name]["left"] += 1
                    shutil.rmtree(d, ignore_errors=True)
        return out

    # -- counting under strace -------------------------------------------
    def count(self, v, n):
        """One run of n logins under strace -f: what the wrapper did, per
        login (see the module's docstring)."""
        out = os.path.join(v.dir, "strace.out")
        proc = self.start(v, ["strace", "-f", "-qq", "-o", out])
        fails = 0
        for _ in range(n):
            fails += 0 if self.login(v)[2] else 1
        self.stop(v, proc)
        if v.name == "upstream":
            top = re.compile(r"/tmp/pam\.[0-9A-Za-z]$")
        elif not v.lib:
            top = re.compile(r"(?!)")   # no wrapper: system calls only
        else:
            base = os.path.realpath(v.tmp)
            top = re.compile(re.escape(base) + r"/pam_wrapper\.\d+\.\w+$")
        c, made = parse_strace(out, top)
        # made by this run and still there once its processes are gone
        c["left"] = sum(1 for d in made if os.path.isdir(d))
        c["fails"] = fails
        if v.name == "upstream":
            for d in self.upstream_leftovers(v):
                shutil.rmtree(d, ignore_errors=True)
        return {k: (x / n if k not in ("fails",) else x)
                for k, x in c.items()}


def parse_strace(path, top):
    """Counts from `strace -f -qq` output: top matches the path of a
    runtime directory (the one a process makes at start)."""
    pending = {}
    made = {}           # base name -> maker pid
    paths = []          # the directories made
    c = {"syscalls": 0, "made": 0, "copied": 0, "rewritten": 0,
         "removed_by_maker": 0, "removed_by_other": 0}
    call = re.compile(r"^(\d+)\s+(.*)$")
    with open(path, errors="replace") as f:
        for line in f:
            m = call.match(line)
            if not m:
                continue
            pid, rest = int(m.group(1)), m.group(2)
            if rest.endswith("<unfinished ...>"):
                pending[pid] = rest[:-len("<unfinished ...>")]
                continue
            r = re.match(r"<\.\.\. \w+ resumed>(.*)$", rest)
            if r:
                rest = pending.pop(pid, "") + r.group(1)
            if rest.startswith(("+++", "---")):
                continue
            c["syscalls"] += 1
            ok = re.search(r"\) += (\d+|0x[0-9a-f]+)", rest) is not None
            if not ok:
                continue
            p = re.match(r'(\w+)\((?:AT_FDCWD|\d+), "([^"]*)"(.*)', rest) \
                or re.match(r'(\w+)\("([^"]*)"(.*)', rest)
            if not p:
                continue
            name, arg, tail = p.group(1), p.group(2), p.group(3)
            if name == "mkdir" and top.search(arg):
                c["made"] += 1
                made[os.path.basename(arg)] = pid
                paths.append(arg)
            elif name == "openat" and "O_CREAT" in tail:
                d = os.path.dirname(arg)
                if top.search(os.path.dirname(d)):
                    sub = os.path.basename(d)
                    if sub == "services":
                        c["copied"] += 1
                    elif sub in ("conf", ".inc"):
                        c["rewritten"] += 1
                elif top.search(d) and os.path.basename(arg) not in (
                        ".lock", "pid"):
                    c["copied"] += 1    # upstream: copies at the top
            elif (name == "unlinkat" and "AT_REMOVEDIR" in tail) or \
                    name == "rmdir":
                b = os.path.basename(arg)
                # (the sweep and the exit remove by name, relative to
                # the base's descriptor)
                is_top = top.search(arg) or (
                    "/" not in arg and
                    re.fullmatch(r"pam_wrapper\.\d+\.\w+", b))
                if not is_top:
                    continue
                maker = made.get(b)
                if maker is None:
                    m2 = re.match(r"pam_wrapper\.(\d+)\.", b)
                    maker = int(m2.group(1)) if m2 else -1
                key = "removed_by_maker" if maker == pid else \
                    "removed_by_other"
                c[key] += 1
    return c, paths


GOAL_P7 = 1.0   # ours / upstream, CPU of sshd's tree and wall per login


def model(b, s, ours_lib, ours_matrix, upstream_lib, upstream_matrix,
          p2_txn, rounds, per):
    """The wrapper's share of one sshd connection, measured where it is not
    lost in sshd's own 80 ms: a fresh PAM program like sshd's
    per-connection process (the service file of P7, pam_start +
    authenticate + acct_mgmt + pam_end, then _exit: `p2_txn -x -n 1`), in
    sequence, so each finds the previous one's directory unused and
    sweeps it, as sshd's do.  Returns {variant: [CPU us per process, per
    round]}; upstream's /tmp/pam.X directories are removed after each
    process (it never removes them itself, and stops at 62)."""
    work = b.work
    variants = []

    def svc(name, matrix):
        d = os.path.join(work, "p7m" + name)
        os.makedirs(d)
        passdb = os.path.join(d, "passdb")
        with open(passdb, "w") as f:
            f.write(f"bench:{PASSWORD}:sshd\n")
        with open(os.path.join(d, "sshd"), "w") as f:
            for t in ("auth", "account", "password", "session"):
                f.write(f"{t} required {matrix} passdb={passdb}\n")
        with open(os.path.join(d, "other"), "w") as f:
            f.write("# every service has its file\n")
        return d

    def env(extra):
        e = b.base_env()
        e.update(extra)
        return e

    variants.append(("bare", env({"LD_PRELOAD": b.noaudit,
                                  "P2_TXN_CONFDIR": svc("bare",
                                                        ours_matrix)})))
    tmps = {}
    for v in s.variants:
        if not v.lib:
            continue
        d = svc(v.name, ours_matrix if v.lib == ours_lib
                else upstream_matrix)
        tmp = os.path.join(os.path.dirname(v.tmp), "model-tmp")
        os.makedirs(tmp, exist_ok=True)
        tmps[v.name] = (tmp, d)
        variants.append((v.name, env({"LD_PRELOAD": v.lib,
                                      "PAM_WRAPPER": "1",
                                      "PAM_WRAPPER_SERVICE_DIR": d,
                                      "TMPDIR": tmp})))
    argv = [p2_txn, "-x", "-n", "1", "sshd", "bench", PASSWORD]
    res = {n: [] for n, _ in variants}
    for r in range(rounds):
        for k in range(len(variants)):
            name, e = variants[(k + r) % len(variants)]
            cpu = 0.0
            for _ in range(per):
                pid = os.posix_spawn(p2_txn, argv, e, file_actions=[
                    (os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0)])
                _, st, ru = os.wait4(pid, 0)
                if st != 0:
                    raise RuntimeError(f"P7 model {name}: p2_txn failed")
                cpu += cpu_of(ru)
                if name == "upstream":
                    remove_upstream_dirs(tmps[name][1])
            res[name].append(cpu / per * 1e6)
    return res


def upstream_dirs(mark):
    """Upstream's /tmp/pam.X directories whose copy of the sshd service
    file names mark (a directory of this run: never another job's)."""
    found = []
    for n in os.listdir("/tmp"):
        if re.fullmatch(r"pam\.[0-9A-Za-z]", n):
            try:
                with open(os.path.join("/tmp", n, "sshd")) as f:
                    if mark in f.read():
                        found.append(os.path.join("/tmp", n))
            except OSError:
                pass
    return found


def remove_upstream_dirs(mark):
    for d in upstream_dirs(mark):
        shutil.rmtree(d, ignore_errors=True)


def run_p7(b, ours_lib, ours_matrix, upstream_lib, upstream_matrix, p2_txn):
    """The P7 benchmark for bench.Bench b: rows and a report section."""
    h = sys.modules[type(b).__module__]     # bench.py's helpers
    fmt, median, met, pratio, spread = h.fmt, h.median, h.met, h.pratio, \
        h.spread
    why = missing()
    if why:
        b.log(f"P7: skipped: {why}")
        b.row("P7 sshd logins", "SKIPPED", why, "")
        return
    smoke = b.a.smoke
    rounds, n = (2, 2) if smoke else (b.a.p7_rounds, b.a.p7_logins)
    sub = h.set_subreaper(True)
    s = None
    try:
        s = SshdBench(b, ours_lib, ours_matrix,
                      None if smoke else upstream_lib, upstream_matrix,
                      b.a.p4_user, disk=not smoke)
        names = [v.name for v in s.variants]
        b.log(f"P7: sshd, {rounds} rounds x {n} password logins per "
              f"variant ({', '.join(names)})")
        res = {v: {"wall": [], "cpu": [], "fails": 0, "left": 0}
               for v in names}
        for r in range(rounds):
            for name, x in s.round(s.variants, n, r).items():
                d = res[name]
                d["wall"].append(x["wall"])
                d["cpu"].append(x["cpu"])
                d["fails"] += x["fails"]
                d["left"] += x["left"]
        mrounds, mper = (2, 1) if smoke else (b.a.p7_model_rounds, 4)
        b.log(f"P7 model: {mrounds} rounds x {mper} sshd-like processes")
        mres = model(b, s, ours_lib, ours_matrix, upstream_lib,
                     upstream_matrix, p2_txn, mrounds, mper)
        counts = {}
        if smoke:
            pass    # (seconds matter there; the counts are information)
        elif shutil.which("strace") is None:
            b.log("P7: strace not installed: no per-login counts")
        else:
            for v in s.variants:
                counts[v.name] = s.count(v, n)
    finally:
        if s is not None:
            s.close()
        if sub:
            h.set_subreaper(False)
    lines = ["| variant | wall ms per login median [min-max] | CPU ms of "
             "sshd's tree per login | failed logins |", "|---|---|---|---|"]
    for name in names:
        x = res[name]
        lines.append(f"| {name} | {spread([w * 1e3 for w in x['wall']], 2)}"
                     f" | {spread([c * 1e3 for c in x['cpu']], 2)} | "
                     f"{x['fails']} |")
        if x["fails"]:
            b.smoke_failures.append(f"P7 {name}: {x['fails']} failures")
    o, f = res["ours"], res["nopam"]
    lines += ["", "Ratios are medians of the per-round ratios.", ""]
    if "upstream" in res:
        u = res["upstream"]
        rc, rw = pratio(o["cpu"], u["cpu"]), pratio(o["wall"], u["wall"])
        m = met(rc <= GOAL_P7 and rw <= GOAL_P7)
        lines.append(f"- ours/upstream: CPU of sshd's tree {rc:.3f}, wall "
                     f"per login {rw:.3f}; goal <= {GOAL_P7} (both): "
                     f"**{m}**.")
        lines.append(f"- upstream/floor: CPU {pratio(u['cpu'], f['cpu']):.3f}"
                     f", wall {pratio(u['wall'], f['wall']):.3f}; upstream "
                     f"left {u['left']} /tmp/pam.X directories in "
                     f"{rounds} runs (removed by the bench).")
        b.row("P7 sshd logins", "ours / upstream (CPU of sshd's tree; wall "
              "per login)", f"{rc:.3f}; {rw:.3f}", f"<= {GOAL_P7}: {m}")
        if "ours-disk" in res:
            d = res["ours-disk"]
            dc, dw = pratio(d["cpu"], u["cpu"]), pratio(d["wall"], u["wall"])
            lines.append(f"- ours-disk/upstream (ours with TMPDIR on the "
                         f"disk, like upstream's /tmp): CPU {dc:.3f}, wall "
                         f"{dw:.3f} (information).")
            b.row("P7 sshd logins", "ours with TMPDIR on disk / upstream "
                  "(CPU; wall)", f"{dc:.3f}; {dw:.3f}", "(information)")
    oc, ow = pratio(o["cpu"], f["cpu"]), pratio(o["wall"], f["wall"])
    lines.append(f"- ours/floor (no PAM): CPU {oc:.3f}, wall {ow:.3f}; ours "
                 f"- floor {fmt((median(o['cpu']) - median(f['cpu'])) * 1e3, 2)}"
                 " ms CPU per login (information).")
    b.row("P7 sshd logins", "ours / no-PAM sshd (CPU; wall)",
          f"{oc:.3f}; {ow:.3f}", "(information)")
    if counts:
        keys = [("made", "runtime directories made"),
                ("copied", "files copied (services/)"),
                ("rewritten", "files rewritten (conf/)"),
                ("removed_by_maker", "directories removed by their maker"),
                ("removed_by_other", "directories removed by another "
                 "process (swept)"),
                ("left", "directories left when the run ended"),
                ("syscalls", "system calls of sshd's tree")]
        lines += ["", f"Per login, from one more run of {n} logins under "
                  "`strace -f` (not timed; the run's sshd listener counts "
                  "too):", "",
                  "| per login | " + " | ".join(counts) + " |",
                  "|---|" + "---|" * len(counts)]
        for k, label in keys:
            lines.append(f"| {label} | " + " | ".join(
                fmt(counts[v][k], 2) for v in counts) + " |")
        oc_ = counts["ours"]
        b.row("P7 sshd logins", "ours per login: directories made; files "
              "copied + rewritten; swept",
              f"{oc_['made']:.2f}; {oc_['copied']:.2f} + "
              f"{oc_['rewritten']:.2f}; {oc_['removed_by_other']:.2f}",
              "(information)")
    lines += ["", f"The wrapper's share of one connection (model: "
              f"{mrounds} rounds x {mper} `p2_txn -x -n 1`, the service "
              "file above, `_exit` at the end, each process sweeping the "
              "one before it; CPU of the process):", "",
              "| variant | CPU us per connection process | minus bare |",
              "|---|---|---|"]
    mb = median(mres["bare"])
    for name, x in mres.items():
        lines.append(f"| {name} | {spread(x)} | "
                     f"{fmt(median(x) - mb) if name != 'bare' else '-'} |")
    if "upstream" in mres:
        mr = pratio(mres["ours"], mres["upstream"])
        lines += ["", f"ours/upstream per connection process: CPU {mr:.3f} "
                  "(information: what P7's ratio is made of, measured where "
                  "sshd's own work does not drown it)."]
        b.row("P7 model", "ours / upstream CPU of an sshd-like connection "
              "process (ours - bare; upstream - bare, us)",
              f"{mr:.3f} ({fmt(median(mres['ours']) - mb)}; "
              f"{fmt(median(mres['upstream']) - mb)})", "(information)")
    b.sections.append((
        "P7: sshd password logins (the canonical user)",
        f"{rounds} rounds; each round starts, for every variant, Debian's "
        f"sshd as in examples/sshd (as "
        f"{s.drop and b.a.p4_user or 'this user'}, nss_wrapper + uid_wrapper, "
        f"pam_matrix through the wrapper), runs {n} password logins to each "
        "with ssh (`ssh ... true`), one after the other and interleaved "
        "across the variants in a rotating order, then stops each sshd "
        "with SIGTERM once its listener has reaped all its connections.  "
        "CPU: user+system time of one sshd's whole tree (the listener's "
        "rusage, which includes every process it reaped) per login, with "
        "the start of sshd; wall: per login, ssh start to exit.  `nopam` is "
        "the same sshd with `UsePAM no` (the floor).  See bench/p7_sshd.py.",
        lines))
