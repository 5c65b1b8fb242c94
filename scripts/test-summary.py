#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
"""The summary at the end of scripts/test.sh: per phase (build), whether it
passed, failed or did not run, how many ctest tests and how many cmocka and
pytest cases inside them passed, failed and were skipped, and the skip
reasons grouped.

Usage: test-summary.py RESULTS_DIR

RESULTS_DIR (written by scripts/test.sh) holds
  phases              one line per phase: name TAB title TAB passed|failed
                      TAB its wall time in seconds
  NAME.notrun         why phase NAME did not run (then it has no logs)
  NAME.note           lines to show under the phase (what it ran, and why)
  NAME.K.console      ctest's console output of the phase's K-th ctest run
  NAME.K.log          that run's Testing/Temporary/LastTest*.log (or
                      LastDynamicAnalysis*.log): every test's output

Only ctest's and the suites' own formats are read, so any test added later is
counted without a change here:
  ctest:  "N/M Test #K: name ....   Passed|***Failed|***Skipped ..." lines;
          a test skipped by its SKIP_RETURN_CODE: the last line it printed
          is its reason;
  cmocka: "[  PASSED  ] N test(s)." and the like; a skipped case's reason is
          the last line it printed between "[ RUN      ]" and "[  SKIPPED ]"
          (print_message("skipped: REASON\\n") before skip());
  pytest: its final "N passed, M skipped in Xs" line and its -rs lines
          "SKIPPED [N] file:line: REASON" (test.sh sets PYTEST_ADDOPTS=-rs).
"""
import collections
import glob
import os
import re
import sys

CTEST_LINE = re.compile(
    r"^\s*\d+/\d+\s+(?:Test|MemCheck)\s+#\d+:\s+(\S+)\s+\.*\s*(?:\*\*\*)?"
    r"(.*?)\s+[\d.]+\s+sec\s*$")
LOG_TEST = re.compile(r"^\d+/\d+ Testing: (\S+)\s*$")
# (cmocka 1.1.7, Debian 13, names the group: "[  SKIPPED ] tests: 5 test(s)")
CM_COUNT = re.compile(r"^\[  (PASSED|FAILED|SKIPPED) +\] (?:\S+: )?(\d+) test\(s\)")
CM_RUN = re.compile(r"^\[ RUN      \] (\S+)")
CM_END = re.compile(r"^\[ +(OK|FAILED|SKIPPED|ERROR) +\] (\S+)\s*$")
PY_FINAL = re.compile(
    r"^(?:=+ )?((?:\d+ [a-z]+)(?:, \d+ [a-z]+)*) in [\d.]+s(?: \([^)]*\))?(?: =+)?$")
PY_SKIP_RS = re.compile(r"^SKIPPED \[(\d+)\] (.*?):(\d+): (.*)$")
PY_SKIP_V = re.compile(r"::\S+ SKIPPED(?: \((.*)\))?")
KINDS = ("ctest", "cmocka", "pytest")


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


def reason_of(lines):
    """The last printed line, as a skip reason."""
    for line in reversed(lines):
        line = line.strip()
        if line and not line.startswith("["):
            return re.sub(r"^(#\s*)?(skipped|skip|SKIP)\s*:\s*", "", line) or line
    return "(no reason printed)"


def test_outputs(log):
    """{ctest test name: its output lines} from a LastTest*.log."""
    out, name, capture = {}, None, False
    lines = log.splitlines()
    for i, line in enumerate(lines):
        m = LOG_TEST.match(line)
        if m:
            name, capture = m.group(1), False
            out.setdefault(name, [])
        elif name and line == "Output:" and i + 1 < len(lines) and lines[i + 1].startswith("---"):
            capture = None        # starts after the dashes
        elif capture is None:
            capture = True
        elif line == "<end of output>":
            capture = False
        elif capture and name:
            out[name].append(line)
    return out


class Phase:
    def __init__(self):
        self.counts = {k: collections.Counter() for k in KINDS}
        # (kind, reason) -> [count, [ctest test names]]
        self.skips = collections.OrderedDict()
        self.failed = []
        self.memcheck = []

    def skip(self, kind, reason, test, n=1):
        entry = self.skips.setdefault((kind, reason), [0, []])
        entry[0] += n
        if test not in entry[1]:
            entry[1].append(test)

    def add_run(self, console, log):
        outputs = test_outputs(log)
        for line in console.splitlines():
            m = CTEST_LINE.match(line)
            if m:
                self.add_test(m.group(1), m.group(2), outputs.get(m.group(1), []))
        mem = re.search(r"^Memory checking results:\n((?:.+\n?)*)", console, re.M)
        if mem:
            self.memcheck += [l.strip() for l in mem.group(1).splitlines()
                              if re.match(r"^\s*[A-Z][A-Za-z ]+ - \d+\s*$", l)]

    def add_test(self, name, status, output):
        if status == "Passed":
            self.counts["ctest"]["passed"] += 1
        elif status.startswith("Skipped") or "Disabled" in status:
            self.counts["ctest"]["skipped"] += 1
            why = "disabled" if "Disabled" in status else reason_of(output)
            self.skip("ctest", why, name)
        else:
            self.counts["ctest"]["failed"] += 1
            self.failed.append("%s (%s)" % (name, status))
        self.add_cmocka(name, output)
        self.add_pytest(name, output)

    def add_cmocka(self, name, output):
        case, since = None, []
        for line in output:
            m = CM_COUNT.match(line)
            if m:
                self.counts["cmocka"][m.group(1).lower()] += int(m.group(2))
                continue
            m = CM_RUN.match(line)
            if m:
                case, since = m.group(1), []
                continue
            m = CM_END.match(line)
            if m and m.group(2) == case:
                if m.group(1) == "SKIPPED":
                    self.skip("cmocka", reason_of(since), name)
                case = None
                continue
            if case:
                since.append(line)

    def add_pytest(self, name, output):
        rs = False
        for line in output:
            m = PY_FINAL.match(line.strip())
            if m:
                for part in m.group(1).split(", "):
                    n, what = part.split(" ", 1)
                    if what in ("passed", "skipped", "failed"):
                        self.counts["pytest"][what] += int(n)
                    elif what in ("error", "errors", "xpassed"):
                        self.counts["pytest"]["failed"] += int(n)
                continue
            m = PY_SKIP_RS.match(line)
            if m:
                rs = True
                self.skip("pytest", m.group(4), name, int(m.group(1)))
        if not rs:
            for line in output:
                m = PY_SKIP_V.search(line)
                if m:
                    self.skip("pytest", m.group(1) or "(reason not shown: run without -rs)", name)


def names(tests):
    """test, test.nobody -> test (+.nobody)"""
    out = []
    for t in tests:
        if t.endswith(".nobody") and t[:-7] in tests:
            continue
        out.append(t + (" (+.nobody)" if t + ".nobody" in tests else ""))
    text = ", ".join(out[:4])
    return text + (", +%d more" % (len(out) - 4) if len(out) > 4 else "")


def main():
    res = sys.argv[1]
    phases = []
    if os.path.exists(os.path.join(res, "phases")):
        for line in read(os.path.join(res, "phases")).splitlines():
            if line.strip():
                phases.append((line.split("\t") + ["0"])[:4])
    head = "%-34s %-8s %6s" % ("phase", "result", "time") + "".join(
        "  %-19s" % k for k in ("ctest tests", "cmocka cases", "pytest cases"))
    sub = "%-34s %-8s %6s" % ("", "", "") + " %5s %5s %5s   " % ("pass", "fail", "skip") * 3
    print("== summary (tests passed / failed / skipped per phase) ==")
    print(head.rstrip())
    print(sub.rstrip())
    details = []
    bad = []
    total = 0
    for name, title, status, secs in phases:
        total += int(secs)
        took = "%dm%02ds" % divmod(int(secs), 60)
        notrun = os.path.join(res, name + ".notrun")
        if os.path.exists(notrun):
            print("%-34s %-8s %6s %s" % (title[:34], "not run", took,
                                         read(notrun).strip()))
            continue
        ph = Phase()
        for console in sorted(glob.glob(os.path.join(res, name + ".*.console"))):
            log = console[:-len(".console")] + ".log"
            ph.add_run(read(console), read(log) if os.path.exists(log) else "")
        cells = ""
        for k in KINDS:
            c = ph.counts[k]
            cells += " %5d %5d %5d   " % (c["passed"], c["failed"], c["skipped"])
        print(("%-34s %-8s %6s" % (title[:34], status, took) + cells).rstrip())
        if status != "passed":
            bad.append(title)
        lines = []
        note = os.path.join(res, name + ".note")
        if os.path.exists(note):
            lines += ["  " + l for l in read(note).strip().splitlines()]
        if status != "passed" and not ph.failed:
            lines.append("  failed before or outside its tests (see its output above)")
        for f in ph.failed:
            lines.append("  FAILED: " + f)
        for m in ph.memcheck:
            lines.append("  memcheck: " + m)
        for (kind, reason), (n, tests) in ph.skips.items():
            lines.append("  skipped %4d %-6s %s  [%s]" % (n, kind, reason, names(tests)))
        if lines:
            details.append((title, lines))
    print("%-34s %-8s %6s" % ("all phases", "", "%dm%02ds" % divmod(total, 60)))
    for title, lines in details:
        print("-- %s" % title)
        print("\n".join(lines))
    if bad:
        print("test.sh: FAILED: %s" % "; ".join(bad))
        return 1
    print("test.sh: every phase that ran passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
