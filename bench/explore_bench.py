#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""P6, the stack explorer (pamtest explore, pamtest-explore(1)): wall time
per stack, for Debian 12's own stacks read with --system (all four groups
each), a generated 200-line stack, long stacks (200 and 1,000 `required`
lines, 1,000 substacks of a two-line file: issue 35) and a 5 MB service
file, with the number of paths through each stack, the states and edges
the search needed, the libpam replays that checked the graph, the size of
the JSON and the process's peak memory.  Goal: Debian's stacks under 1 s
each.  There is no upstream counterpart, so the figures are absolute
(median of --rounds runs, each a whole `pamtest explore` process: start,
the search, the replays, the output; the 5 MB file once).

    python3 bench/explore_bench.py --pamtest build-bench/bin/pamtest [--out FILE]
    python3 bench/explore_bench.py --pamtest ... --smoke     (1 round, writes nothing)
"""
import argparse
import json
import os
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time

DEBIAN = ["login", "sshd", "su", "sudo", "passwd", "common-auth",
          "common-account", "common-password", "common-session"]
GOAL_S = 1.0


def generated_stack(d, lines=200, seed=6):
    """A 200-line service of the shapes real stacks have: pam-auth-update
    style blocks (jumps over a pam_deny/pam_permit pair), plain required,
    requisite, sufficient and optional lines, substacks and includes of
    small files, spread over the four groups."""
    rng = random.Random(seed)
    mods = ["pam_unix.so", "pam_env.so", "pam_limits.so", "pam_echo.so x",
            "pam_warn.so", "pam_localuser.so", "pam_nologin.so",
            "pam_succeed_if.so uid >= 1000", "pam_time.so", "pam_access.so"]
    groups = ["auth", "account", "password", "session"]
    out, n_inc = [], 0
    while len(out) < lines:
        g = rng.choice(groups)
        r = rng.random()
        if r < 0.2:
            k = rng.randint(1, 3)
            for i in range(k):
                out.append("%s [success=%d default=ignore] %s" % (g, k - i, rng.choice(mods)))
            out += ["%s requisite pam_deny.so" % g, "%s required pam_permit.so" % g]
        elif r < 0.28:
            n_inc += 1
            name = "inc%d" % n_inc
            with open(os.path.join(d, name), "w") as f:
                for _ in range(4):
                    f.write("%s %s %s\n" % (g, rng.choice(["required", "optional",
                                                            "[success=ok default=bad]"]),
                                            rng.choice(mods)))
            out.append("%s %s %s" % (g, rng.choice(["include", "substack"]), name))
        else:
            out.append("%s %s %s" % (g, rng.choice(["required", "requisite", "optional",
                                                     "sufficient", "[default=ignore success=ok]"]),
                                     rng.choice(mods)))
    with open(os.path.join(d, "gen200"), "w") as f:
        f.write("\n".join(out[:lines]) + "\n")
    return "gen200"


# GNU time's %M: the peak RSS of pamtest explore (the larger of it and its
# replaying child).  Not through this process's wait4(): a child forked
# from Python starts with Python's resident size as its peak.
GNU_TIME = "/usr/bin/time"


def run_once(pamtest, args):
    """One `pamtest explore ARGS -f json`: (seconds, exit status, JSON
    text, peak RSS in MiB or None, stderr).  The JSON goes to a file (it
    can be large)."""
    argv = [pamtest, "explore", *args, "-f", "json"]
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, \
            tempfile.NamedTemporaryFile(mode="r") as rss:
        if os.access(GNU_TIME, os.X_OK):
            argv = [GNU_TIME, "-q", "-f", "%M", "-o", rss.name, *argv]
        t0 = time.monotonic()
        rc = subprocess.run(argv, stdout=out, stderr=err, timeout=900).returncode
        secs = time.monotonic() - t0
        out.seek(0)
        err.seek(0)
        kib = rss.read().strip().splitlines()
        return (secs, rc, out.read(), int(kib[-1]) / 1024.0 if kib else None,
                err.read().decode(errors="replace"))


def run(pamtest, args, rounds):
    times, data, size, rss = [], None, 0, 0.0
    for _ in range(rounds):
        secs, rc, text, peak, err = run_once(pamtest, args)
        times.append(secs)
        if rc not in (0, 1):
            raise RuntimeError("pamtest explore %s: %s" % (" ".join(args), err))
        data = json.loads(text)
        data = data if isinstance(data, list) else [data]
        size = len(text)
        rss = None if peak is None or rss is None else max(rss, peak)
    for o in data:
        if o["disagreement"] is not None:
            raise RuntimeError("libpam disagrees: %s" % o["disagreement"])
    return statistics.median(times), data, size, rss


def row(name, result, goal):
    secs, data, size, rss = result
    # paths_total is a string beyond 2^53: the sum from the logarithms
    paths = sum(10 ** o["paths_log10"] if o["paths_log10"] < 300 else float("inf")
                for o in data)
    log10 = max(o["paths_log10"] for o in data)
    states = sum(o["states"] for o in data)
    edges = sum(o["edges"] for o in data)
    replays = sum(o["replays"] for o in data)
    replayed = all(o["replayed"] for o in data)
    kinds = sorted({f["kind"] for o in data for f in o["findings"]})
    ok = "" if goal is None else ("met" if secs < goal else "NOT met")
    return "| %s | %.3f | %s | %d | %d | %s | %s | %s | %s | %s |" % (
        name, secs, "%.4g" % paths if paths != float("inf") else "10^%.0f" % log10,
        states, edges, replays if replayed else "%d (not replayed)" % replays,
        "{:,}".format(size), "n/a" if rss is None else "%.1f" % rss,
        ", ".join(kinds) or "none", ok)


def long_stacks(d):
    """Issue 35's long stacks: (row name, explore arguments)."""
    line = "auth required pam_unix.so\n"
    for n in (200, 1000):
        with open(os.path.join(d, "required%d" % n), "w") as f:
            f.write(line * n)
    with open(os.path.join(d, "substack1000"), "w") as f:
        f.write("auth substack inc\n" * 1000)
    with open(os.path.join(d, "inc"), "w") as f:
        f.write("auth required pam_unix.so\nauth sufficient pam_permit.so\n")
    with open(os.path.join(d, "big"), "w") as f:
        f.write(line * (5000000 // len(line)))
    return [("200 `required` lines, auth", ["-d", d, "required200", "-t", "auth"]),
            ("1,000 `required` lines, auth", ["-d", d, "required1000", "-t", "auth"]),
            ("1,000 substacks of 2 lines, auth", ["-d", d, "substack1000", "-t", "auth"]),
            ("5 MB file (192,307 lines), all groups, 1 round", ["-d", d, "big"])]


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--pamtest", required=True)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--out")
    ap.add_argument("--smoke", action="store_true")
    a = ap.parse_args()
    rounds = 1 if a.smoke else a.rounds
    lines = ["# P6: pamtest explore", "",
             "%s, %d rounds per stack (median), %s" % (
                 time.strftime("%Y-%m-%d"), rounds, os.uname().machine), "",
             "| stack (all four groups) | seconds | paths | states | edges | "
             "libpam replays | JSON bytes | peak MiB | findings | < 1 s |",
             "|---|---|---|---|---|---|---|---|---|---|"]
    worst = 0.0
    for s in DEBIAN:
        if not os.path.exists(os.path.join("/etc/pam.d", s)):
            lines.append("| %s | (not installed) | | | | | | | | |" % s)
            continue
        result = run(a.pamtest, ["--system", s], rounds)
        worst = max(worst, result[0])
        lines.append(row("--system " + s, result, GOAL_S))
    d = tempfile.mkdtemp(prefix="explore-bench.")
    try:
        name = generated_stack(d)
        lines.append(row("generated, 200 lines", run(a.pamtest, ["-d", d, name], rounds), None))
        lines.append(row("generated, 200 lines, --no-replay",
                         run(a.pamtest, ["-d", d, name, "--no-replay"], rounds), None))
        lines.append(row("generated, 200 lines, --replay-all",
                         run(a.pamtest, ["-d", d, name, "--replay-all"], rounds), None))
        for title, args in long_stacks(d):
            lines.append(row(title, run(a.pamtest, args, 1 if "big" in args else rounds),
                             None))
    finally:
        shutil.rmtree(d, ignore_errors=True)
    lines += ["", "Debian's stacks: slowest %.3f s, goal < %.1f s: %s" % (
        worst, GOAL_S, "met" if worst < GOAL_S else "NOT met")]
    text = "\n".join(lines) + "\n"
    sys.stdout.write(text)
    if a.out and not a.smoke:
        with open(a.out, "w") as f:
            f.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
