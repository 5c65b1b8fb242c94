# SPDX-License-Identifier: BSD-3-Clause
"""Random PAM stacks from the pamdiff fuzzer's grammar.

fuzz_pamdiff (fuzz/fuzz_pamdiff.c) has no generator of its own: libFuzzer
builds its inputs from its dictionary, fuzz/pamdiff.dict, the words of
Linux-PAM's service-file syntax, and from its seed corpus.  This module
reads that dictionary and puts its words together into whole lines (a
group, a control, a module or include target, arguments; now and then a
comment, a continuation, a blank of another kind), and reads the seed
corpus, in the fuzzer's input format: up to three files svc, inc1, inc2
separated by 0x01, with @A@ the directory they are written to and @M@ the
system's module directory.  As in the fuzzer, every pam_<word> that is not
a harmless stock module becomes pam~<word> (a module that does not exist).
"""
import os
import random
import re

SRC = os.environ.get("PWRAP_SOURCE_DIR",
                     os.path.dirname(os.path.dirname(os.path.dirname(
                         os.path.abspath(__file__)))))
DICT = os.path.join(SRC, "fuzz", "pamdiff.dict")
CORPUS = os.path.join(SRC, "fuzz", "corpus", "fuzz_pamdiff")
HARMLESS = ("permit", "deny", "debug", "echo", "warn", "nonexistent")


def _unescape(s):
    out = bytearray()
    i = 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s):
            if s[i + 1] == "x":
                out.append(int(s[i + 2:i + 4], 16))
                i += 4
                continue
            out.append(ord(s[i + 1]))
            i += 2
            continue
        out += s[i].encode()
        i += 1
    return bytes(out)


def load_dict(path=DICT):
    """{name: bytes} of the dictionary's entries."""
    words = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            m = re.match(r'^([A-Za-z0-9_]+)="(.*)"\s*$', line)
            if m:
                words[m.group(1)] = _unescape(m.group(2))
    return words


def neutralise(data):
    """pam_<word> -> pam~<word> unless harmless (as fuzz_pamdiff does)."""
    def sub(m):
        return m.group(0) if m.group(1).decode() in HARMLESS else b"pam~" + m.group(1)
    return re.sub(rb"pam_([A-Za-z0-9_]*)", sub, data)


def expand(data, adir, moddir):
    return data.replace(b"@A@", adir.encode()).replace(b"@M@", moddir.encode())


class Grammar:
    """Lines put together from the dictionary's words."""

    TYPES = ("auth", "AUTH", "Auth", "account", "ACCOUNT", "session", "Session",
             "password", "PASSWORD", "dash_auth", "dash_session")
    FLAGS = ("required", "Required", "requisite", "sufficient", "SUFFICIENT",
             "optional", "jump", "jump_done", "jump_bad", "jump_spaced")
    INCLUDES = ("include", "Include", "INCLUDE", "substack", "SUBSTACK",
                "SubStack", "br_include", "br_substack")
    AT = ("at_include", "at_INCLUDE", "at_Include")
    # include targets: the stack's files, a missing one, and those that
    # are not plain files (explore_case makes them, as fuzz_pamdiff does)
    TARGETS = ("inc1", "inc2", "incsvc", "incmissing", "t_dir", "t_dir_slash",
               "t_empty", "t_devnull", "t_secret", "t_fifo")
    MODULES = ("permit", "deny", "debug", "echo", "warn", "nonexistent",
               "permit_deb", "deny_deb", "debug_deb", "echo_deb",
               "permit_bare", "deny_bare")
    ARGS = ("dbg_auth", "dbg_cred", "dbg_acct", "dbg_open", "dbg_close",
            "dbg_pre", "dbg_chauthtok", "echo_s", "echo_u")
    ACTIONS = ("ctl_ok", "ctl_ignore", "ctl_die", "ctl_reset")
    # the codes a "[value=action]" control names (the dictionary's
    # debug arguments name these, and "default")
    VALUES = (b"success", b"default", b"ignore", b"new_authtok_reqd",
              b"auth_err", b"perm_denied", b"user_unknown", b"session_err",
              b"authtok_err", b"try_again", b"module_unknown", b"acct_expired")

    def __init__(self, words, rng, at_include=True):
        self.w = words
        self.r = rng
        self.at_include = at_include

    def pick(self, names):
        return self.w[self.r.choice([n for n in names if n in self.w])]

    def control(self):
        r = self.r
        if r.random() < 0.6:
            return self.pick(self.FLAGS)
        pairs = []
        for _ in range(r.randint(1, 4)):
            act = r.choice([self.pick(self.ACTIONS), b"done", b"bad",
                            str(r.randint(1, 4)).encode()])
            pairs.append(r.choice(self.VALUES) + b"=" + act)
        return b"[" + b" ".join(pairs) + b"]"

    def long_line(self):
        """A physical line over libpam 1.5's 1024-byte buffer: a comment
        whose tail 1.5 reads as a line of its own, a line behind a
        comment that fills the buffer (1.5 reads it, 1.6 does not), or a
        module line with a long argument (1.5 splits it)."""
        kind = self.r.random()
        if kind < 0.4:
            return b"#" + b"x" * self.r.randint(1024, 1100) + b"\n"
        if kind < 0.8:
            return b"#" + b"x" * 1022 + self.line()
        return self.line().rstrip(b"\n") + b" " + b"a" * self.r.randint(1000, 1100) + b"\n"

    def line(self):
        r = self.r
        if r.random() < 0.03:
            return self.long_line()
        sep = self.w["tab"] if r.random() < 0.3 else b" "
        x = r.random()
        if x < 0.08:
            # a libpam without "@include" reads a broken line there, but
            # libpam_wrapper still follows its target (and refuses a cycle
            # through it): only the missing target keeps the two apart
            words = [self.pick(self.AT), self.pick(self.TARGETS) if self.at_include
                     else self.w["incmissing"]]
        elif x < 0.2:
            words = [self.pick(self.TYPES), self.pick(self.INCLUDES),
                     self.pick(self.TARGETS)]
        elif x < 0.23:
            words = [self.pick(self.TYPES)] + ([self.control()] if r.random() < 0.5 else [])
        else:
            words = [self.pick(self.TYPES), self.control(), self.pick(self.MODULES)]
            if r.random() < 0.4:
                words.append(self.pick(self.ARGS))
        text = sep.join(words)
        y = r.random()
        if y < 0.05:
            text += b" " + self.w["hash"] + b" a comment"
        elif y < 0.08:
            text = self.w["hash"] + b" " + text
        elif y < 0.11:
            text = text.replace(sep, self.w["cont"], 1)
        elif y < 0.13:
            text += self.w["cr"]
        elif y < 0.15:
            text = text.replace(sep, self.r.choice([self.w["vt"], self.w["ff"]]), 1)
        elif y < 0.16:
            text = text.replace(b"]", self.w["esc_rbr"] + b" x]", 1)
        elif y < 0.17:
            text = text.replace(b"]", b"", 1)
        elif y < 0.18:
            text = self.w["dash"] + text
        return text + b"\n"

    def files(self, nmax=10):
        """svc, and maybe inc1 and inc2: {name: bytes}."""
        out = {}
        for name in ("svc", "inc1", "inc2"):
            if name != "svc" and self.r.random() < 0.3:
                continue
            out[name] = b"".join(self.line() for _ in range(self.r.randint(0, nmax)))
        return out


def random_stacks(n, seed, moddir, at_include=True):
    """n (name, {file: bytes with @A@ left in}) random cases; at_include
    False: "@include" lines name a missing file only."""
    words = load_dict()
    for i in range(n):
        g = Grammar(words, random.Random(seed * 100003 + i), at_include)
        yield "random-%d-%d" % (seed, i), {k: neutralise(expand(v, "@A@", moddir))
                                          for k, v in g.files().items()}


def corpus_cases(moddir):
    """The seed corpus of fuzz_pamdiff as (name, {file: bytes})."""
    for name in sorted(os.listdir(CORPUS)):
        with open(os.path.join(CORPUS, name), "rb") as f:
            data = f.read()
        parts = data.split(b"\x01", 2)
        files = {}
        for fname, text in zip(("svc", "inc1", "inc2"), parts):
            files[fname] = neutralise(expand(text, "@A@", moddir))
        yield "corpus-" + name, files
