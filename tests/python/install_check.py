# SPDX-License-Identifier: BSD-3-Clause
#
# Checks pypamtest's staged installation: installs the build into a DESTDIR
# below $TMPDIR (configured prefix), then verifies that the module, named
# pypamtest<EXT_SUFFIX>, and its stub land in the chosen directory (the
# interpreter's own platlib for Debian's /usr/local default), that its
# RUNPATH is the expected one (relative to the module: it survives DESTDIR,
# --prefix and a moved prefix), and that the staged copy imports and loads
# the staged libpamtest, with no LD_LIBRARY_PATH.  Not a pytest file: it
# writes the build tree's install_manifest.txt, so it does not run as nobody.
# Usage: install_check.py CMAKE BUILD_DIR PY_INSTALL_DIR INSTALL_PREFIX
#                         EXT_SUFFIX RPATH
#        (PY_INSTALL_DIR as configured: relative to the prefix, or absolute)
import os
import shutil
import subprocess
import sys
import sysconfig
import tempfile


def main():
    cmake, build, pydir, prefix, suffix, rpath = sys.argv[1:7]
    assert suffix == sysconfig.get_config_var("EXT_SUFFIX"), suffix
    full = pydir if os.path.isabs(pydir) else os.path.join(prefix, pydir)
    if prefix.rstrip("/") == "/usr/local":
        assert full == sysconfig.get_path("platlib"), (full, "not platlib")
    dest = tempfile.mkdtemp(prefix="pypamtest-install-")
    try:
        env = dict(os.environ, DESTDIR=dest)
        env.pop("LD_PRELOAD", None)
        subprocess.run([cmake, "--install", build], env=env, check=True,
                       stdout=subprocess.DEVNULL)
        staged = dest + full
        so = os.path.join(staged, "pypamtest" + suffix)
        assert os.path.isfile(so), so
        assert os.path.isfile(os.path.join(staged, "pypamtest.pyi"))
        assert not os.path.exists(os.path.join(staged, "pypamtest.so"))

        dyn = subprocess.run(["readelf", "-d", so], check=True,
                             capture_output=True, text=True).stdout
        assert "(RUNPATH)" in dyn and "[%s]" % rpath in dyn, (rpath, dyn)

        env = dict(os.environ, PYTHONPATH=staged)
        for k in ("LD_PRELOAD", "LD_LIBRARY_PATH"):
            env.pop(k, None)
        out = subprocess.run(
            [sys.executable, "-c",
             "import pypamtest; print(pypamtest.__file__); "
             "print(pypamtest.TestCase(0)); "
             "print([l.split()[-1] for l in open('/proc/self/maps') "
             "if 'libpamtest.so' in l][0])"],
            env=env, check=True, capture_output=True, text=True).stdout
        lines = out.splitlines()
        assert lines[:2] == [
            so, "{ pam_operation [0] expected_rv [0] flags [0] }"], out
        # The libpamtest installed with it, not another one on the system.
        assert lines[2].startswith(dest + "/"), out
    finally:
        shutil.rmtree(dest, ignore_errors=True)
    print("install_check: pypamtest installs to", full)


if __name__ == "__main__":
    main()
