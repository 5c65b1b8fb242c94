#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""P6, the stack explorer (pamtest explore, pamtest-explore(1)): wall time
per stack, for Debian 12's own stacks read with --system (all four groups
each) and for a generated 200-line stack, with the number of paths through
each stack, the states and edges the search needed and the libpam replays
that checked the graph.  Goal: Debian's stacks under 1 s each.  There is
no upstream counterpart, so the figures are absolute (median of --rounds
runs, each a whole `pamtest explore` process: start, the search, the
replays, the output).

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


def run(pamtest, args, rounds):
    times, data = [], None
    for _ in range(rounds):
        t0 = time.monotonic()
        p = subprocess.run([pamtest, "explore", *args, "-f", "json"],
                           capture_output=True, text=True, timeout=600)
        times.append(time.monotonic() - t0)
        if p.returncode not in (0, 1):
            raise RuntimeError("pamtest explore %s: %s" % (" ".join(args), p.stderr))
        data = json.loads(p.stdout)
    for o in data:
        if o["disagreement"] is not None:
            raise RuntimeError("libpam disagrees: %s" % o["disagreement"])
    return statistics.median(times), data


def row(name, secs, data, goal):
    paths = sum(o.get("paths_total", 0) for o in data)
    states = sum(o["states"] for o in data)
    edges = sum(o["edges"] for o in data)
    replays = sum(o["replays"] for o in data)
    kinds = sorted({f["kind"] for o in data for f in o["findings"]})
    ok = "" if goal is None else ("met" if secs < goal else "NOT met")
    return "| %s | %.3f | %.4g | %d | %d | %d | %s | %s |" % (
        name, secs, paths, states, edges, replays, ", ".join(kinds) or "none", ok)


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
             "libpam replays | findings | < 1 s |",
             "|---|---|---|---|---|---|---|---|"]
    worst = 0.0
    for s in DEBIAN:
        if not os.path.exists(os.path.join("/etc/pam.d", s)):
            lines.append("| %s | (not installed) | | | | | | |" % s)
            continue
        secs, data = run(a.pamtest, ["--system", s], rounds)
        worst = max(worst, secs)
        lines.append(row("--system " + s, secs, data, GOAL_S))
    d = tempfile.mkdtemp(prefix="explore-bench.")
    try:
        name = generated_stack(d)
        secs, data = run(a.pamtest, ["-d", d, name], rounds)
        lines.append(row("generated, 200 lines", secs, data, None))
        secs, data = run(a.pamtest, ["-d", d, name, "--no-replay"], rounds)
        lines.append(row("generated, 200 lines, --no-replay", secs, data, None))
        secs, data = run(a.pamtest, ["-d", d, name, "--replay-all"], rounds)
        lines.append(row("generated, 200 lines, --replay-all", secs, data, None))
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
