# SPDX-License-Identifier: BSD-3-Clause
"""SW: what the sweep costs a process that finds unused runtime
directories at start (issue 30, item 4).

A wrapped process that makes its runtime directory also removes the
unused ones of its user in that base (left by processes that ended with
_exit, exec or a kill: sshd leaves one per connection).  Here K such
directories wait in a private base, made as copies of a real one (a
`p2_txn -n 1` run with PAM_WRAPPER_KEEP_DIR=1, renamed: .lock, services/
and conf/ with the service files), then one fresh wrapped `p2_txn -n 0`
(a PAM program that runs no transaction) starts, sweeps and exits.  Its
CPU time (user+system, wait4) against K gives the cost per dead directory
and what one start pays for a large backlog; the directories still there
afterwards show how many one start removed.  K values and bases
(/dev/shm, and the disk the bench's work directory is on) are interleaved
in rounds.  Used by bench.py (Bench.sweep); see doc/benchmarks.md.
"""
import os
import re
import secrets
import shutil
import string
import subprocess
import sys
import tempfile
import time

ALNUM = string.ascii_letters + string.digits


def run_sw(b, ours_lib, ours_matrix, p2_txn):
    h = sys.modules[type(b).__module__]     # bench.py's helpers
    fmt, median = h.fmt, h.median
    b.log("SW: the sweep's cost per dead directory")
    smoke = b.a.smoke
    ks = [0, 8] if smoke else [0, 8, 100, 1000]
    rounds, reps = (2, 1) if smoke else (b.a.sw_rounds, 5)
    passdb = b.small_passdb()
    svc = b.service_dir("swsvc", ours_matrix, passdb)
    bases = [("disk", os.path.join(b.work, "swdisk"))]
    shm = None
    if os.path.isdir("/dev/shm"):
        shm = tempfile.mkdtemp(prefix="pwrap-bench-sw.", dir="/dev/shm")
        bases.insert(0, ("/dev/shm", shm))
    try:
        res = {}
        for label, base in bases:
            os.makedirs(base, exist_ok=True)
            template = make_template(b, base, ours_lib, svc, p2_txn)
            res[label] = measure(b, base, template, ours_lib, svc, p2_txn,
                                 ks, rounds, reps)
    finally:
        if shm:
            shutil.rmtree(shm, ignore_errors=True)
    lines = ["| base | dead directories K | CPU us of the start (median "
             "[min-max]) | removed by it (median) | CPU us per removed "
             "directory |", "|---|---|---|---|---|"]
    def per_removed(x, none):
        """Median over rounds of (CPU(K) - CPU(0)) / removed, paired by
        round."""
        return median([(a - z) / q for a, z, q in
                       zip(x["cpu"], none["cpu"], x["removed"]) if q])

    for label, r in res.items():
        c0 = median(r[0]["cpu"])
        for k in ks:
            x = r[k]
            lines.append(f"| {label} | {k} | {h.spread(x['cpu'])} | "
                         f"{fmt(median(x['removed']), 1)} | "
                         f"{fmt(per_removed(x, r[0])) if k else '-'} |")
        big = r[ks[-1]]
        b.row("SW sweep at start", f"{label}: CPU us per removed directory; "
              f"a start next to {ks[-1]} dead: removed, CPU ms (none: "
              f"{c0 / 1000:.2f})",
              f"{fmt(per_removed(r[ks[1]], r[0]))}; "
              f"{fmt(median(big['removed']), 1)}, "
              f"{median(big['cpu']) / 1000:.2f}", "(information)")
    b.sections.append((
        "SW: the sweep's cost per dead directory",
        f"{rounds} rounds x {reps} starts per K; before each start exactly "
        "K dead runtime directories wait in a private base (copies of a "
        "real one: .lock, services/ and conf/ with two files each), then "
        "one wrapped `p2_txn -n 0` starts there (it makes its own "
        "directory, sweeps, exits and removes its own); CPU is that "
        "process's user+system time, mean of the starts of a round.  Per "
        "removed directory: (CPU(K) - CPU(0)) / removed, median over "
        "rounds.  See bench/p7_sweep.py.", lines))


def wrap_env(b, lib, svc, base):
    env = b.base_env()
    env.update({"LD_PRELOAD": lib, "PAM_WRAPPER": "1",
                "PAM_WRAPPER_SERVICE_DIR": svc, "TMPDIR": base})
    return env


def make_template(b, base, lib, svc, p2_txn):
    """A real runtime directory as a dead process leaves it: one kept by
    a p2_txn -n 1 run (PAM_WRAPPER_KEEP_DIR=1), moved out of the base."""
    env = wrap_env(b, lib, svc, base)
    env["PAM_WRAPPER_KEEP_DIR"] = "1"
    subprocess.run([p2_txn, "-n", "1", h_service(b), "bench", "secret"],
                   env=env, check=True, stdout=subprocess.DEVNULL,
                   stderr=subprocess.DEVNULL)
    kept = [e for e in os.listdir(base) if e.startswith("pam_wrapper_kept.")]
    if len(kept) != 1:
        raise RuntimeError(f"SW: expected one kept directory in {base}, "
                           f"found {kept}")
    template = os.path.join(os.path.dirname(base),
                            os.path.basename(base) + ".template")
    os.rename(os.path.join(base, kept[0]), template)
    return template


def h_service(b):
    return sys.modules[type(b).__module__].SERVICE


def dead_dirs(base, template, k):
    for _ in range(k):
        name = (f"pam_wrapper.{secrets.randbelow(4000000) + 1000000}."
                + "".join(secrets.choice(ALNUM) for _ in range(6)))
        shutil.copytree(template, os.path.join(base, name), symlinks=True)


def count_dead(base):
    return sum(1 for e in os.listdir(base)
               if re.fullmatch(r"pam_wrapper\.\d+\.\w+", e))


def measure(b, base, template, lib, svc, p2_txn, ks, rounds, reps):
    """Per K: rounds x reps starts, each with exactly K dead directories
    waiting (topped up before each start, not timed)."""
    env = wrap_env(b, lib, svc, base)
    res = {k: {"cpu": [], "wall": [], "removed": []} for k in ks}
    for r in range(rounds):
        for j in range(len(ks)):
            k = ks[(j + r) % len(ks)]
            cpu = wall = removed = 0.0
            for _ in range(reps):
                have = count_dead(base)
                if have > k:
                    for e in os.listdir(base):
                        shutil.rmtree(os.path.join(base, e),
                                      ignore_errors=True)
                    have = 0
                dead_dirs(base, template, k - have)
                t0 = time.monotonic()
                pid = os.posix_spawn(p2_txn, [p2_txn, "-n", "0",
                                              h_service(b), "bench",
                                              "secret"], env)
                _, st, ru = os.wait4(pid, 0)
                wall += time.monotonic() - t0
                if st != 0:
                    raise RuntimeError(f"SW: p2_txn -n 0 failed ({st})")
                cpu += ru.ru_utime + ru.ru_stime
                removed += k - count_dead(base)
            res[k]["cpu"].append(cpu / reps * 1e6)
            res[k]["wall"].append(wall / reps * 1e6)
            res[k]["removed"].append(removed / reps)
    for e in os.listdir(base):
        shutil.rmtree(os.path.join(base, e), ignore_errors=True)
    shutil.rmtree(template, ignore_errors=True)
    return res
