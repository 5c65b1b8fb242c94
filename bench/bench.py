# SPDX-License-Identifier: BSD-3-Clause
"""Runs benchmarks P1-P4 (and P2 under callgrind) side by side for our
libpam_wrapper.so/pam_matrix.so, Debian's libpam-wrapper 1.1.4 ("upstream")
and bare Linux-PAM pam_start_confdir, and writes a Markdown report.

Called by bench/run.sh, which installs the packages, builds our tree and the
C drivers (spawn, p2_txn, empty.so, noaudit.so) first; see doc/benchmarks.md.
Every variant runs in its own processes; variants are interleaved in rounds
so that load from other jobs on the machine hits them alike, and we report
medians with their spread, and ratios of medians (plus the median of the
per-round ratios, which pairs each round's variants).  Nothing here is a
pass/fail test: the goals are reported as met or not met, never asserted.
"""
import argparse
import datetime
import glob
import os
import platform
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


def median(xs):
    return statistics.median(xs) if xs else float("nan")


def fmt(x, digits=1):
    if x != x:  # NaN
        return "n/a"
    if abs(x) >= 100:
        return f"{x:,.0f}"
    return f"{x:.{digits}f}"


def spread(xs):
    """'median [min-max]' of a list."""
    if not xs:
        return "n/a"
    return f"{fmt(median(xs))} [{fmt(min(xs))}-{fmt(max(xs))}]"


def paired(a, b):
    """Per-round ratios a[i]/b[i]."""
    return [x / y for x, y in zip(a, b) if y > 0]


class Bench:
    def __init__(self, args):
        self.a = args
        self.bin = args.bin
        self.ours_lib = os.path.join(args.build, "lib", "libpam_wrapper.so")
        self.ours_matrix = os.path.join(args.build, "lib", "pam_wrapper",
                                        "pam_matrix.so")
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
        """variants: list of (name, {env}); returns {name: (wall[], cpu[], fails)}."""
        cmd = [os.path.join(self.bin, "spawn"), "-r", str(rounds), "-n",
               str(per), "-e", self.errlog]
        for name, env in variants:
            cmd += ["-V", name] + [f"{k}={v}" for k, v in env.items()]
        cmd += ["--"] + prog
        out = subprocess.run(cmd, check=True, capture_output=True,
                             text=True, env=self.base_env()).stdout
        self.raw.append("$ spawn ... -- " + " ".join(prog) + "\n" + out)
        res = {}
        for line in out.splitlines():
            f = line.split()
            if f[0] == "RAW":
                res.setdefault(f[1], [None, None, 0])[0] = \
                    [float(x) for x in f[2:]]
            elif f[0] == "RAWCPU":
                res.setdefault(f[1], [None, None, 0])[1] = \
                    [float(x) for x in f[2:]]
            elif f[0] == "RESULT":
                res[f[1]][2] = int(re.search(r"fails=(\d+)", line).group(1))
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
            w, c, fails = r[name]
            lines.append(f"| {name} | {spread(w)} | {spread(c)} | {fails} |")
            if fails:
                self.smoke_failures.append(f"P1 {name}: {fails} failures")
        we, ce = r["empty"][0], r["empty"][1]
        wo, co = r["ours"][0], r["ours"][1]
        pw, pc = median(paired(wo, we)), median(paired(co, ce))
        met = "met" if pw <= 1.05 else "NOT met"
        lines.append("")
        lines.append(f"ours/empty: wall {pw:.3f}, CPU {pc:.3f} (medians of "
                     f"the per-round ratios; ratios of the medians: wall "
                     f"{median(wo) / median(we):.3f}, CPU "
                     f"{median(co) / median(ce):.3f}).  Goal <= 1.05 "
                     f"(wall): **{met}**.")
        self.row("P1 /bin/true", "ours / empty preload (wall; CPU)",
                 f"{pw:.3f}; {pc:.3f}", f"<= 1.05: {met}")
        if self.upstream:
            wu, cu = r["upstream"][0], r["upstream"][1]
            lines.append(f"upstream/empty: wall {median(paired(wu, we)):.2f},"
                         f" CPU {median(paired(cu, ce)):.2f}; upstream pays "
                         f"{fmt(median(wu) - median(we))} us wall, "
                         f"{fmt(median(cu) - median(ce))} us CPU per process.")
            self.row("P1 /bin/true", "upstream / empty preload (wall; CPU)",
                     f"{median(paired(wu, we)):.3f}; "
                     f"{median(paired(cu, ce)):.3f}", "(reference)")
        self.sections.append(("P1: tax on a process that never uses PAM",
                              f"`spawn -r {rounds} -n {per}` running "
                              "`/bin/true`; per-process time of each round.",
                              lines))
        self.p1b(rounds, per, variants)

    def p1b(self, rounds, per, variants):
        """The same for a program that links libpam but runs no
        transaction: what the wrappers' set-up and clean-up cost a PAM
        process (part of P3 'once' and of every wrapped test program)."""
        v = list(variants)
        ours = dict(v[2][1])
        ours["PAM_WRAPPER_KEEP_DIR"] = "1"
        # the kept directories go to a TMPDIR of their own on the same file
        # system as ours' default, removed below: nothing is left behind
        shm = "/dev/shm" if os.access("/dev/shm", os.W_OK | os.X_OK) else None
        kept = tempfile.mkdtemp(prefix="pwrap-bench-kept.", dir=shm)
        ours["TMPDIR"] = kept
        v.insert(3, ("ours-keepdir", ours))
        rounds = max(3, rounds // 3)
        self.log(f"P1b: p2_txn -n 0, {rounds} rounds x {per} per variant")
        try:
            r = self.run_spawn(rounds, per, v,
                               [os.path.join(self.bin, "p2_txn"), "-n", "0",
                                SERVICE, USER, PASSWORD])
        finally:
            shutil.rmtree(kept, ignore_errors=True)
        lines = ["| variant | wall us/process median [min-max] | "
                 "CPU us/process median [min-max] |", "|---|---|---|"]
        for name, _ in v:
            lines.append(f"| {name} | {spread(r[name][0])} | "
                         f"{spread(r[name][1])} |")
        we, ce = r["empty"][0], r["empty"][1]
        lines.append("")
        for name, _ in v[2:]:
            w, c = r[name][0], r[name][1]
            lines.append(f"- {name} - empty: {fmt(median(w) - median(we))} us "
                         f"wall, {fmt(median(c) - median(ce))} us CPU per "
                         f"process (ratio {median(w) / median(we):.2f} wall, "
                         f"{median(c) / median(ce):.2f} CPU; median of "
                         f"per-round wall ratios "
                         f"{median(paired(w, we)):.2f}).")
        for name in ("ours", "upstream"):
            if name in r:
                self.row("P1b PAM-linked, no transaction",
                         f"{name} / empty preload (wall; CPU)",
                         f"{median(paired(r[name][0], we)):.2f}; "
                         f"{median(paired(r[name][1], ce)):.2f}",
                         "(no goal)" if name == "ours" else "(reference)")
        self.sections.append((
            "P1b: tax on a PAM-linked process that runs no transaction",
            f"`spawn -r {rounds} -n {per}` running `p2_txn -n 0` (links "
            "libpam, exits at once).  Our wrapper sets up its runtime "
            "directory in its constructor when the program links libpam "
            "(the cleanup watcher's start, mkdir of 4 directories, a copy of "
            "each service file) and removes it at exit; `ours-keepdir` "
            "(PAM_WRAPPER_KEEP_DIR=1, in a TMPDIR of its own on /dev/shm) "
            "skips the watcher and the removal.",
            lines))

    # -- P2 --------------------------------------------------------------
    def p2_variants(self, passdb):
        noaudit = os.path.join(self.bin, "noaudit.so")
        bare_dir = self.service_dir("p2bare", self.ours_matrix, passdb)
        ours_dir = self.service_dir("p2ours", self.ours_matrix, passdb)
        v = [("bare", {"LD_PRELOAD": noaudit}, ["-c", bare_dir]),
             ("ours", self.wrap_env(self.ours_lib, ours_dir), [])]
        if not self.a.smoke:
            v.append(("bare+audit", {}, ["-c", bare_dir]))
        if self.upstream:
            up_dir = self.service_dir("p2up", UPSTREAM_MATRIX, passdb)
            v.append(("upstream", self.wrap_env(UPSTREAM_LIB, up_dir), []))
            # Upstream's module without its wrapper: splits upstream's
            # figure into module and wrapper.
            v.append(("bare+upstream-matrix", {"LD_PRELOAD": noaudit},
                      ["-c", up_dir]))
        return v

    def small_passdb(self):
        p = os.path.join(self.work, "small.passdb")
        with open(p, "w") as f:
            f.write("alice:alicepw:other\n")
            f.write(f"{USER}:{PASSWORD}:{SERVICE}\n")
            f.write("bob:bobpw:bench\n")
        return p

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
        def pr(a, b):
            return median(paired(tps[a], tps[b]))

        ob = pr("ours", "bare")
        met = "met" if ob >= 0.90 else "NOT met"
        lines.append("")
        lines.append("Ratios are medians of the per-round ratios (each round "
                     "runs every variant back to back).")
        lines.append("")
        lines.append(f"- ours/bare throughput: {ob:.3f} (ratio of the "
                     f"medians {median(tps['ours']) / median(tps['bare']):.3f})"
                     f"; goal >= 0.90: **{met}**.")
        self.row("P2 transactions/s", "ours / bare pam_start_confdir",
                 f"{ob:.3f}", f">= 0.90: {met}")
        if self.upstream:
            lines.append(f"- ours/upstream: {pr('ours', 'upstream'):.3f}; "
                         f"upstream/bare+upstream-matrix (upstream wrapper's "
                         f"own tax): "
                         f"{pr('upstream', 'bare+upstream-matrix'):.3f}; "
                         f"bare+upstream-matrix/bare (module difference): "
                         f"{pr('bare+upstream-matrix', 'bare'):.3f}.")
            self.row("P2 transactions/s", "ours / upstream",
                     f"{pr('ours', 'upstream'):.3f}", "(higher is better)")
            self.row("P2 transactions/s", "upstream / bare+upstream-matrix",
                     f"{pr('upstream', 'bare+upstream-matrix'):.3f}",
                     "(upstream wrapper's own tax)")
        self.sections.append((
            "P2: in-process transactions/s",
            f"`p2_txn -t {secs}` per variant per round, {rounds} rounds "
            "interleaved; one transaction = pam_start(_confdir) + "
            "pam_authenticate + pam_acct_mgmt + pam_end through pam_matrix "
            "with a 3-line passdb.  `bare` is pam_start_confdir on the same "
            "service file with no wrapper but with kernel audit stubbed "
            "(bench/noaudit.c) as both wrappers do; `bare+audit` is plain "
            "Linux-PAM as root.", lines))
        self.p2_tps = tps

    def p2_callgrind(self):
        if shutil.which("valgrind") is None:
            self.log("P2 callgrind: valgrind not installed, skipped")
            return
        passdb = self.small_passdb()
        variants = [v for v in self.p2_variants(passdb)
                    if v[0] in ("bare", "ours", "upstream",
                                "bare+upstream-matrix")]
        n1, n2 = 20, 220
        self.log(f"P2 callgrind: {n1} and {n2} transactions per variant")
        irs = {}
        for name, env, extra in variants:
            tot = []
            for n in (n1, n2):
                out = os.path.join(self.work, f"cg.{name}.{n}")
                full = self.base_env()
                full.update(env)
                # %p: our wrapper forks its cleanup watcher, whose own dump
                # must not overwrite the process's
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
        r = irs["ours"] / irs["bare"]
        lines.append(f"ours/bare instructions: {r:.3f} "
                     f"(+{irs['ours'] - irs['bare']:,.0f} per transaction).")
        self.row("P2 callgrind", "ours / bare instructions per transaction",
                 f"{r:.3f}", "(lower is better; 1.0 = no tax)")
        if "upstream" in irs:
            lines.append(f"ours/upstream instructions: "
                         f"{irs['ours'] / irs['upstream']:.3f}.")
            self.row("P2 callgrind", "ours / upstream instructions",
                     f"{irs['ours'] / irs['upstream']:.3f}", "")
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
            if once[name][2]:
                self.smoke_failures.append(f"P3 once {name}: "
                                           f"{once[name][2]} failures")
        # repeated: K authentications in one process
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
                 "| variant | once: wall ms/process | once: CPU ms/process | "
                 "repeated: us/authenticate | repeated: us/transaction |",
                 "|---|---|---|---|---|"]
        for name, _ in variants:
            lines.append(f"| {name} | {spread([x / 1000 for x in once[name][0]])}"
                         f" | {spread([x / 1000 for x in once[name][1]])} | "
                         f"{spread(per_auth[name])} | {spread(per_tx[name])} |")
        self.row("P3 1M-line passdb" if lines_n == 1000000 else
                 f"P3 {lines_n}-line passdb", "ours: once ms (wall); "
                 "repeated us/authenticate",
                 f"{median(once['ours'][0]) / 1000:.2f}; "
                 f"{median(per_auth['ours']):.1f}", "")
        if self.upstream:
            ro = median(paired(once["upstream"][0], once["ours"][0]))
            roc = median(paired(once["upstream"][1], once["ours"][1]))
            rr = median(paired(per_auth["upstream"], per_auth["ours"]))
            m1 = "met" if ro >= 10 else "NOT met"
            m2 = "met" if rr >= 100 else "NOT met"
            lines.append("")
            lines.append("Ratios are medians of the per-round ratios.")
            lines.append("")
            lines.append(f"upstream/ours once: wall {ro:.2f}x, CPU {roc:.2f}x;"
                         f" goal >= 10x: **{m1}**.  upstream/ours repeated "
                         f"(per authenticate): {rr:.2f}x; goal >= 100x: "
                         f"**{m2}**.")
            self.row("P3 1M-line passdb", "upstream / ours, once (wall; CPU)",
                     f"{ro:.2f}x; {roc:.2f}x", f">= 10x: {m1}")
            self.row("P3 1M-line passdb", "upstream / ours, repeated",
                     f"{rr:.2f}x", f">= 100x: {m2}")
        self.sections.append((
            "P3: last user of a 1,000,000-line passdb",
            f"once: `spawn -r {rounds} -n {per}` of `p2_txn -A -n 1` (fresh "
            "process: start, pam_start, authenticate, end, exit).  repeated: "
            "`p2_txn -A -n K` (K transactions in one process), mean time "
            f"inside pam_authenticate, {reps} rounds.  Page cache warm.",
            lines))

    # -- P4 --------------------------------------------------------------
    def p4_one(self, name, env, n, timeout):
        passdb_env = self.base_env()
        passdb_env.update(env)
        r, w = os.pipe()
        os.set_inheritable(r, True)
        errfile = os.path.join(self.work, f"p4.{name}.stderr")
        procs = []
        t0 = time.monotonic()
        spawn_err = 0
        with open(errfile, "w") as err:
            for _ in range(n):
                try:
                    procs.append(subprocess.Popen(
                        [os.path.join(self.bin, "p2_txn"), "-b", str(r),
                         "-n", "1", SERVICE, USER, PASSWORD],
                        env=passdb_env, stdin=subprocess.DEVNULL,
                        stdout=subprocess.DEVNULL, stderr=err,
                        pass_fds=(r,)))
                except OSError as e:
                    spawn_err += 1
                    err.write(f"bench: spawn failed: {e}\n")
        os.close(r)
        alive = sum(1 for p in procs if p.poll() is None)
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
        elapsed = time.monotonic() - t_go
        ok = codes.get(0, 0)
        with open(errfile) as f:
            errs = f.read().splitlines()
        # distinct error messages, pid numbers and paths masked
        kinds = {}
        for e in errs:
            key = re.sub(r"\(\d+\)", "(PID)", e)
            key = re.sub(r"/tmp/pam\.\S+", "/tmp/pam.X", key)
            kinds[key] = kinds.get(key, 0) + 1
        return {"n": n, "ok": ok, "fail": n - ok, "codes": codes,
                "killed": killed, "spawn_err": spawn_err,
                "alive_at_go": alive, "secs": elapsed, "t_spawn": t_go - t0,
                "errs": sorted(kinds.items(), key=lambda x: -x[1])[:6]}

    def p4(self):
        n = 20 if self.a.smoke else self.a.p4_n
        # each of our wrapped processes has a watcher: 2 n processes of
        # this uid at once (root is not limited by RLIMIT_NPROC)
        soft, hard = resource.getrlimit(resource.RLIMIT_NPROC)
        if os.geteuid() != 0 and soft != resource.RLIM_INFINITY and \
                soft < 2 * n + 200:
            want = hard if hard == resource.RLIM_INFINITY else \
                min(hard, 2 * n + 200)
            resource.setrlimit(resource.RLIMIT_NPROC, (want, hard))
            self.log(f"P4: RLIMIT_NPROC raised from {soft} to {want}")
        passdb = self.small_passdb()
        ours_tmp = os.path.join(self.work, "p4tmp")
        os.makedirs(ours_tmp)
        ours_dir = self.service_dir("p4ours", self.ours_matrix, passdb)
        runs = [("ours", self.wrap_env(self.ours_lib, ours_dir, ours_tmp))]
        before = set(glob.glob("/tmp/pam.*"))
        if self.upstream:
            up_dir = self.service_dir("p4up", UPSTREAM_MATRIX, passdb)
            up_tmp = os.path.join(self.work, "p4tmp_up")
            os.makedirs(up_tmp)
            runs.append(("upstream", self.wrap_env(UPSTREAM_LIB, up_dir,
                                                   up_tmp)))
        lines = ["| variant | processes | succeeded | failed | timed out | "
                 "wall s (from barrier) | exit codes |",
                 "|---|---|---|---|---|---|---|"]
        res = {}
        for name, env in runs:
            self.log(f"P4: {n} concurrent {name} processes")
            res[name] = x = self.p4_one(name, env, n, self.a.p4_timeout)
            codes = ", ".join(f"{k}: {v}" for k, v in
                              sorted(x["codes"].items(), key=str))
            lines.append(f"| {name} | {n} | {x['ok']} | {x['fail']} | "
                         f"{x['killed']} | {x['secs']:.1f} | {codes} |")
        # our runtime directories must all be gone (the watcher may take a
        # moment after its process has exited)
        left = []
        for _ in range(50):
            left = [e for e in os.listdir(ours_tmp)
                    if e.startswith("pam_wrapper.")]
            if not left:
                break
            time.sleep(0.1)
        lines.append("")
        lines.append(f"ours: {len(left)} pam_wrapper.* entries left in its "
                     "TMPDIR after all processes exited.")
        if res["ours"]["fail"] or left:
            self.smoke_failures.append(
                f"P4 ours: {res['ours']['fail']} failures, {len(left)} "
                "runtime dirs left")
        met = "met" if res["ours"]["fail"] == 0 and not left else "NOT met"
        self.row(f"P4 {n} concurrent", "ours: failures; dirs left",
                 f"{res['ours']['fail']}; {len(left)}", f"0: {met}")
        if "upstream" in res:
            u = res["upstream"]
            new = sorted(set(glob.glob("/tmp/pam.*")) - before)
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
            f"{n} `p2_txn -b FD -n 1` processes are started (the wrapper's "
            "constructor runs, so each has its runtime state), all block on "
            "a pipe, then the pipe is closed and all authenticate at once; "
            f"each gets {self.a.p4_timeout} s before it is killed.  Run as "
            f"{'root' if os.geteuid() == 0 else 'uid ' + str(os.geteuid())}.",
            lines))

    # -- report ----------------------------------------------------------
    def report(self, started):
        rev = subprocess.run(["git", "-C", os.path.dirname(self.a.build),
                              "rev-parse", "--short", "HEAD"],
                             capture_output=True, text=True).stdout.strip()
        dirty = subprocess.run(["git", "-C", os.path.dirname(self.a.build),
                                "status", "--porcelain", "src"],
                               capture_output=True, text=True).stdout.strip()
        load = open("/proc/loadavg").read().split()[:3]
        head = [f"# Benchmark results {started:%Y-%m-%d %H:%M}",
                "",
                f"Command: `bash bench/run.sh{' --smoke' if self.a.smoke else ''}`"
                f" at commit {rev}{' (src/ modified)' if dirty else ''}; "
                f"{platform.node()}, {os.cpu_count()} CPUs, kernel "
                f"{platform.release()}; load average at start "
                f"{self.load0}, at end {' '.join(load)} (other jobs share "
                "this machine: medians and spreads below).",
                f"Upstream: {'Debian libpam-wrapper ' + self.upstream_version if self.upstream else 'not measured'}.",
                "", "## Summary", "",
                "| benchmark | measure | result | goal |", "|---|---|---|---|"]
        for b, m, v, g in self.rows:
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
                 ("P4", self.p4), ("CG", self.p2_callgrind)]
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
    ap.add_argument("--only", help="comma list of P1,P2,P3,P4,CG")
    ap.add_argument("--no-callgrind", action="store_true")
    ap.add_argument("--keep", action="store_true",
                    help="keep the work directory")
    ap.add_argument("--p1-rounds", type=int, default=101)
    ap.add_argument("--p2-rounds", type=int, default=25)
    ap.add_argument("--p3-rounds", type=int, default=11)
    ap.add_argument("--p3-rep-rounds", type=int, default=5)
    ap.add_argument("--p4-n", type=int, default=1000)
    ap.add_argument("--p4-timeout", type=float, default=120)
    return Bench(ap.parse_args()).main()


if __name__ == "__main__":
    sys.exit(main())
