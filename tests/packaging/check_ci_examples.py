# SPDX-License-Identifier: BSD-3-Clause
"""Checks the CI examples of examples/ci/ (our CI cannot run them).

- github-actions.yml and gitlab-ci.yml parse as YAML (python3-yaml) and
  have the shape their services need (a job in a debian:bookworm
  container; steps with `run`, a `script` list);
- the Containerfile is FROM debian:bookworm and its RUN lines, the YAML
  files' commands, are the same list of shell commands in all three;
- the commands that build and install pam_wrapper's packages are the ones
  tests/packaging/test_deb.sh runs (its deb_build and deb_install lines),
  and the module's build and test commands (those after the install) are
  the ones it runs against the installed packages: it gets them from here.

Usage: check_ci_examples.py EXAMPLES_DIR            (the checks)
       check_ci_examples.py --module-commands EXAMPLES_DIR
           (prints the module's commands, one a line, for test_deb.sh)
"""
import os
import re
import shlex
import sys

import yaml

HERE = os.path.dirname(os.path.abspath(__file__))
IMAGE = "debian:bookworm"


class Bad(Exception):
    pass


def lines_of(block):
    """Shell commands of a YAML run/script block: lines, no comments."""
    out = []
    for line in block.splitlines():
        line = line.strip()
        if line and not line.startswith("#"):
            out.append(line)
    return out


def github(path):
    with open(path, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    # YAML 1.1 reads the key "on" as True.
    if not (doc.get("on") or doc.get(True)):
        raise Bad("%s: no 'on' trigger" % path)
    jobs = doc.get("jobs") or {}
    if len(jobs) != 1:
        raise Bad("%s: expected one job, found %d" % (path, len(jobs)))
    job = next(iter(jobs.values()))
    container = job.get("container")
    image = container.get("image") if isinstance(container, dict) else container
    if image != IMAGE or "runs-on" not in job:
        raise Bad("%s: the job must run on a runner in %s" % (path, IMAGE))
    if "PAM_WRAPPER_GIT" not in (job.get("env") or {}):
        raise Bad("%s: no PAM_WRAPPER_GIT in the job's env" % path)
    cmds, checkout = [], False
    for step in job.get("steps") or []:
        if "uses" in step:
            if not str(step["uses"]).startswith("actions/checkout@"):
                raise Bad("%s: unexpected action %s" % (path, step["uses"]))
            checkout = True
        elif "run" in step:
            cmds += lines_of(step["run"])
        else:
            raise Bad("%s: a step with neither uses nor run" % path)
    if not checkout:
        raise Bad("%s: the repository is never checked out" % path)
    return cmds


def gitlab(path):
    with open(path, encoding="utf-8") as f:
        doc = yaml.safe_load(f)
    jobs = {k: v for k, v in doc.items()
            if isinstance(v, dict) and "script" in v}
    if len(jobs) != 1:
        raise Bad("%s: expected one job with a script" % path)
    job = next(iter(jobs.values()))
    if job.get("image") != IMAGE:
        raise Bad("%s: the job's image must be %s" % (path, IMAGE))
    if "PAM_WRAPPER_GIT" not in (job.get("variables") or {}):
        raise Bad("%s: no PAM_WRAPPER_GIT variable" % path)
    if not all(isinstance(c, str) for c in job["script"]):
        raise Bad("%s: script entries must be strings" % path)
    return [c.strip() for c in job["script"]]


def containerfile(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    logical, cur = [], ""
    for line in text.splitlines():
        if not cur and (not line.strip() or line.lstrip().startswith("#")):
            continue
        if line.endswith("\\"):
            cur += line[:-1] + " "
            continue
        logical.append((cur + line).strip())
        cur = ""
    if not logical or logical[0] != "FROM " + IMAGE:
        raise Bad("%s: must start FROM %s" % (path, IMAGE))
    if not any(re.match(r"ARG PAM_WRAPPER_GIT\b", i) for i in logical):
        raise Bad("%s: no ARG PAM_WRAPPER_GIT" % path)
    for instr in logical:
        if instr.split()[0] not in ("FROM", "ARG", "WORKDIR", "RUN", "COPY"):
            raise Bad("%s: unexpected instruction %s" % (path, instr))
    return [re.sub(r"\s+", " ", i[4:]).strip()
            for i in logical if i.startswith("RUN ")]


def test_deb_commands():
    """deb_build and deb_install as test_deb.sh runs them."""
    found = {}
    with open(os.path.join(HERE, "test_deb.sh"), encoding="utf-8") as f:
        for line in f:
            m = re.match(r"(deb_build|deb_install)=(.*)$", line.rstrip("\n"))
            if m:
                found[m.group(1)] = shlex.split(m.group(2))[0]
    if set(found) != {"deb_build", "deb_install"}:
        raise Bad("test_deb.sh: no deb_build= or deb_install= line")
    return found["deb_build"], found["deb_install"]


def module_commands(examples):
    sets = {
        "github-actions.yml": github(os.path.join(examples, "github-actions.yml")),
        "gitlab-ci.yml": gitlab(os.path.join(examples, "gitlab-ci.yml")),
        "Containerfile": containerfile(os.path.join(examples, "Containerfile")),
    }
    first_name, first = next(iter(sets.items()))
    for name, cmds in sets.items():
        if cmds != first:
            raise Bad("%s runs other commands than %s:\n  %s\nvs\n  %s" % (
                name, first_name, "\n  ".join(cmds), "\n  ".join(first)))
    build, install = test_deb_commands()
    for cmd in (build, install):
        if cmd not in first:
            raise Bad("the examples do not run test_deb.sh's command: %s" % cmd)
    if first.index(build) > first.index(install):
        raise Bad("the examples install the packages before building them")
    rest = first[first.index(install) + 1:]
    if not rest:
        raise Bad("the examples run nothing after installing the packages")
    return rest


def main(argv):
    if len(argv) == 3 and argv[1] == "--module-commands":
        for cmd in module_commands(argv[2]):
            print(cmd)
        return 0
    if len(argv) != 2:
        sys.stderr.write(__doc__)
        return 2
    cmds = module_commands(argv[1])
    readme = os.path.join(argv[1], "README.md")
    with open(readme, encoding="utf-8") as f:
        text = f.read()
    for name in ("github-actions.yml", "gitlab-ci.yml", "Containerfile",
                 "module/"):
        if "(%s)" % name not in text:
            raise Bad("%s: no line on %s" % (readme, name))
    print("examples/ci: the three run the same commands; after the packages:")
    for cmd in cmds:
        print("  " + cmd)
    return 0


if __name__ == "__main__":
    try:
        sys.exit(main(sys.argv))
    except (Bad, yaml.YAMLError, OSError) as e:
        print("FAIL: %s" % e, file=sys.stderr)
        sys.exit(1)
