# SPDX-License-Identifier: BSD-3-Clause
"""pytest plugin of pam_wrapper: the ``pam_wrapper`` fixture.

Each test that asks for the fixture gets its own PAM service directory and
pam_matrix password database, set in PAM_WRAPPER_SERVICE_DIR and
PAM_MATRIX_PASSWD (with PAM_WRAPPER=1) for the test and restored after it;
the wrapper reads them at every pam_start(), so one pytest process runs any
number of such tests.  A default service, ``matrix`` (DEFAULT_SERVICE),
stacks pam_matrix.so on the test's passdb in all four groups.  The
wrapper's runtime directory is shared by the tests of one process, and a
service file written there wins over the service directory's: what a test
adds to it or changes in it is removed when the test ends, so the next test
starts from the same state whatever the order.

libpam_wrapper.so must be preloaded into the Python process.  When it is
not, the plugin re-executes the interpreter once with pytest's own
arguments and LD_PRELOAD=<libpam_wrapper.so> PAM_WRAPPER=1 added to the
environment (xdist workers then inherit both):

- loaded on purpose (``-p pytest_pam_wrapper`` or ``-p pam_wrapper``,
  also in addopts, $PYTEST_PLUGINS, or ``pytest_plugins =
  ["pytest_pam_wrapper"]`` in a conftest.py): at once, in
  pytest_cmdline_main, before any output;
- loaded only through its entry point (installed package): after
  collection, and only when a selected test uses the fixture, so that other
  projects' test runs on the same machine never get the wrapper (the
  session header then shows twice).  This late re-run cannot happen under
  xdist (the controller collects nothing): load the plugin on purpose there.

The library is $PAM_WRAPPER_LIB, else libpam_wrapper.so in the directory
of the libpamtest that pypamtest loads (the build tree's lib/, or the
installed libdir), else the one the installed C package names
(`pkg-config --libs pam_wrapper`: a pip-installed pypamtest has libpamtest
built in).  Only the pytest main program re-executes: never an xdist
worker, never pytest.main() called with other arguments than the process
got (pytester's in-process runs); there the fixture fails and says how to
load the wrapper.  The environment variable _PYTEST_PAM_WRAPPER_REEXEC
guards against a loop.

The fixture's use_system() runs the machine's own PAM stacks (a private
copy of /etc/pam.d with test doubles, made by ``pam_wrapper --system
--prepare``, pam_wrapper(1)) with the test's users.  The real modules of
those stacks look users up through NSS, so use_system() needs nss_wrapper
in the process: with the ini option ``pam_wrapper_nss = true`` (or
PYTEST_PAM_WRAPPER_NSS=1) the re-execution also preloads
libnss_wrapper.so, and every process (xdist workers too) points
nss_wrapper at files of its own before its first lookup, holding the
system's /etc/passwd and /etc/group; use_system() adds the test's users
and groups there and the fixture puts the files back after the test.

PYTEST_DONT_REWRITE: no assertions here; the entry-point shim imports this
package before pytest could mark it for rewriting.
"""
import ctypes
import json
import os
import re
import shlex
import shutil
import stat
import subprocess
import sys
import tempfile
import types

import pytest

__all__ = ["DEFAULT_SERVICE", "PamWrapper", "pam_wrapper"]

#: The service every fixture provides: pam_matrix.so in all four groups.
DEFAULT_SERVICE = "matrix"

#: Environment variable naming the libpam_wrapper.so to preload.
LIB_ENV = "PAM_WRAPPER_LIB"

#: Environment variable that asks for nss_wrapper (as the ini option
#: pam_wrapper_nss does).
NSS_ENV = "PYTEST_PAM_WRAPPER_NSS"

_REEXEC_MARK = "_PYTEST_PAM_WRAPPER_REEXEC"
#: "<pid>:<dir>": the process whose nss_wrapper files are in <dir>.
_NSS_MARK = "_PYTEST_PAM_WRAPPER_NSS_DIR"
_PLUGIN_NAMES = ("pytest_pam_wrapper", "pam_wrapper")
_FIXTURE = "pam_wrapper"


def wrapper_loaded():
    """Whether a libpam_wrapper.so is in this process (its symbol is)."""
    try:
        return hasattr(ctypes.CDLL(None), "pam_wrapper_enabled")
    except OSError:
        return False


def _mapped(name_re):
    """Paths of the shared objects mapped in this process matching name_re."""
    found = []
    try:
        with open("/proc/self/maps", encoding="utf-8",
                  errors="surrogateescape") as f:
            for line in f:
                parts = line.split(None, 5)
                if len(parts) == 6:
                    path = parts[5].strip()
                    if re.match(name_re, os.path.basename(path)) \
                            and path not in found:
                        found.append(path)
    except OSError:
        pass
    return found


#: The oldest pam_wrapper whose library the plugin takes from pkg-config:
#: the first of this implementation (upstream's 1.1.x wrapper does not
#: resolve the bare "pam_matrix.so" of the fixture's default service).
MIN_PKG_CONFIG_VERSION = "1.2"


def _pkg_config(*args):
    """pkg-config's output for pam_wrapper, or None when it fails."""
    try:
        r = subprocess.run(["pkg-config"] + list(args) + ["pam_wrapper"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           universal_newlines=True, timeout=30, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return r.stdout if r.returncode == 0 else None


def _pkg_config_wrapper():
    """(library, None) from `pkg-config --libs pam_wrapper`, or (None, why)."""
    libs = _pkg_config("--libs")
    if libs is None:
        return None, "`pkg-config --libs pam_wrapper` names none"
    if _pkg_config("--atleast-version=" + MIN_PKG_CONFIG_VERSION) is None:
        return None, ("`pkg-config pam_wrapper` finds version %s, older "
                      "than %s (upstream's, whose wrapper this plugin cannot "
                      "use)" % ((_pkg_config("--modversion") or "?").strip(),
                                MIN_PKG_CONFIG_VERSION))
    for word in libs.split():
        if os.path.basename(word).startswith("libpam_wrapper.so") \
                and os.path.isabs(word) and os.path.exists(word):
            return word, None
    return None, ("`pkg-config --libs pam_wrapper` names no existing "
                  "libpam_wrapper.so: %s" % libs.strip())


def find_wrapper_library():
    """The libpam_wrapper.so to preload, or None.

    $PAM_WRAPPER_LIB when set; else the one next to the libpamtest that
    pypamtest loads (pypamtest finds the libpamtest installed with it);
    else the one of the installed C package (pkg-config pam_wrapper).
    """
    lib = os.environ.get(LIB_ENV)
    if lib:
        return lib
    try:
        import pypamtest  # noqa: F401  (maps libpamtest into the process)
    except ImportError:
        pass
    for path in _mapped(r"libpamtest\.so"):
        libdir = os.path.dirname(path)
        for name in ("libpam_wrapper.so", "libpam_wrapper.so.0"):
            cand = os.path.join(libdir, name)
            if os.path.exists(cand):
                return cand
    return _pkg_config_wrapper()[0]


def _reexec_argv():
    """This interpreter's command line: the same pytest run again."""
    orig = getattr(sys, "orig_argv", None)  # Python >= 3.10
    if orig:
        return list(orig)
    main = sys.argv[0]
    if os.path.basename(main) == "__main__.py":
        return [sys.executable, "-m", "pytest"] + sys.argv[1:]
    return [sys.executable] + sys.argv


def _why_not_reexec(config):
    """None when this process may re-execute itself, else the reason."""
    if hasattr(config, "workerinput") or os.environ.get("PYTEST_XDIST_WORKER"):
        return "this is a pytest-xdist worker"
    if tuple(config.invocation_params.args) != tuple(sys.argv[1:]):
        return "pytest was started from Python code (pytest.main())"
    return None


def _loaded_on_purpose(config):
    """-p, $PYTEST_PLUGINS, pytest_plugins in a conftest, or no entry point
    involved."""
    pm = config.pluginmanager
    names = list(getattr(config.known_args_namespace, "plugins", None) or ())
    names += [n.strip() for n in os.environ.get("PYTEST_PLUGINS", "").split(",")]
    if any(name in _PLUGIN_NAMES for name in names):
        return True
    shim = pm.get_plugin("pam_wrapper")
    if shim is None:
        return True
    for plugin in pm.get_plugins():
        if plugin is shim or not isinstance(plugin, types.ModuleType):
            continue
        specs = getattr(plugin, "pytest_plugins", ())
        if isinstance(specs, str):
            specs = [specs]
        if "pytest_pam_wrapper" in specs:
            return True
    return False


def _nss_wanted(config):
    """Whether the run asked for nss_wrapper (ini or environment)."""
    if os.environ.get(NSS_ENV, "") not in ("", "0"):
        return True
    try:
        return bool(config.getini("pam_wrapper_nss"))
    except (ValueError, KeyError):
        return False


def find_nss_wrapper():
    """libnss_wrapper.so: $PAM_WRAPPER_NSS_LIB, else pkg-config's, else the
    usual library directories; None when it is not installed."""
    lib = os.environ.get("PAM_WRAPPER_NSS_LIB")
    if lib:
        return lib if os.path.exists(lib) else None
    try:
        r = subprocess.run(["pkg-config", "--libs", "nss_wrapper"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           universal_newlines=True, timeout=30, check=False)
        words = r.stdout.split() if r.returncode == 0 else []
    except (OSError, subprocess.SubprocessError):
        words = []
    for cand in [w for w in words if w.startswith("/")] + [
            os.path.join(d, "libnss_wrapper.so")
            for d in ("/usr/lib/%s" % sysconfig_multiarch(), "/usr/lib64",
                      "/usr/lib", "/usr/local/lib")]:
        if os.path.basename(cand).startswith("libnss_wrapper.so") \
                and os.path.exists(cand):
            return cand
    return None


def sysconfig_multiarch():
    import sysconfig
    return sysconfig.get_config_var("MULTIARCH") or ""


def _nss_loaded():
    try:
        return hasattr(ctypes.CDLL(None), "nss_wrapper_enabled")
    except OSError:
        return False


def _read_text(path):
    try:
        with open(path, encoding="utf-8", errors="surrogateescape") as f:
            return f.read()
    except OSError:
        return ""


def _replace(path, text):
    """Writes path anew (rename: nss_wrapper reloads a file whose identity
    changed)."""
    tmp = path + ".new"
    with open(tmp, "w", encoding="utf-8", errors="surrogateescape") as f:
        f.write(text)
    os.replace(tmp, path)


def _nss_setup():
    """In a process with nss_wrapper preloaded, before its first lookup:
    its passwd and group are files of this process (copies of the system's
    /etc/passwd and /etc/group), which use_system() adds the test's users
    to.  A process started by another (an xdist worker) makes its own."""
    mark = os.environ.get(_NSS_MARK, "")
    if not _nss_loaded() or mark.startswith("%d:" % os.getpid()):
        return
    if "NSS_WRAPPER_PASSWD" in os.environ and not mark:
        return  # the user's own nss_wrapper files: left alone
    d = tempfile.mkdtemp(prefix="pytest-pam-wrapper-nss.")
    for name in ("passwd", "group"):
        text = _read_text("/etc/" + name)
        if text and not text.endswith("\n"):
            text += "\n"
        _replace(os.path.join(d, name), text)
        os.chmod(os.path.join(d, name), 0o644)
    os.environ["NSS_WRAPPER_PASSWD"] = os.path.join(d, "passwd")
    os.environ["NSS_WRAPPER_GROUP"] = os.path.join(d, "group")
    os.environ[_NSS_MARK] = "%d:%s" % (os.getpid(), d)


def _nss_dir():
    """This process's nss_wrapper directory, or None."""
    mark = os.environ.get(_NSS_MARK, "")
    pid, _, d = mark.partition(":")
    return d if pid == str(os.getpid()) and d else None


def _reexec(config, late):
    if _REEXEC_MARK in os.environ:
        # Never twice: we already ran again and it did not help.
        _check_after_reexec()
    lib = find_wrapper_library()
    if lib is None or not os.path.exists(lib):
        raise pytest.UsageError(
            "pytest_pam_wrapper: libpam_wrapper.so is not loaded and %s; "
            "install pam_wrapper's C package (Debian: libpam-wrapper), or "
            "set %s=/path/to/libpam_wrapper.so, or run pytest with "
            "LD_PRELOAD=/path/to/libpam_wrapper.so PAM_WRAPPER=1"
            % ("%s=%s does not exist" % (LIB_ENV, lib) if lib else
               "no such library was found (%s is not set, none is next to "
               "pypamtest's libpamtest, and %s)"
               % (LIB_ENV, _pkg_config_wrapper()[1]), LIB_ENV))
    env = dict(os.environ)
    preload = [p for p in re.split(r"[: ]", env.get("LD_PRELOAD", "")) if p]
    # After what is there: sanitizer runtimes must stay first.
    extra = [lib]
    if _nss_wanted(config) and not _nss_loaded():
        nss = find_nss_wrapper()
        if nss is None:
            raise pytest.UsageError(
                "pytest_pam_wrapper: pam_wrapper_nss asks for nss_wrapper, "
                "but libnss_wrapper.so is not installed (Debian: apt-get "
                "install libnss-wrapper; or set PAM_WRAPPER_NSS_LIB)")
        extra = [nss, lib]
    env["LD_PRELOAD"] = ":".join(preload + extra)
    env["PAM_WRAPPER"] = "1"
    env[_REEXEC_MARK] = lib
    capman = config.pluginmanager.getplugin("capturemanager")
    if capman is not None:
        capman.stop_global_capturing()
    if late:
        sys.stderr.write("pytest_pam_wrapper: running pytest again with "
                         "LD_PRELOAD=%s for the pam_wrapper fixture\n" % lib)
    sys.stdout.flush()
    sys.stderr.flush()
    os.execve(sys.executable, _reexec_argv(), env)


def _check_after_reexec():
    """After our re-execution: the wrapper must be there now."""
    lib = os.environ.pop(_REEXEC_MARK, None)
    if lib is not None and not wrapper_loaded():
        raise pytest.UsageError(
            "pytest_pam_wrapper: pytest was re-run with LD_PRELOAD=%s but "
            "libpam_wrapper.so is still not loaded (is LD_PRELOAD removed "
            "by a wrapper script? A sanitizer build of the library needs "
            "the sanitizer runtime in LD_PRELOAD first)" % lib)


def pytest_addoption(parser):
    parser.addini("pam_wrapper_nss", type="bool", default=False,
                  help="pytest_pam_wrapper: preload nss_wrapper too, for "
                  "the pam_wrapper fixture's use_system()")


@pytest.hookimpl(tryfirst=True)
def pytest_configure(config):
    # Also reached when the plugin is registered late (a test module's
    # pytest_plugins), where pytest_cmdline_main is not: a successful
    # re-run must not leave its mark to the tests' child processes.
    if wrapper_loaded():
        os.environ.pop(_REEXEC_MARK, None)
    _nss_setup()


def pytest_unconfigure(config):
    d = _nss_dir()
    if d is not None:
        shutil.rmtree(d, ignore_errors=True)


@pytest.hookimpl(tryfirst=True)
def pytest_cmdline_main(config):
    _check_after_reexec()
    if wrapper_loaded() or config.option.help or config.option.version:
        return None
    if _why_not_reexec(config) is None and _loaded_on_purpose(config):
        _reexec(config, late=False)
    return None


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    config = session.config
    if wrapper_loaded() or config.option.collectonly \
            or _why_not_reexec(config) is not None:
        return
    if any(_FIXTURE in getattr(item, "fixturenames", ())
           for item in session.items):
        _reexec(config, late=True)


def pytest_report_header(config):
    libs = _mapped(r"libpam_wrapper\.so")
    if libs:
        return "pam_wrapper: %s" % libs[0]
    return None


def _check_name(what, value, extra=""):
    if not isinstance(value, str):
        raise TypeError("%s must be a str, not %s"
                        % (what, type(value).__name__))
    bad = set(":\n\0" + extra).intersection(value)
    if bad:
        raise ValueError("%s %r may not contain %s" % (
            what, value, " or ".join(repr(c) for c in sorted(bad))))


def _lowercases_services():
    """Whether the libpam in this process lowercases service names
    (Linux-PAM does, OpenPAM keeps them as given)."""
    for path in _mapped(r"libpam\.so"):
        try:
            return not hasattr(ctypes.CDLL(path), "openpam_get_feature")
        except OSError:
            pass
    return True


_OPENPAM_SERVICE_CHARS = frozenset(
    "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-")


def _check_service_case(what, value):
    if not _lowercases_services():
        if not _OPENPAM_SERVICE_CHARS.issuperset(value):
            raise ValueError(
                "%s %r: OpenPAM accepts only letters, digits, '.', '_' and "
                "'-' in a service name (pam_start() refuses any other), so "
                "it would never be used" % (what, value))
    elif value != value.lower():
        raise ValueError(
            "%s %r has capitals: Linux-PAM lowercases service names "
            "(pam_start() reads the file of the lowercase name, and modules "
            "see that name), so it would never be used; write %r (run() "
            "may still be given %r)" % (what, value, value.lower(), value))


def _runtime_dir():
    """The wrapper's runtime directory (created now if needed), or None."""
    try:
        fn = ctypes.CDLL(None).pam_wrapper_runtime_dir
    except (OSError, AttributeError):
        return os.environ.get("PAM_WRAPPER_RUNTIME_DIR")
    fn.restype = ctypes.c_char_p
    fn.argtypes = []
    value = fn()
    if not value:
        return os.environ.get("PAM_WRAPPER_RUNTIME_DIR")
    return os.fsdecode(value)


class PamWrapper:
    """One test's PAM setup; the ``pam_wrapper`` fixture's value.

    Attributes: ``service_dir`` (PAM_WRAPPER_SERVICE_DIR), ``passdb``
    (pam_matrix's password database, also PAM_MATRIX_PASSWD), ``dir`` (the
    directory holding both), ``system_dir`` and ``swaps`` (after
    use_system()), ``runtime_dir`` (the wrapper's
    PAM_WRAPPER_RUNTIME_DIR, shared by the tests of one process),
    ``default_service`` (DEFAULT_SERVICE) and ``trace_file`` (the module
    trace's file after enable_trace(), else None).
    """

    default_service = DEFAULT_SERVICE

    def __init__(self, directory):
        self.dir = str(directory)
        self.service_dir = os.path.join(self.dir, "services")
        self.passdb = os.path.join(self.dir, "passdb")
        self.runtime_dir = None
        self.trace_file = None
        #: use_system(): the private state directory (PAM_WRAPPER_SYSTEM_DIR)
        self.system_dir = None
        #: use_system(): what became of each module line (swaps.json)
        self.swaps = []
        self._nss_users = []      # names, in the order given
        self._nss_groups = {}     # name -> [members]
        self._nss_base = None     # (passwd, group) to put back
        os.makedirs(self.service_dir, exist_ok=True)
        with open(self.passdb, "w", encoding="utf-8"):
            pass
        arg = "passdb=" + self.passdb
        if re.search(r"\s", arg):
            arg = "[" + arg.replace("]", "\\]") + "]"
        self.add_service(DEFAULT_SERVICE, "".join(
            "%-8s required pam_matrix.so %s\n" % (group, arg)
            for group in ("auth", "account", "password", "session")))

    def add_user(self, name, password, service=None, flags=None):
        """Add ``name:password:service[:flags]`` to the passdb.

        service defaults to the default service ("*", every service, after
        use_system(); the user is then also given to nss_wrapper).  flags
        (account states for pam_matrix) is a str ("locked" or
        "locked,expired") or a list of str, written as a fourth field;
        without flags there is none.  A user added again replaces its
        earlier line.
        """
        if service is None:
            service = "*" if self.system_dir else DEFAULT_SERVICE
        _check_name("user name", name)
        if not name:
            raise ValueError("the user name may not be empty")
        if name.startswith("#"):
            raise ValueError("user name %r starts with '#': pam_matrix reads "
                             "that passdb line as a comment" % name)
        _check_name("password", password)
        _check_name("service", service)
        if service != "*" or not self.system_dir:
            _check_service_case("service", service)
        fields = [name, password, service]
        if flags is not None:
            if isinstance(flags, str):
                flags = flags.split(",") if flags else []
            else:
                flags = list(flags)
            for flag in flags:
                _check_name("flag", flag, ", \t")
                if not flag:
                    raise ValueError("empty account flag in %r" % (flags,))
            if flags:
                fields.append(",".join(flags))
        with open(self.passdb, encoding="utf-8") as f:
            lines = [line for line in f
                     if line.split(":", 1)[0] != name]
        lines.append(":".join(fields) + "\n")
        tmp = self.passdb + ".new"
        with open(tmp, "w", encoding="utf-8") as f:
            f.writelines(lines)
        os.replace(tmp, self.passdb)
        if self.system_dir and name not in self._nss_users:
            self._nss_users.append(name)
            self._write_nss()

    def add_group(self, name, members=()):
        """After use_system(): the group name with these members (user
        names), for nss_wrapper (pam_wheel, pam_succeed_if, ...).  A group
        named as a user gives that user's own group its members."""
        if not self.system_dir:
            raise RuntimeError("pam_wrapper.add_group: call "
                               "pam_wrapper.use_system() first")
        _check_name("group name", name, ", /")
        members = [members] if isinstance(members, str) else list(members)
        for m in members:
            _check_name("member", m, ", /")
        self._nss_groups[name] = members
        self._write_nss()

    def use_system(self, users=(), groups=None, swaps=None, source=None,
                   services=None, nss=True):
        """Run the machine's own PAM stacks from now on (pam_wrapper(1),
        SYSTEM STACKS): a private copy of source (default /etc/pam.d) in
        which modules that need root, a daemon or real accounts are test
        doubles and modules with state keep it in ``system_dir``.

        users: (name, password) pairs, or (name, password, service[,
        flags]), or a dict name -> password; they log in to every service
        through the doubles of the account sources (pam_unix, pam_sss, ...)
        and exist for nss_wrapper.  groups: dict name -> members.  swaps:
        dict module -> replacement (real, matrix, standin, standin:CODE or
        a module's path), as --swap.  services: only these services' files
        (and "other" and what they include) are copied and checked.  nss:
        False runs without nss_wrapper (the real modules then do not know
        the test's users).  The copy is made by ``pam_wrapper --system
        --prepare``, whose report (what became of each module) goes to
        standard error; ``swaps`` holds it as records.  Returns
        system_dir.  run() then uses the copy; the default service is no
        longer there.
        """
        import pypamtest

        if self.system_dir:
            raise RuntimeError("pam_wrapper.use_system() called twice")
        if nss and _nss_dir() is None:
            pytest.fail(
                "pam_wrapper.use_system(): nss_wrapper is not set up in this "
                "process; set pam_wrapper_nss = true in the pytest ini file "
                "(or PYTEST_PAM_WRAPPER_NSS=1) so that the plugin preloads "
                "libnss_wrapper.so (Debian: libnss-wrapper), or pass "
                "nss=False", pytrace=False)
        prepared = os.path.join(self.dir, "system")
        cmd = [pypamtest.tool_path("pam_wrapper"),
               "--system" if source is None else "--system=" + str(source),
               "--prepare", prepared]
        for svc in services or ():
            cmd += ["--service", svc]
        for module, repl in (swaps or {}).items():
            cmd += ["--swap", "%s=%s" % (module, repl)]
        r = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, timeout=120, check=False)
        sys.stderr.write(r.stderr)
        if r.returncode != 0:
            pytest.fail("pam_wrapper.use_system(): %s failed (exit %d):\n%s"
                        % (" ".join(shlex.quote(c) for c in cmd),
                           r.returncode, r.stderr), pytrace=False)
        env = dict(shlex.split(line)[0].split("=", 1)
                   for line in r.stdout.splitlines() if "=" in line)
        self.service_dir = env["PAM_WRAPPER_SERVICE_DIR"]
        self.system_dir = env["PAM_WRAPPER_SYSTEM_DIR"]
        # the copy names its passdb on the account sources' lines: the
        # users (also those added before) go there
        with open(self.passdb, encoding="utf-8") as f:
            before = f.read()
        self.passdb = env["PAM_MATRIX_PASSWD"]
        _replace(self.passdb, before)
        os.environ["PAM_MATRIX_PASSWD"] = self.passdb
        os.environ["PAM_WRAPPER_SERVICE_DIR"] = self.service_dir
        os.environ["PAM_WRAPPER_SYSTEM_DIR"] = self.system_dir
        with open(os.path.join(prepared, "swaps.json"), encoding="utf-8") as f:
            self.swaps = [json.loads(line) for line in f if line.strip()]
        if self.trace_file is not None:
            self._trace_swaps()
        if nss:
            d = _nss_dir()
            self._nss_base = (_read_text(os.path.join(d, "passwd")),
                              _read_text(os.path.join(d, "group")))
        if isinstance(users, dict):
            users = users.items()
        for u in users:
            self.add_user(*u)
        for name, members in (groups or {}).items():
            self.add_group(name, members)
        if nss:
            self._write_nss()
        return self.system_dir

    def _write_nss(self):
        """The test's users and groups into this process's nss_wrapper
        files (and system_dir's passwd and group, which pam_localuser
        reads): uid = gid from 1000 up, skipping the ids taken."""
        if self._nss_base is None:
            return
        base_pw, base_gr = self._nss_base
        taken = set()
        names = set()
        for line in (base_pw + base_gr).splitlines():
            f = line.split(":")
            if len(f) > 2 and f[2].isdigit():
                taken.add(int(f[2]))
                names.add(f[0])
        pw, gr, nxt = [], [], 1000
        for name in self._nss_users:
            while nxt in taken:
                nxt += 1
            taken.add(nxt)
            pw.append("%s:x:%d:%d:%s:/home/%s:/bin/sh\n" % (name, nxt, nxt,
                                                          name, name))
            gr.append("%s:x:%d:%s\n" % (name, nxt, ",".join(
                self._nss_groups.get(name, ()))))
        own = set(self._nss_users)
        base_lines = []
        for line in base_gr.splitlines(True):
            f = line.rstrip("\n").split(":")
            if len(f) == 4 and f[0] in self._nss_groups and f[0] not in own:
                f[3] = ",".join(m for m in [f[3]] + list(
                    self._nss_groups[f[0]]) if m)
                line = ":".join(f) + "\n"
            base_lines.append(line)
        for name, members in self._nss_groups.items():
            if name in own or name in names:
                continue
            while nxt in taken:
                nxt += 1
            taken.add(nxt)
            gr.append("%s:x:%d:%s\n" % (name, nxt, ",".join(members)))
        text_pw = base_pw + "".join(pw)
        text_gr = "".join(base_lines) + "".join(gr)
        d = _nss_dir()
        for where in (d, self.system_dir):
            _replace(os.path.join(where, "passwd"), text_pw)
            _replace(os.path.join(where, "group"), text_gr)

    def _restore_nss(self):
        if self._nss_base is not None:
            d = _nss_dir()
            _replace(os.path.join(d, "passwd"), self._nss_base[0])
            _replace(os.path.join(d, "group"), self._nss_base[1])
            self._nss_base = None

    def _trace_swaps(self):
        """The swap records go first into the trace file."""
        with open(os.path.join(self.dir, "system", "swaps.json"),
                  encoding="utf-8") as src, \
                open(self.trace_file, "a", encoding="utf-8") as dst:
            dst.write(src.read())

    def add_service(self, name, text):
        """Write the service file ``name`` (replacing it); returns its path.

        text is the file's content, or a list of its lines.
        """
        _check_name("service name", name, "/")
        if not name or name.startswith("."):
            raise ValueError("invalid service name %r" % name)
        _check_service_case("service name", name)
        if not isinstance(text, str):
            text = "".join(line + "\n" for line in text)
        path = os.path.join(self.service_dir, name)
        with open(path, "w", encoding="utf-8") as f:
            f.write(text)
        return path

    def enable_trace(self):
        """Record every module call from now on (PAM_WRAPPER_TRACE).

        Every transaction started afterwards in this test, in this process
        or in a child process it starts, appends its records (JSON lines)
        to ``trace_file``; ``trace`` reads them.  The variable is restored
        after the test.  Returns the file's path.
        """
        first = self.trace_file is None
        if self.trace_file is None:
            self.trace_file = os.path.join(self.dir, "trace.jsonl")
        os.environ["PAM_WRAPPER_TRACE"] = self.trace_file
        os.environ["PAM_WRAPPER_TRACE_FORMAT"] = "json"
        if first and self.system_dir:
            self._trace_swaps()
        return self.trace_file

    @property
    def trace(self):
        """The records written since enable_trace(): a list of dicts, one
        per record (start, module, result; see libpam_wrapper(7))."""
        import pypamtest

        if self.trace_file is None:
            raise RuntimeError("pam_wrapper.trace: call "
                               "pam_wrapper.enable_trace() first")
        if not os.path.exists(self.trace_file):
            return []
        return pypamtest.read_trace(self.trace_file)

    def run(self, service, user, tests, echo_off=(), echo_on=(), **kwargs):
        """pypamtest.run_pamtest(user, service, ...) on this test's services.

        service None is the default service.  tests holds
        pypamtest.TestCase objects or PAMTEST_* operations (which must
        return PAM_SUCCESS).  Other keyword arguments (handle=,
        conv_fail_at=, trace=True, ...) go to run_pamtest.  Returns its
        TestResult and raises its PamTestError.
        """
        import pypamtest

        if service is None:
            service = DEFAULT_SERVICE
        cases = [t if isinstance(t, pypamtest.TestCase)
                 else pypamtest.TestCase(t) for t in tests]
        # The test may have pointed it elsewhere: this fixture's services
        # (the system's copy after use_system()).
        os.environ["PAM_WRAPPER_SERVICE_DIR"] = self.service_dir
        return pypamtest.run_pamtest(user, service, cases,
                                     echo_off=list(echo_off),
                                     echo_on=list(echo_on), **kwargs)

    def explore(self, service=None, type="all", **kwargs):
        """pypamtest.explore(service, type, ...) on this test's services.

        The decision table and findings of the stack (pamtest-explore(1)),
        checked on libpam.  service None is the default service; other
        keyword arguments (outcomes=, model=, must=, ...) go to
        pypamtest.explore.  Returns its json: a dict for one type, a list
        of four for "all".
        """
        import pypamtest

        if service is None:
            service = DEFAULT_SERVICE
        kwargs.setdefault("service_dir", self.service_dir)
        return pypamtest.explore(service, type, **kwargs)


_ENV = ("PAM_WRAPPER", "PAM_WRAPPER_SERVICE_DIR", "PAM_MATRIX_PASSWD",
        "PAM_WRAPPER_TRACE", "PAM_WRAPPER_TRACE_FORMAT",
        "PAM_WRAPPER_SYSTEM_DIR")


def _entries(directory):
    """Name -> identity (type, inode, size, times) of what is in directory."""
    found = {}
    try:
        names = os.listdir(directory) if directory else []
    except OSError:
        return found
    for name in names:
        try:
            st = os.lstat(os.path.join(directory, name))
        except OSError:
            continue
        found[name] = (st.st_mode, st.st_ino, st.st_size, st.st_mtime_ns,
                       st.st_ctime_ns)
    return found


def _remove_changes(directory, before):
    """Remove what was added to directory, or changed in it, since before.

    The wrapper's own copies of service files are among them (it copies the
    test's services); it copies them again at the next pam_start().
    """
    for name, ident in _entries(directory).items():
        if before.get(name) == ident:
            continue
        path = os.path.join(directory, name)
        try:
            if stat.S_ISDIR(ident[0]):
                shutil.rmtree(path)
            else:
                os.unlink(path)
        except FileNotFoundError:
            pass


@pytest.fixture
def pam_wrapper(tmp_path_factory, request):
    """A private service directory and passdb for this test (PamWrapper)."""
    if not wrapper_loaded():
        why = _why_not_reexec(request.config)
        pytest.fail(
            "pam_wrapper fixture: libpam_wrapper.so is not loaded in this "
            "process%s.  Load the plugin on purpose (pytest -p "
            "pytest_pam_wrapper, or pytest_plugins = "
            "[\"pytest_pam_wrapper\"] in conftest.py) so that it re-runs "
            "pytest under LD_PRELOAD itself, or start pytest with "
            "LD_PRELOAD=/path/to/libpam_wrapper.so PAM_WRAPPER=1"
            % (" (and the plugin cannot re-run pytest: %s)" % why
               if why else ""), pytrace=False)
    saved = {k: os.environ.get(k) for k in _ENV}
    pw = PamWrapper(tmp_path_factory.mktemp("pam_wrapper"))
    os.environ["PAM_WRAPPER"] = "1"
    os.environ["PAM_WRAPPER_SERVICE_DIR"] = pw.service_dir
    os.environ["PAM_MATRIX_PASSWD"] = pw.passdb
    before = None
    try:
        import pypamtest  # noqa: F401  (publishes PAM_WRAPPER_RUNTIME_DIR)
        pw.runtime_dir = _runtime_dir()
        if pw.runtime_dir and "PAM_WRAPPER_RUNTIME_DIR" not in os.environ:
            os.environ["PAM_WRAPPER_RUNTIME_DIR"] = pw.runtime_dir
        before = _entries(pw.runtime_dir)
        yield pw
    finally:
        pw._restore_nss()
        if before is not None and pw.runtime_dir:
            _remove_changes(pw.runtime_dir, before)
        for k, v in saved.items():
            if v is None:
                os.environ.pop(k, None)
            else:
                os.environ[k] = v
