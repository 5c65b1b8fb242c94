#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The Python package (pyproject.toml, setup.py) as pip users get it, offline
# (--no-build-isolation --no-index: Debian's setuptools and wheel):
#   1. `pip install --no-build-isolation .` in a virtualenv made with
#      --system-site-packages; pytest finds the pam_wrapper fixture with no
#      -p and no pytest_plugins, the library given by PAM_WRAPPER_LIB;
#      without it and without a C package pkg-config knows, a clear error;
#      `pip uninstall pypamtest` removes everything it installed;
#   2. `pip wheel --no-build-isolation --no-deps .`: the wheel's contents;
#   3. PYPAMTEST_LIBPAMTEST=pkg-config against a `cmake --install` prefix:
#      pypamtest loads that libpamtest, and the plugin finds that prefix's
#      libpam_wrapper.so through pkg-config, with nothing in the
#      environment; an older libpamtest (Debian's 1.1.4) is refused;
#   4. the dist-info that `cmake --install` writes is removed by
#      `pip uninstall pypamtest`.
# The tree is copied first: pip and setuptools write next to setup.py.
# Usage: test_pip.sh BUILD_DIR
# Environment: PWRAP_SOURCE_DIR, PWRAP_PYTHON, PWRAP_CMAKE, PWRAP_LIB.
set -euo pipefail
build=${1:?usage: test_pip.sh BUILD_DIR}
src=${PWRAP_SOURCE_DIR:?}
python=${PWRAP_PYTHON:-/usr/bin/python3}
cmake=${PWRAP_CMAKE:-cmake}
skip() { echo "SKIPPED: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

for m in venv ensurepip setuptools wheel; do
  "$python" -c "import $m" 2>/dev/null \
    || skip "$python cannot import $m (Debian: python3-venv, python3-setuptools, python3-wheel)"
done
work=$(mktemp -d "${TMPDIR:-/tmp}/pwrap-pip.XXXXXX")
trap 'rm -rf "$work"' EXIT
# pip: no configuration, cache or index of this machine's.
unset PIP_FIND_LINKS PIP_INDEX_URL PIP_EXTRA_INDEX_URL PAM_WRAPPER_LIB LD_PRELOAD \
      PAM_WRAPPER PYTHONPATH PYPAMTEST_LIBPAMTEST
export PIP_CONFIG_FILE=/dev/null PIP_NO_CACHE_DIR=1 PIP_DISABLE_PIP_VERSION_CHECK=1 \
       PYTHONDONTWRITEBYTECODE=1
mkdir "$work/tree"
tar -C "$src" --exclude='./build*' --exclude=./.git --exclude='./obj-*' -cf - . \
  | tar -C "$work/tree" -xf -
no_pc_env=(PKG_CONFIG_LIBDIR=/nonexistent PKG_CONFIG_PATH=)

mkdir "$work/project"
cat > "$work/project/test_login.py" <<'EOF'
import pypamtest


def test_login(pam_wrapper):
    pam_wrapper.add_user("alice", "secret")
    pam_wrapper.run(None, "alice", [pypamtest.PAMTEST_AUTHENTICATE,
                                    pypamtest.PAMTEST_ACCOUNT],
                    echo_off=["secret"])


def test_wrong_password(pam_wrapper):
    pam_wrapper.add_user("alice", "secret")
    pam_wrapper.run(None, "alice", [pypamtest.TestCase(
        pypamtest.PAMTEST_AUTHENTICATE, pypamtest.PAM_AUTH_ERR)],
        echo_off=["guess"])
EOF
run_pytest() {  # venv, env assignments...: pytest in the project, no -p
  local venv=$1; shift
  (cd "$work/project" && env "$@" "$venv/bin/python" -m pytest -p no:cacheprovider -v 2>&1)
}

echo "== 1. pip install --no-build-isolation . (virtualenv, --system-site-packages)"
"$python" -m venv --system-site-packages "$work/venv"
venv=$work/venv
(cd "$work/tree" && "$venv/bin/pip" install --no-build-isolation --no-index .) \
  > "$work/pip-install.log" 2>&1 || { cat "$work/pip-install.log"; fail "pip install"; }
tail -2 "$work/pip-install.log"
[ ! -e "$work/tree/build" ] || fail "setuptools wrote build/ (CMake's build directory) into the tree"
site=$("$venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("platlib"))')
out=$("$venv/bin/python" -c '
import importlib.metadata as m, pypamtest, pytest_pam_wrapper
print(pypamtest.__file__)
print([e.value for e in m.entry_points(group="pytest11") if e.name == "pam_wrapper"])
print([l.split()[-1] for l in open("/proc/self/maps") if "libpamtest" in l])')
echo "$out"
[[ $(sed -n 1p <<< "$out") == "$site"/pypamtest.* ]] || fail "pypamtest is not the venv's"
[ "$(sed -n 2p <<< "$out")" = "['pytest_pam_wrapper.autoload']" ] || fail "no pytest11 entry point"
[ "$(sed -n 3p <<< "$out")" = "[]" ] || fail "the bundled pypamtest loads a libpamtest.so"
[ -f "$site/pypamtest.pyi" ] || fail "pypamtest.pyi not installed"

out=$(run_pytest "$venv" PAM_WRAPPER_LIB="$PWRAP_LIB") || { echo "$out"; fail "pytest with PAM_WRAPPER_LIB"; }
echo "$out"
grep -q "plugins: .*pypamtest-" <<< "$out" || fail "pytest did not load the plugin by its entry point"
grep -q "2 passed" <<< "$out" || fail "pytest: not 2 passed"
grep -q "pam_wrapper: $PWRAP_LIB" <<< "$out" || fail "not the library of PAM_WRAPPER_LIB"

# Neither PAM_WRAPPER_LIB nor a C package pkg-config knows: a usage error
# saying where it looked.
rc=0
out=$(run_pytest "$venv" "${no_pc_env[@]}") || rc=$?
echo "$out"
[ "$rc" = 4 ] || fail "without a library pytest exited $rc, expected 4 (usage error)"
grep -q "PAM_WRAPPER_LIB is not set, none is next to pypamtest's libpamtest, and \`pkg-config --libs pam_wrapper\` names none" <<< "$out" \
  || fail "the error does not say where it looked"

"$venv/bin/pip" uninstall -y pypamtest > "$work/pip-uninstall.log" 2>&1 \
  || { cat "$work/pip-uninstall.log"; fail "pip uninstall"; }
left=$(cd "$site" && ls -d pypamtest* pytest_pam_wrapper* 2>/dev/null || true)
[ -z "$left" ] || fail "pip uninstall left: $left"

echo "== 2. pip wheel --no-build-isolation --no-deps ."
(cd "$work/tree" && "$venv/bin/pip" wheel --no-build-isolation --no-deps --no-index -w "$work/wheels" .) \
  > "$work/pip-wheel.log" 2>&1 || { cat "$work/pip-wheel.log"; fail "pip wheel"; }
whl=$(ls "$work"/wheels/pypamtest-*.whl)
"$python" - "$whl" <<'EOF' || fail "wheel contents"
import sys, zipfile
names = sorted(zipfile.ZipFile(sys.argv[1]).namelist())
print("\n".join(names))
info = [n.split("/")[0] for n in names if n.endswith(".dist-info/RECORD")][0]
want = {"pypamtest.pyi", "pytest_pam_wrapper/__init__.py",
        "pytest_pam_wrapper/autoload.py", info + "/entry_points.txt",
        info + "/METADATA", info + "/RECORD", info + "/WHEEL"}
assert want <= set(names), want - set(names)
assert [n for n in names if n.startswith("pypamtest.") and n.endswith(".so")], "no module"
ep = zipfile.ZipFile(sys.argv[1]).read(info + "/entry_points.txt").decode()
assert "[pytest11]" in ep and "pam_wrapper = pytest_pam_wrapper.autoload" in ep, ep
EOF

echo "== 3. PYPAMTEST_LIBPAMTEST=pkg-config against a cmake --install prefix"
prefix=$work/prefix
"$cmake" --install "$build" --prefix "$prefix" > "$work/cmake-install.log"
pc=$(dirname "$(find "$prefix" -name libpamtest.pc)")
"$python" -m venv --system-site-packages "$work/venv2"
venv=$work/venv2
(cd "$work/tree" && PYPAMTEST_LIBPAMTEST=pkg-config PKG_CONFIG_PATH=$pc \
   "$venv/bin/pip" install --no-build-isolation --no-index .) \
  > "$work/pip-install2.log" 2>&1 || { cat "$work/pip-install2.log"; fail "pip install (pkg-config)"; }
libdir=$(PKG_CONFIG_PATH=$pc pkg-config --variable=libdir libpamtest)
out=$(env -u LD_LIBRARY_PATH "$venv/bin/python" -c '
import pypamtest
print([l.split()[-1] for l in open("/proc/self/maps") if "libpamtest" in l][0])')
[[ $out == "$libdir"/libpamtest.so.* ]] || fail "pypamtest (pkg-config) loads $out, not $libdir's"
out=$(run_pytest "$venv" PKG_CONFIG_PATH="$pc") || { echo "$out"; fail "pytest (pkg-config build)"; }
echo "$out"
grep -q "2 passed" <<< "$out" || fail "pytest (pkg-config build): not 2 passed"
grep -q "pam_wrapper: $libdir/libpam_wrapper.so" <<< "$out" || fail "not the prefix's library"
# Found through pkg-config alone (the bundled module of step 1 has no
# libpamtest to look next to).
(cd "$work/tree" && "$work/venv/bin/pip" install --no-build-isolation --no-index .) \
  > "$work/pip-install3.log" 2>&1 || { cat "$work/pip-install3.log"; fail "pip install (again)"; }
out=$(run_pytest "$work/venv" PKG_CONFIG_PATH="$pc") || { echo "$out"; fail "pytest: library from pkg-config"; }
grep -q "pam_wrapper: $libdir/libpam_wrapper.so" <<< "$out" || { echo "$out"; fail "pkg-config's library not used"; }
# An older libpamtest (Debian's 1.1.4, whose libpamtest.pc has no version).
deb_pc=/usr/lib/$("$python" -c 'import sysconfig; print(sysconfig.get_config_var("MULTIARCH"))')/pkgconfig
if [ -f "$deb_pc/libpamtest.pc" ] && ! PKG_CONFIG_PATH= pkg-config --atleast-version=1.2 libpamtest; then
  rc=0
  (cd "$work/tree" && PYPAMTEST_LIBPAMTEST=pkg-config PKG_CONFIG_PATH= \
     "$venv/bin/pip" install --no-build-isolation --no-index .) > "$work/pip-old.log" 2>&1 || rc=$?
  [ "$rc" != 0 ] || fail "pypamtest was built against an older libpamtest"
  grep -q "this pypamtest needs pam_wrapper's libpamtest 1.2 or later" "$work/pip-old.log" \
    || { cat "$work/pip-old.log"; fail "no clear error for an older libpamtest"; }
  echo "an older libpamtest ($deb_pc) is refused"
else
  echo "(no older libpamtest installed: its refusal is not checked)"
fi

echo "== 4. pip uninstall of what cmake --install wrote"
pydir=$(dirname "$(find "$prefix" -name 'pypamtest-*.dist-info' -type d)")
"$venv/bin/pip" uninstall -y pypamtest > /dev/null  # (step 3's)
# Below the venv, so that pip (running in it) may remove it.
mkdir "$venv/cm"
mv "$prefix" "$venv/cm/prefix"
pydir=$venv/cm/prefix/${pydir#"$prefix"/}
PYTHONPATH=$pydir "$venv/bin/pip" uninstall -y pypamtest > "$work/pip-uninstall-cmake.log" 2>&1 \
  || { cat "$work/pip-uninstall-cmake.log"; fail "pip uninstall of the cmake --install copy"; }
cat "$work/pip-uninstall-cmake.log"
grep -q "Successfully uninstalled" "$work/pip-uninstall-cmake.log" || fail "pip removed nothing"
# (pip also removes the directory it leaves empty.)
if [ -d "$pydir" ]; then
  left=$(cd "$pydir" && find . -mindepth 1 | sort)
  [ -z "$left" ] || fail "left in $pydir: $left"
fi
[ -n "$(find "$venv/cm/prefix" -name 'libpam_wrapper.so*')" ] || fail "pip removed more than Python's files"
echo "test_pip: passed"
