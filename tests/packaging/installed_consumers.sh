#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Uses pam_wrapper as installed in the system by our Debian packages, the
# way their users do, as nobody (no root needed) with nothing pointing
# into a build tree:
#   - a CMake project: find_package(pamtest) and find_package(pam_wrapper)
#     with no hints (tests/install/consumer: pamtest::pamtest brings
#     libpam_misc's misc_conv), and older version requests finding ours;
#   - a program built with `pkg-config --cflags --libs libpamtest`;
#   - import pypamtest, a transaction under LD_PRELOAD=libpam_wrapper.so;
#   - the pytest plugin through its entry point: no -p, no pytest_plugins,
#     no LD_PRELOAD, no PAM_WRAPPER_LIB; the same with pypamtest installed
#     by pip from this tree into a virtualenv (the plugin then finds the
#     installed library through pkg-config);
#   - the launcher and the scenario runner, with an installed example;
#   - compatibility with Debian's 1.1.4 packages: a program built against
#     them (SONAME libpamtest.so.SOVERSION) and Debian's own pypamtest
#     module, both running on our libpamtest.
# Usage: installed_consumers.sh LIBDIR PYTHON WORK_DIR
#                               [DEBIAN_BUILT_PROGRAM DEBIAN_PYPAMTEST_DIR]
# Run as root it drops to nobody for the consumers (WORK_DIR is made).
set -euo pipefail
libdir=$1 python=$2 work=$3 debian_prog=${4:-} debian_pydir=${5:-}
here=$(cd "$(dirname "$0")" && pwd)
src=$(cd "$here/../.." && pwd)
fail() { echo "FAIL: $*" >&2; exit 1; }

if [ "$(id -u)" = 0 ]; then
  mkdir -m 755 "$work"
  chown nobody:nogroup "$work"
  exec setpriv --reuid=nobody --regid=nogroup --clear-groups \
    env -i PATH=/usr/bin:/bin HOME=/nonexistent TMPDIR=/tmp LANG=C.UTF-8 \
    bash "$0" "$@"
fi
mkdir -p "$work"
cd "$work"
mkdir svc tmp
export TMPDIR=$work/tmp
echo "bob:builder:inst" > passdb
printf 'auth required pam_matrix.so passdb=%s\naccount required pam_matrix.so passdb=%s\n' \
  "$work/passdb" "$work/passdb" > svc/inst

run_wrapped() {  # expected status, program args... (password on stdin)
  local want=$1 rc=0; shift
  out=$(LD_PRELOAD=$libdir/libpam_wrapper.so PAM_WRAPPER=1 \
        PAM_WRAPPER_SERVICE_DIR=$work/svc "$@" 2>&1) || rc=$?
  echo "$out"
  [ "$rc" = "$want" ] || fail "$* exited $rc, expected $want"
}

echo "-- CMake: find_package(pamtest), find_package(pam_wrapper), no hints"
cmake -S "$src/tests/install/consumer" -B cmake-consumer > cmake.log 2>&1 \
  && cmake --build cmake-consumer >> cmake.log 2>&1 || { cat cmake.log; fail "CMake consumer"; }
cat cmake-consumer/package-paths.txt
grep -qx "PAM_WRAPPER_LIBRARY=$libdir/libpam_wrapper.so" cmake-consumer/package-paths.txt \
  || fail "PAM_WRAPPER_LIBRARY is not the installed library"
grep -qx "PAM_WRAPPER_MODULE_DIR=$libdir/pam_wrapper" cmake-consumer/package-paths.txt \
  || fail "PAM_WRAPPER_MODULE_DIR"
echo builder | run_wrapped 0 cmake-consumer/consumer inst bob
echo wrong | run_wrapped 1 cmake-consumer/consumer inst bob
bash "$here/check_find_versions.sh" cmake "$work/find-versions" "$libdir/cmake"

echo "-- pkg-config: cc \$(pkg-config --cflags --libs libpamtest)"
[ "$(pkg-config --libs pam_wrapper | xargs)" = "$libdir/libpam_wrapper.so" ] \
  || fail "pkg-config --libs pam_wrapper: $(pkg-config --libs pam_wrapper)"
[ "$(pkg-config --variable=modules pam_wrapper)" = "$libdir/pam_wrapper" ] \
  || fail "pkg-config --variable=modules pam_wrapper"
# shellcheck disable=SC2046
cc -o pc-consumer "$src/tests/install/consumer/consumer.c" \
  $(pkg-config --cflags --libs libpamtest) -lpam_misc || fail "pkg-config consumer: build"
readelf -d pc-consumer | grep -q 'NEEDED.*\[libpamtest\.so\.0\]' || fail "pkg-config consumer: not linked to libpamtest.so.0"
echo builder | run_wrapped 0 ./pc-consumer inst bob

echo "-- python: import pypamtest"
cat > py_login.py <<'EOF'
import sys
import pypamtest
print(pypamtest.__file__)
print([l.split()[-1] for l in open("/proc/self/maps") if "libpamtest.so" in l][0])
cases = [pypamtest.TestCase(pypamtest.PAMTEST_AUTHENTICATE),
         pypamtest.TestCase(pypamtest.PAMTEST_ACCOUNT)]
pypamtest.run_pamtest("bob", "inst", cases, [sys.argv[1]])
try:
    pypamtest.run_pamtest("bob", "inst", cases, ["wrong"])
except pypamtest.PamTestError as e:
    print("refused:", e)
else:
    sys.exit("a wrong password was accepted")
EOF
run_wrapped 0 "$python" py_login.py builder
[ "$(sed -n 1p <<< "$out")" = "/usr/lib/python3/dist-packages/pypamtest$("$python" -c \
  'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')" ] || fail "imported $(sed -n 1p <<< "$out")"
case $(sed -n 2p <<< "$out") in
  "$libdir"/libpamtest.so.0*) ;;
  *) fail "pypamtest loaded $(sed -n 2p <<< "$out")" ;;
esac

echo "-- pytest: the plugin through its entry point"
mkdir pytest-project
cat > pytest-project/test_login.py <<'EOF'
import pypamtest
import pytest


def test_login(pam_wrapper):
    pam_wrapper.add_user("alice", "secret")
    pam_wrapper.run(None, "alice", [pypamtest.PAMTEST_AUTHENTICATE,
                                    pypamtest.PAMTEST_ACCOUNT],
                    echo_off=["secret"])


def test_locked(pam_wrapper):
    pam_wrapper.add_user("alice", "secret", flags=["locked"])
    with pytest.raises(pypamtest.PamTestError):
        pam_wrapper.run(None, "alice", [pypamtest.PAMTEST_AUTHENTICATE],
                        echo_off=["secret"])
EOF
out=$(cd pytest-project && "$python" -m pytest -p no:cacheprovider -v 2>&1) \
  || { echo "$out"; fail "pytest with the installed plugin"; }
echo "$out"
grep -q "plugins: .*pypamtest-" <<< "$out" || fail "pytest did not load the plugin by its entry point"
grep -q "2 passed" <<< "$out" || fail "pytest: not 2 passed"
grep -q "LD_PRELOAD=$libdir/libpam_wrapper.so" <<< "$out" \
  || fail "the plugin did not preload the installed library"

echo "-- pip: pypamtest from this tree in a virtualenv, nothing else set up"
# The pip-built module has libpamtest built in: the plugin finds the
# installed libpam_wrapper.so through pkg-config alone.
mkdir tree
tar -C "$src" --exclude='./build*' --exclude=./.git --exclude='./obj-*' -cf - . | tar -C tree -xf -
"$python" -m venv --system-site-packages venv
(cd tree && PIP_CONFIG_FILE=/dev/null PIP_NO_CACHE_DIR=1 ../venv/bin/pip install \
   --no-build-isolation --no-index .) > pip.log 2>&1 || { cat pip.log; fail "pip install"; }
case $(venv/bin/python -c 'import pypamtest; print(pypamtest.__file__)') in
  "$work"/venv/*) ;;
  *) fail "the virtualenv imports another pypamtest than pip's" ;;
esac
out=$(cd pytest-project && ../venv/bin/python -m pytest -p no:cacheprovider -v 2>&1) \
  || { echo "$out"; fail "pytest with the pip-installed plugin"; }
echo "$out"
grep -q "2 passed" <<< "$out" || fail "pytest (pip): not 2 passed"
grep -q "rootdir: .*pytest-project" <<< "$out" && grep -q "venv/bin/python" <<< "$out" \
  || fail "pytest (pip) did not run in the virtualenv"
grep -q "pam_wrapper: $libdir/libpam_wrapper.so" <<< "$out" \
  || fail "the pip-installed plugin did not find the installed library"

echo "-- tools: pam_wrapper and pamtest"
pam_wrapper --version
out=$(pam_wrapper --user carol:pw:login -- "$python" -c '
import pypamtest
pypamtest.run_pamtest("carol", "login",
                      [pypamtest.TestCase(pypamtest.PAMTEST_AUTHENTICATE)], ["pw"])
print("launcher: carol logged in")' 2>&1) || { echo "$out"; fail "the launcher"; }
echo "$out"
[ "$out" = "launcher: carol logged in" ] || fail "the launcher's run printed more"
pamtest /usr/share/doc/pam-wrapper-tools/examples/scenarios/login.pamtest \
  || fail "pamtest with the installed example scenario"

if [ -n "$debian_prog" ]; then
  echo "-- Debian's 1.1.4: a program built against it, its pypamtest"
  "$debian_prog" || fail "the program built against Debian's libpamtest0-dev"
  out=$(PYTHONPATH=$debian_pydir run_wrapped 0 "$python" py_login.py builder) \
    || { echo "$out"; fail "Debian's pypamtest on our libpamtest"; }
  echo "$out"
  case $(sed -n 1p <<< "$out") in
    "$debian_pydir"/*) ;;
    *) fail "Debian's pypamtest was not the one imported" ;;
  esac
  case $(sed -n 2p <<< "$out") in
    "$libdir"/libpamtest.so.SOVERSION|"$libdir"/libpamtest.so.0*) ;;
    *) fail "Debian's pypamtest loaded $(sed -n 2p <<< "$out")" ;;
  esac
fi
echo "installed consumers: passed"
