# SPDX-License-Identifier: BSD-3-Clause
"""P7: sshd, the canonical user.  Debian's OpenSSH sshd as in
examples/sshd (a normal user's sshd, or nobody's when run as root;
nss_wrapper and uid_wrapper for the account, pam_matrix through the
wrapper) takes password logins from Debian's ssh, for each variant:

  ours       our libpam_wrapper.so and pam_matrix.so, TMPDIR a private
             directory in /dev/shm (where ours goes with TMPDIR unset)
  upstream   Debian's libpam-wrapper 1.1.4 and its pam_matrix.so (/tmp)
  nopam      the floor: the same sshd with `UsePAM no` (the password is a
             DES crypt hash in nss_wrapper's passwd), no pam_wrapper
  ours-disk  ours with TMPDIR on the disk, as examples/sshd sets it

A round (SshdBench.round) starts one sshd per variant and runs N logins
to each, interleaved one by one in a rotating order (`ssh ... true`), so
that samples of different variants are a second apart.  The bench
(Python) is a child subreaper during P7: after each login it waits until
the connection's processes are gone, reaping sshd's session process,
which outlives its parent (its CPU goes to that variant); at the end of
the round each listener, once it has reaped all its connections, gets
SIGTERM, and its rusage from wait4 is the CPU of the rest of its tree.
Wall is per login (client start to exit).

SshdBench.count runs N logins per variant under `strace -f` (not timed)
and counts, per login: runtime directories made, files written into
them (copies into services/, rewrites into conf/), directories removed by
the process that made them, removed by another process (the sweep), left
when the run ended, and the system calls of sshd's tree.

Used by bench/p7_run.py (P7 in bench.py); see doc/benchmarks.md.
"""
import os
import re
import shutil
import signal
import socket
import subprocess
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
