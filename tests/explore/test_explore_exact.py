# SPDX-License-Identifier: BSD-3-Clause
"""Issue 35: pamtest explore exact on every stack, fast on big ones, quiet
where nothing is wrong.  Each test is a reproducer of a defect of 9c82650
(the commit the issue was measured on) and fails there:

- "loadable" as libpam's dlopen() tells it: a module whose library is not
  found, or lacks the symbol version it needs, gives PAM_MODULE_UNKNOWN,
  and real libpam (a pamtest scenario, modules loaded for real) agrees;
- service names with '/' read as libpam reads them, never outside the
  service directory; a missing service file said once;
- the nesting limits of the loaded libpam, the lines they leave unread
  reported dead; a module word libpam refuses, pam_start failures and
  lockouts named at their line with the right reason;
- long stacks: counts beyond a double as valid JSON, a 1,000-line stack
  and a substack chain with few replays and JSON that grows linearly, a
  5 MB file that ends;
- dot's line breaks, raw bytes escaped, the replay gone with a killed
  parent, stock modules' outcome sets (as the man page lists them), and
  accepted findings.
"""
import json
import os
import re
import signal
import subprocess
import time

import pytest

from conftest import OPENPAM, SRC
from pwrap_fixtures import HANG, sanitizer_preload

READS = int(os.environ.get("PWRAP_EXPLORE_READS", "105"))
XPMODS = os.environ.get("PWRAP_EXPLORE_XPMODS", "")

linux_only = pytest.mark.skipif(OPENPAM, reason="Linux-PAM syntax and rules")


def strict_json(text):
    """json.loads that refuses what is not JSON (inf, nan)."""
    def bad(c):
        raise ValueError("not JSON: %s" % c)
    return json.loads(text, parse_constant=bad)


def write(d, name, text):
    with open(os.path.join(str(d), name), "wb" if isinstance(text, bytes) else "w") as f:
        f.write(text)


def kinds(o):
    return [(f["kind"], f["where"]) for f in o["findings"]]


# ---- loadable ---------------------------------------------------------------

@linux_only
@pytest.mark.skipif(not XPMODS, reason="PWRAP_EXPLORE_XPMODS (the test modules) not set")
@pytest.mark.parametrize("module,loads", [("found", True), ("gone", False),
                                          ("version", False)])
def test_loadable_as_dlopen(explorer, tmp_path, module, loads):
    """A module whose library the dynamic linker does not find (or finds
    without the symbol version the module needs) cannot be loaded: libpam
    gives PAM_MODULE_UNKNOWN and nobody gets in.  The explorer tells it
    from the files (nothing loaded) and libpam itself, loading the module
    for real in a scenario, agrees."""
    path = os.path.join(XPMODS, "pam_xp_%s.so" % module)
    write(tmp_path, "svc", "auth sufficient %s\nauth required pam_deny.so\n" % path)
    rc, objs = explorer.json("-d", str(tmp_path), "svc", "-t", "auth")
    o = objs[0]
    results = [t["result"] for t in o["table"]]
    if loads:
        assert "absent" not in o and "PAM_SUCCESS" in results, o
        want = "PAM_SUCCESS"
    else:
        assert o["absent"][0]["module"] == "pam_xp_" + module, o
        assert results == ["PAM_AUTH_ERR"], o
        assert kinds(o) == [("lockout", "svc:1")]
        assert ("needs version XP_DEP_2" if module == "version" else
                "needs libxp_dep.so") in o["findings"][0]["message"]
        want = "PAM_MODULE_UNKNOWN"
    # real libpam, the module loaded for real: only its line
    write(tmp_path, "one", "auth required %s\n" % path)
    scen = tmp_path / "one.pamtest"
    scen.write_text("service-dir %s\nservice one\nrun authenticate expect %s\n"
                    % (tmp_path, want))
    p = explorer.pamtest(str(scen))
    assert p.returncode == 0, p.stdout + p.stderr


# ---- service names ------------------------------------------------------------

@linux_only
def test_service_names_with_slash(explorer, tmp_path):
    """Linux-PAM's pam_start keeps what follows the last '/' of a service
    name, in lower case: the explorer reads that file of the service
    directory, says so once, and the replay (with the name as given)
    agrees.  Nothing outside the directory is read."""
    d = tmp_path / "pam.d"
    d.mkdir()
    write(d, "svc", "auth required pam_permit.so\n")
    write(d, "other", "auth required pam_deny.so\n")
    write(tmp_path, "svc", "auth required pam_unix.so\n")   # never read
    for name in ("x/svc", str(tmp_path / "svc"), "../SVC", "a/b/Svc"):
        p = explorer.run("-d", str(d), name, "-t", "auth", "-f", "json")
        assert p.returncode == 1, (name, p.stderr)
        o = strict_json(p.stdout)
        assert o["service"] == "svc" and o["replayed"] and o["disagreement"] is None
        assert [t["result"] for t in o["table"]] == ["PAM_SUCCESS"], (name, o)
        assert p.stderr.count('libpam reads service "%s" as "svc"' % name) == 1, p.stderr
    for name in ("x/", ".", "a/.."):
        p = explorer.run("-d", str(d), name, "-t", "auth")
        assert p.returncode == 2 and "names no file" in p.stderr, (name, p.stderr)


@linux_only
def test_missing_service_said_once(explorer, tmp_path):
    """A misspelled service: libpam uses "other", and says nothing; the
    explorer says it, once."""
    write(tmp_path, "other", "auth required pam_deny.so\naccount required pam_deny.so\n")
    p = explorer.run("-d", str(tmp_path), "logn")
    assert p.returncode == 1
    assert p.stderr.count("no service file %s/logn: libpam uses other" % tmp_path) == 1, p.stderr


# ---- nesting limits, unread lines, pam_start ----------------------------------

@linux_only
def test_include_chain_of_70_files(explorer, tmp_path):
    """70 nested includes: Linux-PAM up to 1.5 follows them (no limit of
    its own), from 1.6 the line at its 16th level fails and what it would
    have read is reported as lines libpam never reads."""
    write(tmp_path, "svc", "auth include i1\n")
    for i in range(1, 70):
        write(tmp_path, "i%d" % i, "auth include i%d\n" % (i + 1))
    write(tmp_path, "i70", "auth [success=ok default=bad] pam_unix.so\n")
    rc, objs = explorer.json("-d", str(tmp_path), "svc", "-t", "auth")
    o = objs[0]
    assert "refused" not in o and o["replayed"] and o["disagreement"] is None, o
    if READS < 106:
        assert rc == 0 and o["findings"] == [], o
        assert [t["result"] for t in o["table"]][0] == "PAM_SUCCESS"
    else:
        assert rc == 1
        assert kinds(o)[0] == ("lockout", "i15:1"), o
        assert "nested deeper than libpam allows" in o["findings"][0]["message"]
        dead = [w for k, w in kinds(o) if k == "dead-line"]
        assert dead == ["i%d:1" % i for i in range(16, 71)], dead


@linux_only
def test_17_nested_substacks(explorer, tmp_path):
    """17 nested substacks: the 16th level's line fails for the right
    reason, and the lines beyond it are reported dead (libpam never reads
    them)."""
    write(tmp_path, "svc", "auth substack s1\n")
    for i in range(1, 17):
        write(tmp_path, "s%d" % i, "auth substack s%d\n" % (i + 1))
    write(tmp_path, "s17", "auth required pam_permit.so\n")
    rc, objs = explorer.json("-d", str(tmp_path), "svc", "-t", "auth")
    o = objs[0]
    assert rc == 1 and o["replayed"] and o["disagreement"] is None, o
    assert kinds(o) == [("lockout", "s15:1"), ("dead-line", "s16:1"),
                        ("dead-line", "s17:1")], o
    assert "nested deeper than libpam allows" in o["findings"][0]["message"]
    assert "cannot be read" not in o["findings"][0]["message"]
    assert "libpam never reads this line" in o["findings"][2]["message"]


@linux_only
@pytest.mark.parametrize("word", [".so", "?", "/", "dir/.so"])
def test_module_word_libpam_refuses(explorer, tmp_path, word):
    """A module word whose name (its last component, suffix off) is empty
    or "?": libpam stops reading the file and pam_start fails.  The
    explorer says so at that line, and the replay agrees (9c82650 could
    not replay it: exit 2)."""
    write(tmp_path, "svc", "auth required pam_permit.so\nauth required %s\n"
          "auth required pam_permit.so\n" % word)
    rc, objs = explorer.json("-d", str(tmp_path), "svc")
    assert rc == 1
    for o in objs:
        assert o["replayed"] and o["disagreement"] is None, o
        assert o["refused"].startswith("svc:2: the module's name"), o["refused"]
        assert kinds(o) == [("lockout", "svc:2")]


@linux_only
def test_stop_in_an_include_leaves_lines_unread(explorer, tmp_path):
    """In an included file, libpam stops at a module word it refuses: from
    Linux-PAM 1.6 the including line fails, the lines after the stop are
    never read.  Up to 1.5 libpam leaves a half-made handler in its list
    there (malloc()ed, its `next` unset) that the including line's handler
    then follows: it may crash (it did, depending on the heap), so the
    wrapper refuses the line and the explorer says pam_start fails there."""
    write(tmp_path, "svc", "auth include inc\nauth required pam_permit.so\n")
    write(tmp_path, "inc", "auth required pam_permit.so\nauth required ?\n"
          "auth required pam_unix.so\n")
    rc, objs = explorer.json("-d", str(tmp_path), "svc", "-t", "auth")
    o = objs[0]
    assert o["replayed"] and o["disagreement"] is None, o
    if READS >= 106:
        assert ("dead-line", "inc:3") in kinds(o), o
    else:
        assert o["refused"].startswith("inc:2: the module's name"), o
        assert "may follow and crash" in o["refused"], o
        assert kinds(o) == [("lockout", "inc:2")], o
    # a line libpam skips (another group's) is harmless on every version
    write(tmp_path, "inc", "auth required pam_permit.so\naccount required ?\n"
          "auth required pam_unix.so\n")
    rc, objs = explorer.json("-d", str(tmp_path), "svc", "-t", "auth")
    o = objs[0]
    assert rc == 0 and "refused" not in o and o["replayed"], o
    assert o["disagreement"] is None, o


@linux_only
def test_unreadable_control_named_at_its_line(explorer, tmp_path):
    """A control word libpam cannot read ("maybe") makes every code of its
    line a failure: the lockout is that line's, and says why."""
    write(tmp_path, "svc", "auth required pam_permit.so\nauth maybe pam_unix.so\n"
          "auth required pam_permit.so\n")
    rc, objs = explorer.json("-d", str(tmp_path), "svc", "-t", "auth")
    o = objs[0]
    assert rc == 1 and o["disagreement"] is None
    assert kinds(o) == [("lockout", "svc:2")], o
    assert 'cannot read its control "maybe"' in o["findings"][0]["message"]


@linux_only
def test_continued_last_line_named(explorer, tmp_path):
    """pam_start fails on a service file that ends in a continued line:
    named at that line."""
    write(tmp_path, "svc", "auth required pam_permit.so\nauth required \\\n")
    rc, objs = explorer.json("-d", str(tmp_path), "svc", "-t", "auth")
    o = objs[0]
    assert o["refused"].startswith("svc:2: a continued line"), o["refused"]
    assert kinds(o) == [("lockout", "svc:2")] and o["disagreement"] is None


@linux_only
@pytest.mark.parametrize("name", ["s", "log", "xp1"])
def test_service_names_the_replay_used(explorer, tmp_path, name):
    """9c82650's replay directory had files of these names: a service so
    named, with an include, could not be explored."""
    write(tmp_path, name, "auth include inc\n")
    write(tmp_path, "inc", "auth required pam_unix.so\n")
    p = explorer.run("-d", str(tmp_path), name, "-t", "auth", "-f", "json")
    assert p.returncode == 0 and p.stderr == "", p.stderr
    o = strict_json(p.stdout)
    assert o["replayed"] and o["disagreement"] is None


# ---- long stacks ------------------------------------------------------------

def chain(d, n, name="svc"):
    write(d, name, "auth required pam_unix.so\n" * n)


@linux_only
def test_path_count_beyond_a_double(explorer, tmp_path):
    """450 required lines have more paths than a double holds: the json
    says so as a string with its logarithm, and stays JSON."""
    chain(tmp_path, 450)
    p = explorer.run("-d", str(tmp_path), "svc", "-t", "auth", "-f", "json")
    assert p.returncode == 0, p.stderr
    o = strict_json(p.stdout)
    assert isinstance(o["paths_total"], str) and "e+" in o["paths_total"]
    assert 300 < o["paths_log10"] < 400
    human = explorer.run("-d", str(tmp_path), "svc", "-t", "auth", "--no-replay")
    # no "inf" word (pam_unix's authinfo_unavail holds the letters)
    assert not re.search(r"\binf\b", human.stdout) and "e+" in human.stdout.splitlines()[0]
    # small counts are exact integers
    chain(tmp_path, 3)
    o = strict_json(explorer.run("-d", str(tmp_path), "svc", "-t", "auth",
                                 "-f", "json").stdout)
    assert o["paths_total"] == 6 ** 3 and abs(o["paths_log10"] - 3 * 0.7782) < 0.001


@linux_only
@pytest.mark.parametrize("shape", ["required", "substack"])
def test_long_stacks_grow_linearly(explorer, tmp_path, shape):
    """A stack of 200 and of 1,000 lines (required lines; substacks of a
    small file): the replay set does not grow with the stack (every line's
    outcomes, every state), and the json grows linearly with it (the replay
    paths and the table, not every path)."""
    size = {}
    for n in (200, 1000):
        d = tmp_path / str(n)
        d.mkdir()
        if shape == "required":
            chain(d, n)
        else:
            write(d, "svc", "auth substack inc\n" * n)
            write(d, "inc", "auth required pam_unix.so\nauth sufficient pam_permit.so\n")
        p = explorer.run("-d", str(d), "svc", "-t", "auth", "-f", "json")
        assert p.returncode in (0, 1), p.stderr
        o = strict_json(p.stdout)
        assert o["replayed"] and o["disagreement"] is None
        assert o["replays"] <= 12, o["replays"]
        size[n] = len(p.stdout)
    # per module line of the stack (a substack of inc holds two)
    lines = 1000 * (1 if shape == "required" else 2)
    assert size[1000] < 1500 * lines, size
    assert size[1000] < size[200] * 7, size


@linux_only
@pytest.mark.skipif(bool(sanitizer_preload()), reason="under ASan+UBSan the 5 MB file's "
                    "2 million edges take longer than this test's hang limit (HANG, 600 s); "
                    "the normal builds run it")
def test_five_megabyte_file(explorer, tmp_path):
    """A 5 MB service file of 188,000 lines ends with a result: its graph
    and table, no replay (libpam's pam_start is quadratic in the lines),
    json that holds together."""
    line = "auth required pam_unix.so\n"
    write(tmp_path, "svc", line * (5000000 // len(line)))
    p = explorer.run("-d", str(tmp_path), "svc", "-f", "json", timeout=HANG)
    assert p.returncode == 1, p.stderr
    objs = strict_json(p.stdout)
    auth = objs[0]
    assert auth["states"] > 188000 and not auth["replayed"]
    assert "more than 5000 lines" in auth["not_replayed"]
    # stacks that repeat an include into more lines than libpam could
    # start: a clear refusal
    write(tmp_path, "svc", "auth substack inc\n" * 140000)
    write(tmp_path, "inc", "auth required pam_unix.so\n")
    p = explorer.run("-d", str(tmp_path), "svc", "-t", "auth", timeout=HANG)
    assert p.returncode == 2 and "more than 262144 lines" in p.stderr, p.stderr


# ---- output -------------------------------------------------------------------

@linux_only
def test_dot_line_breaks(explorer, tmp_path):
    """Node labels break lines with dot's own \\n, not a literal one."""
    write(tmp_path, "svc", "auth required pam_unix.so\n")
    p = explorer.run("-d", str(tmp_path), "svc", "-t", "auth", "-f", "dot")
    labels = re.findall(r'\[label="((?:[^"\\]|\\.)*)"', p.stdout)
    assert any("\\n" in lb for lb in labels), labels
    assert not any("\\\\n" in lb for lb in labels), labels


@linux_only
def test_raw_bytes_escaped(explorer, tmp_path):
    """Bytes of a service file never reach the terminal as they are (an
    escape sequence, bytes that are not UTF-8), and json stays UTF-8."""
    write(tmp_path, "svc", b"auth required pam_\x1b[31mred\xff.so\n"
          b"auth include inc\x1b]0;x\x07\n")
    for fmt in ("human", "mermaid"):
        p = subprocess.run([explorer.pamtest_path, "explore", "-d", str(tmp_path),
                            "svc", "-t", "auth", "-f", fmt], env=explorer.env(),
                           capture_output=True, timeout=HANG)
        assert p.returncode == 1, p.stderr
        assert b"\x1b" not in p.stdout and b"\xff" not in p.stdout and b"\x07" not in p.stdout
        assert b"\\x1b[31mred\\xff" in p.stdout
        p.stdout.decode("utf-8")
    p = subprocess.run([explorer.pamtest_path, "explore", "-d", str(tmp_path),
                        "svc", "-t", "auth", "-f", "json"], env=explorer.env(),
                       capture_output=True, timeout=HANG)
    strict_json(p.stdout.decode("utf-8"))


@linux_only
def test_killed_parent_leaves_nothing(explorer, tmp_path):
    """SIGKILL to pamtest explore: its replaying child stops at its next
    replay, prints nothing and removes what it made (9c82650's ran on for
    its whole work and left its directory; so did the child that looked at
    its parent only once it had started, when the parent was killed before
    that: it took the reaper for its parent).  Killed as soon as the child
    runs, that race is hit often."""
    chain(tmp_path, 1000)
    p = subprocess.Popen([explorer.pamtest_path, "explore", "-d", str(tmp_path),
                          "svc", "-t", "auth", "--replay-all"], env=explorer.env(),
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    # the child's runtime directory is there (inside pamtest-explore.*):
    # the child runs.  (Before it is forked, the directories are the
    # parent's to remove: pwrap_guard's, not what this test is about.)
    def child_started():
        return any(n.startswith("pam_wrapper.")
                   for d in explorer.leftovers() if d.startswith("pamtest-explore.")
                   for n in os.listdir(os.path.join(explorer.tmpdir, d)))
    deadline = time.monotonic() + HANG
    while not child_started() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert child_started(), "the replays did not start"
    os.kill(p.pid, signal.SIGKILL)
    out, err = p.communicate(timeout=HANG)   # EOF: the child is gone too
    assert out == b"", out[:200]
    deadline = time.monotonic() + HANG
    while explorer.leftovers() and time.monotonic() < deadline:
        time.sleep(0.05)
    assert explorer.leftovers() == []


@linux_only
def test_killed_before_the_child_looks(explorer, tmp_path):
    """SIGKILL to pamtest explore as soon as its directory is made, before
    or just after it forks the replaying child: the child never runs its
    work (it compared its parent with the first getppid() it read, the
    reaper already when its parent was killed that early: it ran on for
    the whole --replay-all and printed it).  What the parent made before
    the fork is its own to remove (pwrap_guard: issue 34); this test
    removes it."""
    import shutil
    chain(tmp_path, 1000)
    for _ in range(5):
        p = subprocess.Popen([explorer.pamtest_path, "explore", "-d", str(tmp_path),
                              "svc", "-t", "auth", "--replay-all"], env=explorer.env(),
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        deadline = time.monotonic() + HANG
        while (not any(n.startswith("pamtest-explore.") for n in explorer.leftovers())
               and time.monotonic() < deadline):
            pass
        os.kill(p.pid, signal.SIGKILL)
        out, err = p.communicate(timeout=HANG)   # EOF: no child runs on
        assert out == b"", out[:200]
        for n in explorer.leftovers():
            shutil.rmtree(os.path.join(explorer.tmpdir, n), ignore_errors=True)


# ---- outcome sets -------------------------------------------------------------

def man_outcomes():
    """The man page's table: {module: {group: "codes sorted"}}."""
    page = os.path.join(SRC, "doc", "pamtest-explore.1")
    with open(page, encoding="utf-8") as f:
        text = f.read().replace("\\-", "-")
    part = text.split(".SH DEFAULT OUTCOMES", 1)[1].split(".SH ", 1)[0]
    table = {}
    for name, body in re.findall(r"^\.TP\n\.B (pam_\w+)\n(.*?)(?=^\.TP|^\.PP|\Z)",
                                 part, re.M | re.S):
        table[name] = {g: " ".join(sorted(c.strip() for c in codes.split(",")))
                       for g, codes in re.findall(r"(\w+): ([^;\n]*)", body)}
    return table


def source_outcomes():
    with open(os.path.join(SRC, "tools", "explore", "outcomes.c"), encoding="utf-8") as f:
        text = f.read()
    body = text.split("} stock[] = {", 1)[1].split("};", 1)[0]
    table = {}
    for name, sets in re.findall(r'\{ "(pam_\w+)", \{(.*?)\} \}', body, re.S):
        table[name] = {}
        for g, s in zip(("auth", "account", "password", "session"), sets.split(",")):
            codes = re.findall(r"S\((\w+)\)", s)
            if codes:
                table[name][g] = " ".join(sorted(c.lower() for c in codes))
    return table


def test_stock_outcomes_documented():
    """pamtest-explore(1) lists the outcome sets the explorer uses, module
    by module and group by group."""
    man = man_outcomes()
    assert man == source_outcomes()
    assert len(man) > 30 and "pam_unix" in man


@linux_only
def test_stock_outcomes_no_false_bypass(explorer, tmp_path):
    """pam_unix never returns PAM_IGNORE from pam_authenticate: the group's
    default outcomes made a bypass of this stack, its own make none (and
    --outcomes still gives every module the set it names)."""
    write(tmp_path, "svc", "auth [success=ok ignore=ignore default=die] pam_unix.so\n"
          "auth optional pam_permit.so\n")
    rc, objs = explorer.json("-d", str(tmp_path), "svc", "-t", "auth")
    assert rc == 0 and objs[0]["findings"] == [], objs[0]
    rc, objs = explorer.json("-d", str(tmp_path), "svc", "-t", "auth", "--outcomes",
                             "success,auth_err,ignore")
    assert [k for k, _ in kinds(objs[0])] == ["bypass"]
    rc, objs = explorer.json("-d", str(tmp_path), "svc", "-t", "auth", "--model",
                             "pam_unix=success,ignore")
    assert [k for k, _ in kinds(objs[0])] == ["bypass"]


# ---- accepted findings ----------------------------------------------------------

@linux_only
def test_accept(explorer, tmp_path):
    """A known finding accepted (--accept, an accept file) keeps the stack
    under test with exit 0 until something new appears; an accept that
    matches nothing is said."""
    d = tmp_path / "d"
    d.mkdir()
    write(d, "svc", "auth requisite pam_deny.so\nauth required pam_unix.so\n")
    rc, objs = explorer.json("-d", str(d), "svc", "-t", "auth")
    assert rc == 1 and ("dead-line", "svc:2") in kinds(objs[0])
    found = kinds(objs[0])
    args = []
    for k, w in found:
        args += ["--accept", "%s:%s" % (k, w)]
    p = explorer.run("-d", str(d), "svc", "-t", "auth", "-f", "json", *args)
    assert p.returncode == 0, p.stderr
    o = strict_json(p.stdout)
    assert o["findings"] == [] and [(a["kind"], a["where"]) for a in o["accepted"]] == found
    assert all(a["by"] == "--accept" for a in o["accepted"])
    # in a file, with comments
    acc = tmp_path / "accepted"
    acc.write_text("# known\n" + "".join("%s:%s   # why\n" % f for f in found) +
                   "dead-line:svc:9\n")
    p = explorer.run("-d", str(d), "svc", "-t", "auth", "--accept-file", str(acc))
    assert p.returncode == 0, p.stderr
    assert "accepted dead-line: svc:2" in p.stdout
    # the unmatched entry is the file's last line (after "# known" and found)
    assert p.stderr.count("did not occur") == 1
    assert "%s:%d:" % (acc, len(found) + 2) in p.stderr, p.stderr
    # something new: exit 1 again
    write(d, "svc", "auth requisite pam_deny.so\nauth required pam_unix.so\n"
          "auth required pam_env.so\n")
    p = explorer.run("-d", str(d), "svc", "-t", "auth", "--accept-file", str(acc))
    assert p.returncode == 1 and "dead-line: svc:3" in p.stdout
    for bad in ("dead-line", "deadline:svc:2", "dead-line:"):
        p = explorer.run("-d", str(d), "svc", "--accept", bad)
        assert p.returncode == 2 and "--accept" in p.stderr, bad
    acc.write_text("nonsense\n")
    p = explorer.run("-d", str(d), "svc", "--accept-file", str(acc))
    assert p.returncode == 2 and "%s:1" % acc in p.stderr


@linux_only
def test_pam_auth_update_rule(explorer, tmp_path):
    """Debian's pam-auth-update writes a dead pam_deny on purpose when no
    module fills a block: accepted by its documented rule; the same deny
    dead for another reason is not."""
    write(tmp_path, "svc", "session [default=1] pam_permit.so\n"
          "session requisite pam_deny.so\nsession required pam_permit.so\n"
          "session required pam_unix.so\n")
    rc, objs = explorer.json("-d", str(tmp_path), "svc", "-t", "session")
    o = objs[0]
    assert rc == 0 and o["findings"] == [], o
    assert [(a["kind"], a["where"], a["by"]) for a in o["accepted"]] == \
        [("dead-line", "svc:2", "the pam-auth-update rule")]
    write(tmp_path, "svc", "session [default=2] pam_permit.so\n"
          "session requisite pam_deny.so\nsession required pam_permit.so\n"
          "session required pam_unix.so\n")
    rc, objs = explorer.json("-d", str(tmp_path), "svc", "-t", "session")
    assert rc == 1 and ("dead-line", "svc:2") in kinds(objs[0])
