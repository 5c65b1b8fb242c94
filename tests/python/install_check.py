# SPDX-License-Identifier: BSD-3-Clause
#
# Checks pypamtest's installation: installs the build into a DESTDIR below
# $TMPDIR, then verifies that pypamtest.so and its stub land in the chosen
# platlib (the interpreter's own platlib for the default prefix), that the
# module's RUNPATH names the installed libdir when that is not a system
# directory, and that the installed copy imports.  Not a pytest file: it
# writes the build tree's install_manifest.txt, so it does not run as nobody.
# Usage: install_check.py CMAKE BUILD_DIR PY_INSTALL_DIR INSTALL_PREFIX LIBDIR
#                         [RPATH]   (RPATH: the expected one, absent for none)
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile


def main():
    cmake, build, pydir, prefix, libdir = sys.argv[1:6]
    rpath = sys.argv[6] if len(sys.argv) > 6 else ""
    if prefix.rstrip("/") == "/usr/local":
        assert pydir == sysconfig.get_path("platlib"), (pydir, "not platlib")
    dest = tempfile.mkdtemp(prefix="pypamtest-install-")
    try:
        env = dict(os.environ, DESTDIR=dest)
        env.pop("LD_PRELOAD", None)
        subprocess.run([cmake, "--install", build], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        staged = dest + pydir
        so = os.path.join(staged, "pypamtest.so")
        assert os.path.isfile(so), so
        assert os.path.isfile(os.path.join(staged, "pypamtest.pyi"))

        dyn = subprocess.run(["readelf", "-d", so], check=True,
                             capture_output=True, text=True).stdout
        if rpath:
            assert "(RUNPATH)" in dyn and "[%s]" % rpath in dyn, dyn
        else:
            assert "(RUNPATH)" not in dyn and "(RPATH)" not in dyn, dyn

        env = dict(os.environ, PYTHONPATH=staged,
                   LD_LIBRARY_PATH=dest + libdir)
        env.pop("LD_PRELOAD", None)
        out = subprocess.run(
            [sys.executable, "-c",
             "import pypamtest; print(pypamtest.__file__); "
             "print(pypamtest.TestCase(0))"],
            env=env, check=True, capture_output=True, text=True).stdout
        assert out.splitlines() == [
            so, "{ pam_operation [0] expected_rv [0] flags [0] }"], out
    finally:
        shutil.rmtree(dest, ignore_errors=True)
    print("install_check: pypamtest installs to", pydir)


if __name__ == "__main__":
    main()
