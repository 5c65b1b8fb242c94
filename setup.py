# SPDX-License-Identifier: BSD-3-Clause
"""setuptools build of the pypamtest extension module (metadata, the
pytest_pam_wrapper package and its entry point: pyproject.toml).

The module is src/python/pypamtest.c with libpamtest's conversation
(src/libpamtest/pamtest_conv.c, hidden symbols) compiled in, as CMake
builds it.  Which libpamtest it uses is chosen by PYPAMTEST_LIBPAMTEST:

  bundled (default)  src/libpamtest/libpamtest.c is compiled into the
                     module too: the module needs only libpam at run time,
                     and a wheel works with any C package of ours.
  pkg-config         the installed libpamtest that `pkg-config libpamtest`
                     finds, which must be this project's (version >= this
                     tree's major.minor: Debian's and upstream's 1.1.x lack
                     _pamtest_faults); the module gets a RUNPATH to its
                     libdir unless that is a system library directory.

Either way it links libpam and libdl.  The pytest plugin finds
libpam_wrapper.so at run time ($PAM_WRAPPER_LIB, next to libpamtest, or
`pkg-config --libs pam_wrapper`), never through a path written here.
The version is the one of CMakeLists.txt's project() line.  setuptools'
intermediate files go to build-python/ (build/ is CMake's in this tree).
"""
import os
import re
import subprocess
import sysconfig

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext
from setuptools.command.build_py import build_py

HERE = os.path.dirname(os.path.abspath(__file__))
BUILD_BASE = "build-python"
MODES = ("bundled", "pkg-config")


def project_version():
    with open(os.path.join(HERE, "CMakeLists.txt"), encoding="utf-8") as f:
        m = re.search(r"project\(pam_wrapper\s+VERSION\s+([0-9.]+)", f.read())
    if not m:
        raise SystemExit("setup.py: no version in CMakeLists.txt's project()")
    return m.group(1)


def pkg_config(*args):
    """pkg-config's output split into words; SystemExit when it fails."""
    try:
        r = subprocess.run(["pkg-config"] + list(args) + ["libpamtest"],
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           universal_newlines=True, check=False)
    except OSError as e:
        raise SystemExit("setup.py: PYPAMTEST_LIBPAMTEST=pkg-config, but "
                         "pkg-config cannot run: %s" % e)
    if r.returncode != 0:
        raise SystemExit("setup.py: PYPAMTEST_LIBPAMTEST=pkg-config, but "
                         "`pkg-config %s libpamtest` failed: %s"
                         % (" ".join(args), r.stderr.strip()))
    return r.stdout.split()


def system_libdirs():
    dirs = {"/lib", "/usr/lib", "/lib64", "/usr/lib64"}
    multiarch = sysconfig.get_config_var("MULTIARCH")
    if multiarch:
        dirs |= {"/lib/" + multiarch, "/usr/lib/" + multiarch}
    return dirs


def libpamtest_args(version):
    """Extension() keyword arguments for the chosen libpamtest."""
    mode = os.environ.get("PYPAMTEST_LIBPAMTEST", "bundled")
    if mode not in MODES:
        raise SystemExit("setup.py: PYPAMTEST_LIBPAMTEST=%s: use one of %s"
                         % (mode, ", ".join(MODES)))
    if mode == "bundled":
        return {"sources": ["src/libpamtest/libpamtest.c"],
                "include_dirs": ["include"], "libraries": [],
                "library_dirs": [], "runtime_library_dirs": []}
    need = ".".join(version.split(".")[:2])
    found = (pkg_config("--modversion") or ["(none)"])[0]
    libdir = (pkg_config("--variable=libdir") or [""])[0]
    try:
        pkg_config("--atleast-version=" + need)
    except SystemExit:
        raise SystemExit(
            "setup.py: PYPAMTEST_LIBPAMTEST=pkg-config: the libpamtest "
            "pkg-config finds (in %s) is version %s; this pypamtest needs "
            "pam_wrapper's libpamtest %s or later (1.1.x lacks "
            "_pamtest_faults).  Point PKG_CONFIG_PATH at this project's "
            "installation, or build with PYPAMTEST_LIBPAMTEST=bundled"
            % (libdir or "?", found, need)) from None
    cflags = pkg_config("--cflags-only-I")
    ldirs = [w[2:] for w in pkg_config("--libs-only-L")]
    libs = [w[2:] for w in pkg_config("--libs-only-l")]
    rpath = [libdir] if libdir and libdir not in system_libdirs() else []
    return {"sources": [], "include_dirs": [w[2:] for w in cflags],
            "libraries": libs, "library_dirs": ldirs,
            "runtime_library_dirs": rpath}


class BuildExt(build_ext):
    """Marks an OpenPAM build (security/openpam.h found), as CMake does."""

    def build_extensions(self):
        dirs = list(self.compiler.include_dirs)
        for ext in self.extensions:
            dirs += ext.include_dirs
        for var in ("CPATH", "C_INCLUDE_PATH"):
            dirs += [d for d in os.environ.get(var, "").split(":") if d]
        dirs += ["/usr/local/include", "/usr/include"]
        if any(os.path.exists(os.path.join(d, "security", "openpam.h"))
               for d in dirs):
            for ext in self.extensions:
                ext.define_macros.append(("PWRAP_OPENPAM", None))
        super().build_extensions()


class BuildPy(build_py):
    """Puts the module's type stub next to it."""

    def run(self):
        super().run()
        self.copy_file(os.path.join("src", "python", "pypamtest.pyi"),
                       os.path.join(self.build_lib, "pypamtest.pyi"))


def main():
    version = project_version()
    os.makedirs(os.path.join(HERE, BUILD_BASE), exist_ok=True)
    lpt = libpamtest_args(version)
    ext = Extension(
        "pypamtest",
        sources=["src/python/pypamtest.c", "src/python/pypamtest_trace.c",
                 "src/python/pypamtest_explore.c",
                 "src/libpamtest/pamtest_conv.c"]
        + lpt["sources"],
        include_dirs=lpt["include_dirs"] + ["src/libpamtest"],
        libraries=lpt["libraries"] + ["pam", "dl"],
        library_dirs=lpt["library_dirs"],
        runtime_library_dirs=lpt["runtime_library_dirs"],
        extra_compile_args=["-std=c11", "-fvisibility=hidden"],
    )
    # (Here, not in pyproject.toml: [tool.setuptools] is "beta" in
    # Debian 12's setuptools 66 and warns.)
    setup(version=version, ext_modules=[ext],
          packages=["pytest_pam_wrapper"],
          package_dir={"pytest_pam_wrapper": "src/python/pytest_pam_wrapper"},
          include_package_data=False,
          cmdclass={"build_ext": BuildExt, "build_py": BuildPy},
          # Always compiled again: which libpamtest is linked is not in
          # the sources' timestamps that setuptools compares.
          options={"build": {"build_base": BUILD_BASE},
                   "build_ext": {"force": True},
                   "egg_info": {"egg_base": BUILD_BASE}})


main()
