# SPDX-License-Identifier: BSD-3-Clause
"""Helpers of the command-line tool tests: where the tools are, and a way
to run them with a private $TMPDIR and without any wrapper variables from
the calling environment.  In sanitizer builds the sanitizer runtimes of
PWRAP_PRELOAD are preloaded into the tools so that the uninstrumented
programs the launcher wraps can load the instrumented wrapper.
"""
import os
import subprocess

SRC = os.environ.get("PWRAP_SOURCE_DIR",
                     os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__)))))
BIN = os.environ.get("PWRAP_BIN_DIR", os.path.join(SRC, "build", "bin"))
LIB = os.environ.get("PWRAP_LIB", os.path.join(os.path.dirname(BIN), "lib", "libpam_wrapper.so"))
APP = os.environ.get("PWRAP_TOOLS_APP", os.path.join(BIN, "tools_login_app"))
EXAMPLES = os.path.join(SRC, "examples", "scenarios")
LAUNCHER = os.path.join(BIN, "pam_wrapper")
PAMTEST = os.path.join(BIN, "pamtest")


def sanitizer_preload():
    """The sanitizer runtimes of PWRAP_PRELOAD (empty in normal builds)."""
    parts = [p for p in os.environ.get("PWRAP_PRELOAD", "").split(":") if p]
    return ":".join(p for p in parts if os.path.basename(p) != os.path.basename(LIB))


class Env:
    def __init__(self, tmpdir):
        self.tmpdir = tmpdir

    def env(self, **extra):
        e = {k: v for k, v in os.environ.items()
             if not k.startswith(("PAM_WRAPPER", "NSS_WRAPPER", "PAM_MATRIX", "PAMTEST"))
             and k != "LD_PRELOAD"}
        e["TMPDIR"] = self.tmpdir
        san = sanitizer_preload()
        if san:
            e["LD_PRELOAD"] = san
        for k, v in extra.items():
            if v is None:
                e.pop(k, None)
            else:
                e[k] = v
        return e

    def run(self, argv, input=None, timeout=60, **extra):
        return subprocess.run(argv, env=self.env(**extra), input=input, timeout=timeout,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)

    def launcher(self, *args, **extra):
        return self.run([LAUNCHER, *args], **extra)

    def pamtest(self, *args, **extra):
        return self.run([PAMTEST, *args], **extra)

    def leftovers(self):
        return sorted(os.listdir(self.tmpdir))



def write_file(d, name, text):
    """Write text to d/name (creating directories); returns the path."""
    path = os.path.join(d, name)
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w") as f:
        f.write(text)
    return path
