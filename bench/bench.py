# SPDX-License-Identifier: BSD-3-Clause
"""Runs benchmarks P1-P5 (and P2 under callgrind) side by side for our
libpam_wrapper.so/pam_matrix.so and Debian's libpam-wrapper 1.1.4
("upstream"), with bare Linux-PAM pam_start_confdir as information, and
writes a Markdown report whose summary gives every goal as met / NOT met.

Called by bench/run.sh, which installs the packages, builds our tree and the
C drivers (spawn, p2_txn, empty.so, noaudit.so) first; see doc/benchmarks.md.
Every variant runs in its own processes; variants are interleaved in rounds
so that load from other jobs on the machine hits them alike, and we report
medians with their spread, and the median of the per-round ratios (which
pairs each round's variants).  Nothing here is a pass/fail test: the goals
are reported as met or not met, never asserted.
"""
import argparse
import ctypes
import datetime
import glob
import os
import platform
import pwd
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

UPSTREAM_LIB = "/usr/lib/x86_64-linux-gnu/libpam_wrapper.so"
UPSTREAM_MATRIX = "/usr/lib/x86_64-linux-gnu/pam_wrapper/pam_matrix.so"
USER, PASSWORD, SERVICE = "bench", "secret", "bench"

# The goals (doc/benchmarks.md, issue 12).
GOAL_P1 = 1.05   # ours / empty preload, /bin/true, wall: at most
GOAL_P2 = 3.0    # ours / upstream transactions/s: at least
GOAL_P3 = 5.0    # upstream / ours, 1M-line passdb, fresh process, wall: at least
GOAL_P4_MARGIN = 64  # RLIMIT_NPROC soft limit: user's tasks + N + this
GOAL_P5 = 0.85   # ours / upstream CPU of a fresh PAM program's tree: at most
GOAL_DI = 10.0   # ours / bare CPU, 1,000 nested includes: at most (issue 37:
                 # no more than libpam itself, in order of magnitude)

PR_SET_CHILD_SUBREAPER = 36


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def fmt(x, digits=1):
    if x != x:  # NaN
        return "n/a"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.{digits}f}"


def spread(xs, digits=1):
    """'median [min-max]' of a list."""
    if not xs:
        return "n/a"
    return (f"{fmt(median(xs), digits)} [{fmt(min(xs), digits)}-"
            f"{fmt(max(xs), digits)}]")


def paired(a, b):
    """Per-round ratios a[i]/b[i]."""
    return [x / y for x, y in zip(a, b) if y > 0]


def pratio(a, b):
    """Median of the per-round ratios a/b."""
    return median(paired(a, b))


def met(ok):
    return "met" if ok else "NOT met"


def tasks_of(uid):
    """Tasks (processes and threads: what RLIMIT_NPROC counts) whose real
    uid is uid."""
    n = 0
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/status") as f:
                st = f.read()
        except OSError:
            continue
        m = re.search(r"^Uid:\s+(\d+)", st, re.M)
        t = re.search(r"^Threads:\s+(\d+)", st, re.M)
        if m and int(m.group(1)) == uid:
            n += int(t.group(1)) if t else 1
    return n


def live_children():
    """Pids of our live (not zombie) children."""
    found = []
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open(f"/proc/{d}/stat") as f:
                st = f.read().rsplit(")", 1)[1].split()
        except (OSError, IndexError):
            continue
        if st[0] != "Z" and int(st[1]) == os.getpid():
            found.append(int(d))
    return found


def set_subreaper(on):
    """Makes us the reaper of our descendants' orphans (P4), so that their
    helper processes are counted and their zombies are not left to an init
    that may reap them late (each zombie still counts in RLIMIT_NPROC)."""
    libc = ctypes.CDLL(None, use_errno=True)
    return libc.prctl(PR_SET_CHILD_SUBREAPER, 1 if on else 0, 0, 0, 0) == 0


def reap_orphans(deadline):
    """Reaps children until none is left or the deadline passes; returns
    (number reaped, True if none is left)."""
    n = 0
    while True:
        try:
            pid, _ = os.waitpid(-1, os.WNOHANG)
        except ChildProcessError:
            return n, True
        if pid > 0:
            n += 1
        elif time.monotonic() >= deadline:
            return n, False
        else:
            time.sleep(0.02)


class Bench:
    def __init__(self, args):
        self.a = args
        self.bin = args.bin
        self.ours_lib = os.path.join(args.build, "lib", "libpam_wrapper.so")
        self.ours_matrix = os.path.join(args.build, "lib", "pam_wrapper",
                                        "pam_matrix.so")
        self.noaudit = os.path.join(self.bin, "noaudit.so")
        self.upstream = not args.smoke and os.path.exists(UPSTREAM_LIB) \
            and os.path.exists(UPSTREAM_MATRIX)
        self.work = tempfile.mkdtemp(prefix="pwrap-bench.")
        self.errlog = os.path.join(self.work, "stderr.log")
        self.rows = []      # (benchmark, measure, value text, goal text)
        self.sections = []  # Markdown text per benchmark
        self.raw = []       # raw driver output, for the appendix
        self.smoke_failures = []

    # -- helpers ---------------------------------------------------------
    def log(self, msg):
        print(msg, file=sys.stderr, flush=True)

    def service_dir(self, name, module, passdb, acct=True):
        """A service dir with SERVICE (auth [+account] through `module`) and
        an empty 'other', so libpam never logs a missing-other error (which
        would turn into a log write per transaction)."""
        d = os.path.join(self.work, name)
        os.makedirs(d, exist_ok=True)
        with open(os.path.join(d, SERVICE), "w") as f:
            f.write(f"auth required {module} passdb={passdb}\n")
            if acct:
                f.write(f"account required {module} passdb={passdb}\n")
        with open(os.path.join(d, "other"), "w") as f:
            f.write("# nothing: every service here has its own file\n")
        return d

    def wrap_env(self, lib, svcdir, tmpdir=None):
        env = {"LD_PRELOAD": lib, "PAM_WRAPPER": "1",
               "PAM_WRAPPER_SERVICE_DIR": svcdir}
        if tmpdir:
            env["TMPDIR"] = tmpdir
        return env

    def base_env(self):
        env = {k: v for k, v in os.environ.items()
               if k != "LD_PRELOAD" and not k.startswith("PAM_WRAPPER")}
        return env

    def run_spawn(self, rounds, per, variants, prog):
        """variants: list of (name, {env}); returns {name: {"wall": [],
        "tree": [], "cpu": [], "orphans": [], "fails": n}}, lists per round
        (see bench/spawn.c)."""
        cmd = [os.path.join(self.bin, "spawn"), "-r", str(rounds), "-n",
               str(per), "-e", self.errlog]
        for name, env in variants:
            cmd += ["-V", name] + [f"{k}={v}" for k, v in env.items()]
        cmd += ["--"] + prog
        out = subprocess.run(cmd, check=True, capture_output=True,
                             text=True, env=self.base_env()).stdout
        self.raw.append("$ spawn ... -- " + " ".join(prog) + "\n" + out)
        keys = {"RAW": "wall", "RAWTREE": "tree", "RAWCPU": "cpu",
                "RAWORPHANS": "orphans"}
        res = {}
        for line in out.splitlines():
            f = line.split()
            d = res.setdefault(f[1], {"fails": 0})
            if f[0] in keys:
                d[keys[f[0]]] = [float(x) for x in f[2:]]
            elif f[0] == "RESULT":
                d["fails"] = int(re.search(r"fails=(\d+)", line).group(1))
        return res

    def run_txn(self, env, args, timeout=600):
        """One p2_txn process; returns the dict of its key=value output."""
        full = self.base_env()
        full.update(env)
        with open(self.errlog, "a") as err:
            p = subprocess.run([os.path.join(self.bin, "p2_txn")] + args,
                               env=full, stdout=subprocess.PIPE, stderr=err,
                               text=True, timeout=timeout)
        if p.returncode != 0:
            raise RuntimeError(f"p2_txn {args} failed (rc {p.returncode}); "
                               f"see the tail of {self.errlog}:\n" +
                               self.tail_err())
        return {k: float(v) for k, v in
                (kv.split("=") for kv in p.stdout.split())}

    def tail_err(self, n=5):
        try:
            with open(self.errlog) as f:
                return "".join(f.readlines()[-n:])
        except OSError:
            return ""

    def row(self, bench, measure, value, goal=""):
        self.rows.append((bench, measure, value, goal))

    def small_passdb(self):
        p = os.path.join(self.work, "small.passdb")
        with open(p, "w") as f:
            f.write("alice:alicepw:other\n")
            f.write(f"{USER}:{PASSWORD}:{SERVICE}\n")
            f.write("bob:bobpw:bench\n")
        return p

    # -- P1 --------------------------------------------------------------
    def p1(self):
        rounds, per = (5, 5) if self.a.smoke else (self.a.p1_rounds, 10)
        empty = os.path.join(self.bin, "empty.so")
        svc = self.service_dir("p1svc", self.ours_matrix,
                               os.path.join(self.work, "none"))
        variants = [("plain", {}), ("empty", {"LD_PRELOAD": empty}),
                    ("ours", self.wrap_env(self.ours_lib, svc))]
        if self.upstream:
            svc_up = self.service_dir("p1svc_up", UPSTREAM_MATRIX,
                                      os.path.join(self.work, "none"))
            variants.append(("upstream", self.wrap_env(UPSTREAM_LIB, svc_up)))
        self.log(f"P1: /bin/true, {rounds} rounds x {per} per variant")
        r = self.run_spawn(rounds, per, variants, ["/bin/true"])
        lines = ["| variant | wall us/process median [min-max] | "
                 "CPU us/process median [min-max] | failures |",
                 "|---|---|---|---|"]
        for name, _ in variants:
            x = r[name]
            lines.append(f"| {name} | {spread(x['wall'])} | "
                         f"{spread(x['cpu'])} | {x['fails']} |")
            if x["fails"]:
                self.smoke_failures.append(f"P1 {name}: {x['fails']} "
                                           "failures")
        e, o = r["empty"], r["ours"]
        pw, pc = pratio(o["wall"], e["wall"]), pratio(o["cpu"], e["cpu"])
        m = met(pw <= GOAL_P1)
        lines.append("")
        lines.append(f"ours/empty: wall {pw:.3f}, CPU {pc:.3f} (medians of "
                     f"the per-round ratios; ratios of the medians: wall "
                     f"{median(o['wall']) / median(e['wall']):.3f}, CPU "
                     f"{median(o['cpu']) / median(e['cpu']):.3f}).  Goal <= "
                     f"{GOAL_P1} (wall): **{m}**.")
        self.row("P1 /bin/true", "ours / empty preload (wall; CPU)",
                 f"{pw:.3f}; {pc:.3f}", f"<= {GOAL_P1}: {m}")
        if self.upstream:
            u = r["upstream"]
            lines.append(f"upstream/empty: wall "
                         f"{pratio(u['wall'], e['wall']):.2f}, CPU "
                         f"{pratio(u['cpu'], e['cpu']):.2f}.")
            self.row("P1 /bin/true", "upstream / empty preload (wall; CPU)",
                     f"{pratio(u['wall'], e['wall']):.3f}; "
                     f"{pratio(u['cpu'], e['cpu']):.3f}", "(reference)")
        self.sections.append(("P1: tax on a process that never uses PAM",
                              f"`spawn -r {rounds} -n {per}` running "
                              "`/bin/true`; per-process time of each round.",
                              lines))

    # -- P2 --------------------------------------------------------------
    def p2_variants(self, passdb):
        """(name, env, p2_txn args): bare = pam_start_confdir with our
        module and no wrapper, kernel audit stubbed as both wrappers do."""
        bare_dir = self.service_dir("p2bare", self.ours_matrix, passdb)
        ours_dir = self.service_dir("p2ours", self.ours_matrix, passdb)
        v = [("bare", {"LD_PRELOAD": self.noaudit}, ["-c", bare_dir]),
             ("ours", self.wrap_env(self.ours_lib, ours_dir), [])]
        if self.upstream:
            up_dir = self.service_dir("p2up", UPSTREAM_MATRIX, passdb)
            v.append(("upstream", self.wrap_env(UPSTREAM_LIB, up_dir), []))
        return v

    def p2(self):
        passdb = self.small_passdb()
        variants = self.p2_variants(passdb)
        rounds, secs = (2, 0.2) if self.a.smoke else (self.a.p2_rounds, 0.4)
        self.log(f"P2: {rounds} rounds x {secs} s per variant")
        tps = {n: [] for n, _, _ in variants}
        cpu = {n: ([], []) for n, _, _ in variants}
        for r in range(rounds):
            for k in range(len(variants)):
                name, env, extra = variants[(k + r) % len(variants)]
                out = self.run_txn(env, extra + ["-t", str(secs), SERVICE,
                                                 USER, PASSWORD])
                tps[name].append(out["tx_per_s"])
                cpu[name][0].append(out["usr_us"])
                cpu[name][1].append(out["sys_us"])
        lines = ["| variant | transactions/s median [min-max] | "
                 "us/transaction | user CPU us/tx | kernel CPU us/tx |",
                 "|---|---|---|---|---|"]
        for name, _, _ in variants:
            lines.append(f"| {name} | {spread(tps[name])} | "
                         f"{fmt(1e6 / median(tps[name]))} | "
                         f"{fmt(median(cpu[name][0]))} | "
                         f"{fmt(median(cpu[name][1]))} |")
        lines += ["", "Ratios are medians of the per-round ratios (each "
                  "round runs every variant back to back).", ""]
        if self.upstream:
            ou = pratio(tps["ours"], tps["upstream"])
            m = met(ou >= GOAL_P2)
            lines.append(f"- ours/upstream throughput: {ou:.2f} (ratio of "
                         "the medians "
                         f"{median(tps['ours']) / median(tps['upstream']):.2f}"
                         f"); goal >= {GOAL_P2:g}: **{m}**.")
            self.row("P2 transactions/s", "ours / upstream",
                     f"{ou:.2f}", f">= {GOAL_P2:g}: {m}")
        ob = pratio(tps["ours"], tps["bare"])
        lines.append(f"- ours/bare throughput: {ob:.3f} (information: the "
                     "wrapper's tax on a transaction, no goal).")
        self.row("P2 transactions/s", "ours / bare pam_start_confdir",
                 f"{ob:.3f}", "(information)")
        self.sections.append((
            "P2: in-process transactions/s",
            f"`p2_txn -t {secs}` per variant per round, {rounds} rounds "
            "interleaved; one transaction = pam_start(_confdir) + "
            "pam_authenticate + pam_acct_mgmt + pam_end through pam_matrix "
            "with a 3-line passdb.  `bare` is pam_start_confdir on the same "
            "service file with our module and no wrapper, kernel audit "
            "stubbed (bench/noaudit.c) as both wrappers do.", lines))

    def p2_callgrind(self):
        if shutil.which("valgrind") is None:
            self.log("P2 callgrind: valgrind not installed, skipped")
            return
        variants = self.p2_variants(self.small_passdb())
        n1, n2 = 20, 220
        self.log(f"P2 callgrind: {n1} and {n2} transactions per variant")
        irs = {}
        for name, env, extra in variants:
            tot = []
            for n in (n1, n2):
                out = os.path.join(self.work, f"cg.{name}.{n}")
                full = self.base_env()
                full.update(env)
                # %p: the dump of any process the wrapper forks must not
                # overwrite the client's
                cmd = ["valgrind", "--tool=callgrind", "--quiet",
                       f"--callgrind-out-file={out}.%p",
                       os.path.join(self.bin, "p2_txn")] + extra + \
                    ["-n", str(n), SERVICE, USER, PASSWORD]
                with open(self.errlog, "a") as err:
                    p = subprocess.Popen(cmd, env=full,
                                         stdout=subprocess.DEVNULL,
                                         stderr=err)
                    if p.wait() != 0:
                        raise RuntimeError(f"callgrind {name} failed")
                with open(f"{out}.{p.pid}") as f:
                    m = re.search(r"^(?:summary|totals):\s+(\d+)", f.read(),
                                  re.M)
                tot.append(int(m.group(1)))
            irs[name] = (tot[1] - tot[0]) / (n2 - n1)
        lines = ["| variant | instructions per transaction |", "|---|---|"]
        for name in irs:
            lines.append(f"| {name} | {irs[name]:,.0f} |")
        lines.append("")
        if "upstream" in irs:
            lines.append(f"ours/upstream instructions: "
                         f"{irs['ours'] / irs['upstream']:.3f}.")
            self.row("P2 callgrind", "ours / upstream instructions per "
                     "transaction", f"{irs['ours'] / irs['upstream']:.3f}",
                     "(information)")
        r = irs["ours"] / irs["bare"]
        lines.append(f"ours/bare instructions: {r:.3f} "
                     f"(+{irs['ours'] - irs['bare']:,.0f} per transaction).")
        self.row("P2 callgrind", "ours / bare instructions per transaction",
                 f"{r:.3f}", "(information)")
        self.sections.append((
            "P2 under callgrind: instructions per transaction",
            f"`valgrind --tool=callgrind p2_txn -n {n1}` and `-n {n2}`; "
            f"(Ir({n2}) - Ir({n1})) / {n2 - n1}, which cancels process "
            "start-up.  Deterministic, unlike the timings above.", lines))

    # -- P3 --------------------------------------------------------------
    def big_passdb(self, n):
        p = os.path.join(self.work, f"big{n}.passdb")
        with open(p, "w") as f:
            step = 100000
            for s in range(0, n, step):
                f.write("".join(f"user{i:06d}:pw{i:06d}:{SERVICE}\n"
                                for i in range(s, min(n, s + step))))
        return p, f"user{n - 1:06d}", f"pw{n - 1:06d}"

    def p3(self):
        lines_n = 10000 if self.a.smoke else 1000000
        passdb, user, pw = self.big_passdb(lines_n)
        ours_dir = self.service_dir("p3ours", self.ours_matrix, passdb, False)
        variants = [("ours", self.wrap_env(self.ours_lib, ours_dir))]
        if self.upstream:
            up_dir = self.service_dir("p3up", UPSTREAM_MATRIX, passdb, False)
            variants.append(("upstream", self.wrap_env(UPSTREAM_LIB, up_dir)))
        # warm the page cache
        with open(passdb, "rb") as f:
            while f.read(1 << 20):
                pass
        rounds, per = (2, 1) if self.a.smoke else (self.a.p3_rounds, 2)
        self.log(f"P3 once: {lines_n} lines, {rounds} rounds x {per}")
        prog = [os.path.join(self.bin, "p2_txn"), "-A", "-n", "1", SERVICE,
                user, pw]
        once = self.run_spawn(rounds, per, variants, prog)
        for name, _ in variants:
            if once[name]["fails"]:
                self.smoke_failures.append(f"P3 once {name}: "
                                           f"{once[name]['fails']} failures")
        # repeated (information): K authentications in one process
        k = {"ours": 5 if self.a.smoke else 200, "upstream": 20}
        reps = 2 if self.a.smoke else self.a.p3_rep_rounds
        self.log(f"P3 repeated: {reps} rounds, K={k}")
        per_auth = {n: [] for n, _ in variants}
        per_tx = {n: [] for n, _ in variants}
        for r in range(reps):
            for j in range(len(variants)):
                name, env = variants[(j + r) % len(variants)]
                out = self.run_txn(env, ["-A", "-n", str(k[name]), SERVICE,
                                         user, pw])
                per_auth[name].append(out["auth_us"])
                per_tx[name].append(out["tx_us"])
        lines = [f"passdb: {lines_n:,} lines ({os.path.getsize(passdb):,} "
                 "bytes), the last user authenticates.", "",
                 "| variant | once: wall ms/process | once: CPU ms/process "
                 "(whole tree) | repeated: us/authenticate | "
                 "repeated: us/transaction |",
                 "|---|---|---|---|---|"]
        for name, _ in variants:
            o = once[name]
            lines.append(f"| {name} | {spread([x / 1000 for x in o['wall']], 2)}"
                         f" | {spread([x / 1000 for x in o['cpu']], 2)} | "
                         f"{spread(per_auth[name])} | {spread(per_tx[name])} |")
        label = "P3 1M-line passdb" if lines_n == 1000000 else \
            f"P3 {lines_n}-line passdb"
        self.row(label, "ours: once ms (wall); repeated us/authenticate",
                 f"{median(once['ours']['wall']) / 1000:.2f}; "
                 f"{median(per_auth['ours']):.1f}", "(information)")
        if self.upstream:
            uo, oo = once["upstream"], once["ours"]
            ro = pratio(uo["wall"], oo["wall"])
            roc = pratio(uo["cpu"], oo["cpu"])
            rr = pratio(per_auth["upstream"], per_auth["ours"])
            m = met(ro >= GOAL_P3)
            lines += ["", "Ratios are medians of the per-round ratios.", "",
                      f"upstream/ours once: wall {ro:.2f}x, CPU {roc:.2f}x; "
                      f"goal >= {GOAL_P3:g}x (wall): **{m}**.  "
                      f"upstream/ours repeated (per authenticate): "
                      f"{rr:.1f}x (information, no goal)."]
            self.row(label, "upstream / ours, once (wall; CPU)",
                     f"{ro:.2f}x; {roc:.2f}x", f">= {GOAL_P3:g}x: {m}")
            self.row(label, "upstream / ours, repeated",
                     f"{rr:.1f}x", "(information)")
        self.sections.append((
            "P3: last user of a 1,000,000-line passdb",
            f"once: `spawn -r {rounds} -n {per}` of `p2_txn -A -n 1` (fresh "
            "process: start, pam_start, authenticate, end, exit; wall until "
            "it exits, CPU of its whole process tree).  repeated: "
            "`p2_txn -A -n K` (K transactions in one process), mean time "
            f"inside pam_authenticate, {reps} rounds.  Page cache warm.",
            lines))

    # -- P5 --------------------------------------------------------------
    def p5(self):
        passdb = self.small_passdb()
        bare_dir = self.service_dir("p5bare", self.ours_matrix, passdb)
        ours_dir = self.service_dir("p5ours", self.ours_matrix, passdb)
        variants = [("bare", {"LD_PRELOAD": self.noaudit,
                              "P2_TXN_CONFDIR": bare_dir}),
                    ("ours", self.wrap_env(self.ours_lib, ours_dir))]
        if self.upstream:
            up_dir = self.service_dir("p5up", UPSTREAM_MATRIX, passdb)
            variants.append(("upstream", self.wrap_env(UPSTREAM_LIB, up_dir)))
        rounds, per = (3, 2) if self.a.smoke else (self.a.p5_rounds, 4)
        self.log(f"P5: fresh PAM program, {rounds} rounds x {per}")
        prog = [os.path.join(self.bin, "p2_txn"), "-n", "1", SERVICE, USER,
                PASSWORD]
        r = self.run_spawn(rounds, per, variants, prog)
        lines = ["| variant | wall us until it exits | wall us until its "
                 "tree is gone | CPU us of the whole tree | helper "
                 "processes reaped | failures |",
                 "|---|---|---|---|---|---|"]
        for name, _ in variants:
            x = r[name]
            lines.append(f"| {name} | {spread(x['wall'])} | "
                         f"{spread(x['tree'])} | {spread(x['cpu'])} | "
                         f"{spread(x['orphans'], 2)} | {x['fails']} |")
            if x["fails"]:
                self.smoke_failures.append(f"P5 {name}: {x['fails']} "
                                           "failures")
        o, b = r["ours"], r["bare"]
        lines += ["", "Ratios are medians of the per-round ratios.", ""]
        if self.upstream:
            u = r["upstream"]
            rc = pratio(o["cpu"], u["cpu"])
            rw = pratio(o["wall"], u["wall"])
            rt = pratio(o["tree"], u["tree"])
            m = met(rc <= GOAL_P5)
            lines.append(f"- ours/upstream: CPU {rc:.3f}, goal <= "
                         f"{GOAL_P5}: **{m}**; wall until exit {rw:.3f}, "
                         f"wall until the tree is gone {rt:.3f}.")
            self.row("P5 fresh PAM program", "ours / upstream CPU, whole "
                     "process tree", f"{rc:.3f}", f"<= {GOAL_P5}: {m}")
            self.row("P5 fresh PAM program", "ours / upstream wall (until "
                     "exit; until tree gone)", f"{rw:.3f}; {rt:.3f}",
                     "(information)")
        lines.append(f"- ours/bare: CPU {pratio(o['cpu'], b['cpu']):.3f}, "
                     f"wall {pratio(o['wall'], b['wall']):.3f}; ours - bare "
                     f"{fmt(median(o['cpu']) - median(b['cpu']))} us CPU "
                     "(information).")
        self.row("P5 fresh PAM program", "ours: helper processes per "
                 "program; ours / bare CPU",
                 f"{median(o['orphans']):.2f}; "
                 f"{pratio(o['cpu'], b['cpu']):.3f}", "(information)")
        self.sections.append((
            "P5: a fresh PAM program (one transaction), all its processes",
            f"`spawn -r {rounds} -n {per}` of `p2_txn -n 1` (pam_start + "
            "pam_authenticate + pam_acct_mgmt + pam_end through pam_matrix "
            "with a 3-line passdb, like pamtester).  spawn is a child "
            "subreaper and reaps every process the program or its wrapper "
            "leaves behind before the next sample: CPU is user+system time "
            "of the whole process tree (RUSAGE_CHILDREN once it is gone).  "
            "`bare` = pam_start_confdir (P2_TXN_CONFDIR) with our module, no "
            "wrapper, audit stubbed.", lines))

    # -- DI ----------------------------------------------------------------
    def deep_dir(self, name, passdb, outside, depth=1000):
        """SERVICE through pam_matrix, its password stack a chain of
        `depth` files each including the next by absolute path (libpam
        reads every group's lines at pam_start; from Linux-PAM 1.6 it stops
        at 16 levels and fails the password stack, which p2_txn never
        calls).  The chain is in the service directory, or (outside) in a
        directory of its own."""
        d = self.service_dir(name, self.ours_matrix, passdb)
        c = d + "-chain" if outside else d
        os.makedirs(c, exist_ok=True)
        with open(os.path.join(d, SERVICE), "a") as f:
            f.write(f"password include {c}/c1\n")
        for i in range(1, depth):
            with open(os.path.join(c, f"c{i}"), "w") as f:
                f.write(f"password include {c}/c{i + 1}\n")
        with open(os.path.join(c, f"c{depth}"), "w") as f:
            f.write("password required pam_permit.so\n")
        return d

    def deep(self):
        passdb = self.small_passdb()
        rounds, per = (2, 1) if self.a.smoke else (self.a.p5_rounds, 3)
        self.log(f"DI: 1,000 nested includes, {rounds} rounds x {per}")
        lines = ["| chain | variant | transactions | wall us | CPU us of the "
                 "whole tree | failures |", "|---|---|---|---|---|---|"]
        for outside in (False, True):
            where = "its own directory" if outside else "the service directory"
            tag = "o" if outside else "s"
            variants = [
                ("bare", {"LD_PRELOAD": self.noaudit, "P2_TXN_CONFDIR":
                          self.deep_dir("dib" + tag, passdb, outside)}),
                ("ours", self.wrap_env(self.ours_lib, self.deep_dir(
                    "dio" + tag, passdb, outside)))]
            for n in (1, 20):
                prog = [os.path.join(self.bin, "p2_txn"), "-n", str(n),
                        SERVICE, USER, PASSWORD]
                r = self.run_spawn(rounds, per, variants, prog)
                for name, _ in variants:
                    x = r[name]
                    lines.append(f"| {where} | {name} | {n} | "
                                 f"{spread(x['wall'])} | {spread(x['cpu'])} "
                                 f"| {x['fails']} |")
                    if x["fails"]:
                        self.smoke_failures.append(
                            f"DI {name}: {x['fails']} failures")
                rc = pratio(r["ours"]["cpu"], r["bare"]["cpu"])
                what = (f"chain in {where}, " +
                        ("a fresh process, 1 transaction" if n == 1 else
                         f"one process, {n} transactions"))
                # the goal is the includes' cost; in the service directory
                # the mirror of 1,000 more files comes on top
                goal = (f"<= {GOAL_DI:g}: {met(rc <= GOAL_DI)}" if outside
                        else "(information: with the mirror)")
                lines.append(f"- {what}: ours/bare CPU {rc:.2f} {goal}")
                self.row("DI 1,000 nested includes",
                         f"ours / bare CPU, {what}", f"{rc:.2f}", goal)
        self.sections.append((
            "DI: 1,000 nested includes",
            "`spawn` of `p2_txn -n 1` and `-n 20` on a service whose password "
            "stack is a chain of 1,000 files, each including the next by "
            "absolute path (bench.py deep_dir), the chain in the service "
            "directory or in a directory of its own.  CPU is user+system "
            "time of the whole process tree.  `bare` = pam_start_confdir "
            "with the same files.  Up to Linux-PAM 1.5 libpam reads all "
            "1,000 files at every pam_start, the wrapper copies them once "
            "per process; from 1.6 both stop at 16 levels.  Apart from the "
            "includes, a wrapped process mirrors every file of the service "
            "directory into its runtime directory once (what tests written "
            "for upstream read and add to): with the chain in the service "
            "directory that is 1,000 more files.", lines))

    # -- P4 --------------------------------------------------------------
    def p4_user(self):
        """(uid, gid, name) the P4 processes run as: RLIMIT_NPROC does not
        apply to root, so root runs them as --p4-user (nobody)."""
        if os.geteuid() != 0:
            return os.getuid(), os.getgid(), pwd.getpwuid(os.getuid())[0]
        pw = pwd.getpwnam(self.a.p4_user)
        return pw.pw_uid, pw.pw_gid, pw.pw_name

    def p4_one(self, name, env, n, timeout, uid, gid):
        full = self.base_env()
        full.update(env)
        drop = {}
        if os.geteuid() == 0:
            drop = {"user": uid, "group": gid, "extra_groups": []}
        # The limit: this user's tasks now + N + margin, never raised
        # beyond (a wrapper needing a helper process per wrapped process
        # runs out of processes).
        soft0, hard = resource.getrlimit(resource.RLIMIT_NPROC)
        base = tasks_of(uid)
        limit = base + n + GOAL_P4_MARGIN
        if hard != resource.RLIM_INFINITY and hard < limit:
            limit = hard
        resource.setrlimit(resource.RLIMIT_NPROC, (limit, hard))
        r, w = os.pipe()
        os.set_inheritable(r, True)
        errfile = os.path.join(self.work, f"p4.{name}.stderr")
        procs = []
        t0 = time.monotonic()
        spawn_err = 0
        try:
            with open(errfile, "w") as err:
                for _ in range(n):
                    try:
                        procs.append(subprocess.Popen(
                            [os.path.join(self.bin, "p2_txn"), "-b", str(r),
                             "-n", "1", SERVICE, USER, PASSWORD],
                            env=full, stdin=subprocess.DEVNULL,
                            stdout=subprocess.DEVNULL, stderr=err,
                            pass_fds=(r,), **drop))
                    except OSError as e:
                        spawn_err += 1
                        err.write(f"bench: spawn failed: {e}\n")
        finally:
            resource.setrlimit(resource.RLIMIT_NPROC, (soft0, hard))
        os.close(r)
        alive = sum(1 for p in procs if p.poll() is None)
        peak = tasks_of(uid) - base
        os.close(w)  # all processes start authenticating now
        t_go = time.monotonic()
        deadline = t_go + timeout
        codes = {}
        killed = 0
        for p in procs:
            left = deadline - time.monotonic()
            try:
                rc = p.wait(timeout=max(left, 0.01))
            except subprocess.TimeoutExpired:
                p.kill()
                rc = p.wait()
                killed += 1
                rc = "timeout"
            codes[rc] = codes.get(rc, 0) + 1
        if spawn_err:
            codes["spawn failed"] = spawn_err
        elapsed = time.monotonic() - t_go
        ok = codes.get(0, 0)
        # helper processes (orphans reparented to us), reaped as they end;
        # those still alive 10 s after the last exit are left behind
        helpers, done = reap_orphans(time.monotonic() + 10)
        stray = [] if done else live_children()
        for pid in stray:
            try:
                os.kill(pid, 9)
            except OSError:
                pass
        helpers += reap_orphans(time.monotonic() + 5)[0]
        with open(errfile) as f:
            errs = f.read().splitlines()
        # distinct error messages, pid numbers and paths masked
        kinds = {}
        for e in errs:
            key = re.sub(r"\(\d+\)", "(PID)", e)
            key = re.sub(r"/tmp/pam\.\S+", "/tmp/pam.X", key)
            key = re.sub(r"pam_wrapper\.\d+\.\S+", "pam_wrapper.X", key)
            kinds[key] = kinds.get(key, 0) + 1
        return {"n": n, "ok": ok, "fail": n - ok, "codes": codes,
                "killed": killed, "spawn_err": spawn_err, "limit": limit,
                "base": base, "peak": peak, "stray": len(stray),
                "helpers": helpers, "pids": {p.pid for p in procs},
                "alive_at_go": alive, "secs": elapsed, "t_spawn": t_go - t0,
                "errs": sorted(kinds.items(), key=lambda x: -x[1])[:6]}

    def p4(self):
        n = 20 if self.a.smoke else self.a.p4_n
        uid, gid, uname = self.p4_user()
        if uid != os.geteuid():
            os.chmod(self.work, 0o755)  # the service files and passdb
        passdb = self.small_passdb()
        ours_tmp = os.path.join(self.work, "p4tmp")
        os.makedirs(ours_tmp)
        os.chown(ours_tmp, uid, gid)
        ours_dir = self.service_dir("p4ours", self.ours_matrix, passdb)
        runs = [("ours", self.wrap_env(self.ours_lib, ours_dir, ours_tmp))]
        before = set(glob.glob("/tmp/pam.*"))
        if self.upstream:
            up_dir = self.service_dir("p4up", UPSTREAM_MATRIX, passdb)
            up_tmp = os.path.join(self.work, "p4tmp_up")
            os.makedirs(up_tmp)
            os.chown(up_tmp, uid, gid)
            runs.append(("upstream", self.wrap_env(UPSTREAM_LIB, up_dir,
                                                   up_tmp)))
        lines = ["| variant | processes | succeeded | failed | timed out | "
                 "RLIMIT_NPROC soft (user's tasks before + N + "
                 f"{GOAL_P4_MARGIN}) | user's extra tasks at the barrier | "
                 "helper processes reaped | processes left | "
                 "wall s (from barrier) | exit codes |",
                 "|---|---|---|---|---|---|---|---|---|---|---|"]
        res = {}
        for name, env in runs:
            self.log(f"P4: {n} concurrent {name} processes as {uname}")
            sub = set_subreaper(True)
            try:
                res[name] = x = self.p4_one(name, env, n, self.a.p4_timeout,
                                            uid, gid)
            finally:
                if sub:
                    set_subreaper(False)
            self.log(f"P4: {name}: RLIMIT_NPROC {x['limit']} ({x['base']} "
                     f"+ {n} + {GOAL_P4_MARGIN}), {x['ok']} of {n} "
                     "succeeded")
            codes = ", ".join(f"{k}: {v}" for k, v in
                              sorted(x["codes"].items(), key=str))
            lines.append(f"| {name} | {n} | {x['ok']} | {x['fail']} | "
                         f"{x['killed']} | {x['limit']} ({x['base']} + {n} "
                         f"+ {GOAL_P4_MARGIN}) | {x['peak']} | "
                         f"{x['helpers']} | {x['stray']} "
                         f"| {x['secs']:.1f} | {codes} |")
        # our runtime directories must all be gone
        left = []
        for _ in range(50):
            left = [e for e in os.listdir(ours_tmp)
                    if e.startswith("pam_wrapper")]
            if not left:
                break
            time.sleep(0.1)
        o = res["ours"]
        lines.append("")
        lines.append(f"ours: {len(left)} pam_wrapper* entries left in its "
                     f"TMPDIR and {o['stray']} processes left after all "
                     "processes exited.")
        if o["fail"] or left or o["stray"]:
            self.smoke_failures.append(
                f"P4 ours: {o['fail']} failures, {len(left)} runtime dirs "
                f"and {o['stray']} processes left")
        m = met(o["fail"] == 0 and not left and not o["stray"])
        self.row(f"P4 {n} concurrent", "ours: failures; dirs left; "
                 "processes left (RLIMIT_NPROC used)",
                 f"{o['fail']}; {len(left)}; {o['stray']} ({o['limit']})",
                 f"0; 0; 0: {m}")
        if "upstream" in res:
            u = res["upstream"]
            # upstream's directories (/tmp/pam.X with a pid file) left by
            # this run's processes; never another job's
            new = []
            for d in sorted(set(glob.glob("/tmp/pam.*")) - before):
                try:
                    with open(os.path.join(d, "pid")) as f:
                        if int(f.read().strip() or 0) in u["pids"]:
                            new.append(d)
                except (OSError, ValueError):
                    pass
            lines.append(f"upstream: {u['ok']} of {n} succeeded; "
                         f"{len(new)} /tmp/pam.* directories it left "
                         "(removed by the bench).")
            for path in new:
                shutil.rmtree(path, ignore_errors=True)
            self.row(f"P4 {n} concurrent", "upstream: succeeded",
                     f"{u['ok']}", "(reference: 62 expected)")
        for name in res:
            if res[name]["errs"]:
                lines.append("")
                lines.append(f"{name} stderr (distinct lines, count):")
                lines.append("")
                for e, c in res[name]["errs"]:
                    lines.append(f"    {c} x {e[:160]}")
        self.sections.append((
            f"P4: {n} concurrent wrapped processes",
            f"{n} `p2_txn -b FD -n 1` processes are started as {uname} "
            "(the wrapper's constructor runs, so each has its runtime "
            "state), all block on a pipe, then the pipe is closed and all "
            f"authenticate at once; each gets {self.a.p4_timeout:g} s before "
            "it is killed.  RLIMIT_NPROC's soft limit is set to the tasks "
            f"{uname} has before the run + N + {GOAL_P4_MARGIN}, so a "
            "wrapper that needs an extra process per wrapped process fails.  "
            "Extra tasks at the barrier: tasks of the user while all wait, "
            "minus those before.  The bench is a child subreaper during the "
            "run: helper processes are the orphans it reaped; processes "
            "left are those still alive 10 s after the last exit (then "
            "killed).", lines))

    # -- P7 (bench/p7_run.py, bench/p7_sshd.py) --------------------------
    def p7(self):
        import p7_run
        p7_run.run_p7(self, self.ours_lib, self.ours_matrix,
                       UPSTREAM_LIB if self.upstream else None,
                       UPSTREAM_MATRIX, os.path.join(self.bin, "p2_txn"))

    # -- SW: the sweep's cost per dead directory (bench/p7_sweep.py) -----
    def sweep(self):
        import p7_sweep
        p7_sweep.run_sw(self, self.ours_lib, self.ours_matrix,
                        os.path.join(self.bin, "p2_txn"))

    # -- report ----------------------------------------------------------
    def report(self, started):
        rev = subprocess.run(["git", "-C", os.path.dirname(self.a.build),
                              "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", os.path.dirname(self.a.build),
                                "status", "--porcelain", "src"],
                               capture_output=True, text=True).stdout.strip()
        load = open("/proc/loadavg").read().split()[:3]
        cmd = "bash bench/run.sh" + (" --smoke" if self.a.smoke else "") + \
            (f" --only {self.a.only}" if self.a.only else "")
        head = [f"# Benchmark results {started:%Y-%m-%d %H:%M}",
                "",
                f"Command: `{cmd}` at commit {rev}"
                f"{' (src/ modified)' if dirty else ''}; "
                f"{platform.node()}, {os.cpu_count()} CPUs, kernel "
                f"{platform.release()}; load average at start "
                f"{self.load0}, at end {' '.join(load)} (other jobs share "
                "this machine: medians and spreads below).",
                f"Upstream: {'Debian libpam-wrapper ' + self.upstream_version if self.upstream else 'not measured'}.",
                "", "## Summary", "",
                "| benchmark | measure | result | goal |", "|---|---|---|---|"]
        order = {"P1": 1, "P2": 2, "P3": 3, "P4": 4, "P5": 5, "P7": 7,
                 "SW": 8, "DI": 9}
        for b, m, v, g in sorted(self.rows,
                                 key=lambda x: order.get(x[0][:2], 9)):
            head.append(f"| {b} | {m} | {v} | {g} |")
        body = []
        for title, how, lines in self.sections:
            body += ["", f"## {title}", "", how, ""] + lines
        body += ["", "## Raw driver output", "", "```"]
        for r in self.raw:
            body += r.rstrip().splitlines()
        body += ["```", ""]
        return "\n".join(head + body)

    def main(self):
        started = datetime.datetime.now()
        self.load0 = " ".join(open("/proc/loadavg").read().split()[:3])
        self.upstream_version = subprocess.run(
            ["dpkg-query", "-W", "-f", "${Version}", "libpam-wrapper"],
            capture_output=True, text=True).stdout.strip() or "?"
        only = set(self.a.only.split(",")) if self.a.only else None
        steps = [("P1", self.p1), ("P2", self.p2), ("P3", self.p3),
                 ("P5", self.p5), ("P4", self.p4), ("P7", self.p7),
                 ("SW", self.sweep), ("DI", self.deep),
                 ("CG", self.p2_callgrind)]
        try:
            for name, fn in steps:
                if only and name not in only:
                    continue
                if name == "CG" and (self.a.smoke or self.a.no_callgrind):
                    continue
                try:
                    fn()
                except Exception as e:  # report what we have, and this
                    self.log(f"{name} failed: {e}")
                    self.row(name, "ERROR", str(e).splitlines()[0], "")
                    self.smoke_failures.append(f"{name}: {e}")
        finally:
            if not self.a.keep:
                shutil.rmtree(self.work, ignore_errors=True)
        text = self.report(started)
        if self.a.out:
            os.makedirs(os.path.dirname(os.path.abspath(self.a.out)),
                        exist_ok=True)
            with open(self.a.out, "w") as f:
                f.write(text)
            self.log(f"written {self.a.out}")
        # the summary table on stdout
        print("\n".join(l for l in text.split("\n## ")[1].splitlines()[2:]))
        if self.a.smoke and self.smoke_failures:
            print("smoke: FAILED: " + "; ".join(self.smoke_failures))
            return 1
        if self.a.smoke:
            print("smoke: all runs succeeded (timings are not checked)")
        return 0


def main():
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--build", required=True)
    ap.add_argument("--bin", required=True)
    ap.add_argument("--out")
    ap.add_argument("--smoke", action="store_true")
    ap.add_argument("--only", help="comma list of P1,P2,P3,P4,P5,P7,SW,CG")
    ap.add_argument("--no-callgrind", action="store_true")
    ap.add_argument("--keep", action="store_true",
                    help="keep the work directory")
    ap.add_argument("--p1-rounds", type=int, default=101)
    ap.add_argument("--p2-rounds", type=int, default=25)
    ap.add_argument("--p3-rounds", type=int, default=11)
    ap.add_argument("--p3-rep-rounds", type=int, default=5)
    ap.add_argument("--p4-n", type=int, default=1000)
    ap.add_argument("--p4-timeout", type=float, default=120)
    ap.add_argument("--p4-user", default="nobody",
                    help="when run as root, P4's processes and P7's sshd run "
                    "as this user (RLIMIT_NPROC does not apply to root; a "
                    "root sshd wants its privilege separation chroot)")
    ap.add_argument("--p5-rounds", type=int, default=101)
    ap.add_argument("--p7-rounds", type=int, default=21)
    ap.add_argument("--p7-logins", type=int, default=10,
                    help="password logins per sshd run")
    ap.add_argument("--p7-model-rounds", type=int, default=31)
    ap.add_argument("--sw-rounds", type=int, default=7)
    return Bench(ap.parse_args()).main()


if __name__ == "__main__":
    sys.exit(main())
