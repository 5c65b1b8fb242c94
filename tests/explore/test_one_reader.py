# SPDX-License-Identifier: BSD-3-Clause
"""One reader of PAM's configuration (issue 33): no C code in src/ or
tools/ outside src/pamconf reads a service file's lines, tokens or include
targets.  Three greps, each with the places allowed and why:

- line readers and tokenizers (fgets, getline, getdelim, strtok, strsep,
  fscanf) only where they read something else than a service file;
- the grammar's keywords spelled as strings ("include", "substack",
  "@include" and the control words) or an assemble() only where a
  service file is written or a scenario line is told apart from one;
- the reader's entry points (pamconf_parse, pamconf_service_read,
  pamconf_read_file, pamconf_target_kind) called only by the wrapper's
  walk and the explorer's and --check's readings, which take everything
  from them.

A new hit fails the test: either it is a new reader (move it into
src/pamconf) or it reads something else (add it below, saying what)."""
import os
import re

SRC = os.environ.get("PWRAP_SOURCE_DIR",
                     os.path.dirname(os.path.dirname(os.path.dirname(
                         os.path.abspath(__file__)))))

LINE_READERS = re.compile(r"\b(fgets|getline|getdelim|strtok|strtok_r|strsep|fscanf)\s*\(")
KEYWORDS = re.compile(r'"(@?include|substack|requisite|sufficient|required|optional|binding)"'
                      r"|\bassemble\w*\s*\(")
ENTRY = re.compile(r"\bpamconf_(parse|service_read|read_file|target_kind)\s*\(")

ALLOWED = {
    LINE_READERS: {
        "tools/pamtest/parse.c": "scenario files",
        "src/python/pypamtest_trace.c": "the trace's records",
        "src/python/pypamtest_explore.c": "a list of paths",
        "tools/common/pwrap_tool.c": "LD_PRELOAD's list, /etc/passwd and /etc/group",
        "tools/common/pwrap_system.c": "a list of globs and its own report",
        "tools/explore/accept.c": "pamtest explore's accept files",
    },
    KEYWORDS: {
        "tools/pamtest/parse.c": "a scenario line that looks like a service line",
    },
    ENTRY: {
        "src/wrapper/pwrap_walk.c": "the wrapper's walk (include targets)",
        "src/wrapper/pwrap_file.c": "the wrapper's file reader",
        "tools/pamtest/check.c": "pamtest --check's walk",
        "tools/common/pwrap_system.c": "the --system copier (for pamconf_rewrite)",
        "tools/explore/read.c": "the explorer's model",
    },
}


def c_files(src):
    for top in ("src", "tools"):
        for d, _, names in os.walk(os.path.join(src, top)):
            for n in names:
                if n.endswith((".c", ".h")):
                    path = os.path.join(d, n)
                    rel = os.path.relpath(path, src)
                    if not rel.startswith("src/pamconf/"):
                        yield rel, path


def code_lines(path):
    """The lines of a C file with comments blanked (a comment may name a
    function it does not call)."""
    with open(path, encoding="utf-8", errors="replace") as f:
        text = f.read()
    text = re.sub(r"/\*.*?\*/", lambda m: re.sub(r"[^\n]", " ", m.group(0)),
                  text, flags=re.S)
    return text.splitlines()


def scan(src):
    hits = []
    for rel, path in c_files(src):
        for no, line in enumerate(code_lines(path), 1):
            for pattern, allowed in ALLOWED.items():
                if pattern.search(line) and rel not in allowed:
                    hits.append("%s:%d: %s" % (rel, no, line.strip()))
    return hits


def test_one_reader():
    hits = scan(SRC)
    assert hits == [], "\n".join(hits)


def test_the_check_finds_a_reader(tmp_path):
    """The greps see a reader: one planted in another tree is found, each
    of its three marks."""
    tools = tmp_path / "tools" / "x"
    tools.mkdir(parents=True)
    (tools / "reader.c").write_text(
        "/* fgets( in a comment does not count */\n"
        'int f(FILE *f, char *b) { return fgets(b, 1024, f) != 0 &&\n'
        '    strcmp(b, "include") == 0 && pamconf_parse(0, 0, 0, 0); }\n')
    hits = scan(str(tmp_path))
    assert [h.split(":")[1] for h in hits] == ["2", "3", "3"], hits
