# SPDX-License-Identifier: BSD-3-Clause
"""P7's run and report (the sshd machinery is bench/p7_sshd.py): the
interleaved rounds, the per-login counts, and the model of one connection
(the wrapper's share of it, where sshd's own 80 ms do not drown it).

Used by bench.py (Bench.p7); see doc/benchmarks.md.
"""
import os
import shutil
import sys

from p7_sshd import (PASSWORD, SshdBench, cpu_of, missing,
                     remove_upstream_dirs)

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
    extra = (median(o["cpu"]) - median(f["cpu"])) * 1e3
    lines.append(f"- ours/floor (no PAM): CPU {oc:.3f}, wall {ow:.3f}; ours "
                 f"- floor {fmt(extra, 2)} ms CPU per login (information).")
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
        "the same sshd with `UsePAM no` (the floor).  See "
        "bench/p7_run.py and bench/p7_sshd.py.",
        lines))
