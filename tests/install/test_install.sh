#!/usr/bin/env bash
# Installs the build into a temporary prefix and checks what a user of an
# installed pam_wrapper relies on:
#   - `cmake --install --prefix P` puts every file below P, pypamtest too;
#   - file locations, pkg-config metadata, the installed preload library
#     finding the installed modules by bare name;
#   - pypamtest<EXT_SUFFIX> imports from P with no LD_LIBRARY_PATH and
#     loads P's libpamtest (never another one on the system);
#   - the CMake packages: no path of this machine's libraries in them, the
#     include directory listed once, and, after P is moved elsewhere, a
#     consumer project (consumer/) configures with find_package(pamtest)
#     and find_package(pam_wrapper), links misc_conv through
#     pamtest::pamtest and runs a transaction with the moved wrapper;
#   - find_package() with older versions (0.9, as upstream's users ask)
#     finds the moved packages, newer ones do not.
# Usage: test_install.sh BUILD_DIR
# Environment (tests/install/CMakeLists.txt): PWRAP_CMAKE, PWRAP_CC,
#   PWRAP_PYTHON, PWRAP_PY_DIR (as configured: relative to the prefix or
#   absolute), PWRAP_PY_SUFFIX, PWRAP_CONSUMER_CFLAGS, PWRAP_SAN_PRELOAD.
set -euo pipefail
build=${1:?usage: test_install.sh BUILD_DIR}
cmake=${PWRAP_CMAKE:-cmake}
prefix=$(mktemp -d "${TMPDIR:-/tmp}/pwrap-install.XXXXXX")
work=$(mktemp -d "${TMPDIR:-/tmp}/pwrap-install-run.XXXXXX")
trap 'rm -rf "$prefix" "$prefix.moved" "$work"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

# --- everything below the prefix ------------------------------------------
# The "-- Installing:" lines, not install_manifest.txt: other tests install
# from the same build tree at the same time.
"$cmake" --install "$build" --prefix "$prefix" > "$work/install.log"
sed -n 's/^-- \(Installing\|Up-to-date\): //p' "$work/install.log" > "$work/files"
[ -s "$work/files" ] || fail "cmake --install listed no file"
if grep -v "^$prefix/" "$work/files"; then
  fail "the files above were installed outside --prefix $prefix"
fi
libdir=$(dirname "$(find "$prefix" -name libpam_wrapper.so | head -1)")

for f in libpam_wrapper.so libpam_wrapper.so.0 libpamtest.so.0 \
         pam_wrapper/pam_matrix.so pam_wrapper/pam_set_items.so \
         pam_wrapper/pam_get_items.so pam_wrapper/pam_chatty.so \
         pkgconfig/pam_wrapper.pc pkgconfig/libpamtest.pc \
         cmake/pam_wrapper/pam_wrapper-config.cmake \
         cmake/pamtest/pamtest-config.cmake cmake/pamtest/pamtest-targets.cmake; do
  [ -e "$libdir/$f" ] || fail "$libdir/$f not installed"
done

export PKG_CONFIG_PATH=$libdir/pkgconfig
want=$(sed -n 's/^project(pam_wrapper VERSION \([0-9.]*\).*/\1/p' "$PWRAP_SOURCE_DIR/CMakeLists.txt")
[ "$(pkg-config --modversion pam_wrapper)" = "$want" ] || fail "pam_wrapper.pc version"
[ "$(pkg-config --variable=modules pam_wrapper)" = "$libdir/pam_wrapper" ] || fail "modules= variable"
[ "$(pkg-config --libs pam_wrapper | xargs)" = "$libdir/libpam_wrapper.so" ] || fail "Libs: is not the library path"
[ "$(pkg-config --variable=modules libpamtest)" = "$libdir/pam_wrapper" ] || fail "libpamtest modules="
# libpamtest.pc stands alone: pam.pc is not always there to be read (OpenPAM
# has none; Debian 13's requires audit.pc, which its libpam0g-dev does not
# bring), so the consumer's flags must not need it.
PKG_CONFIG_LIBDIR=$libdir/pkgconfig pkg-config --cflags --libs libpamtest >/dev/null ||
  fail "pkg-config --cflags --libs libpamtest needs another .pc file"

# --- the installed wrapper resolves bare module names ---------------------
mkdir "$work/svc" "$work/tmp"
echo "bob:builder:inst" > "$work/passdb"
printf 'auth required pam_matrix.so passdb=%s\naccount required pam_matrix.so passdb=%s\n' \
  "$work/passdb" "$work/passdb" > "$work/svc/inst"
out=$(TMPDIR=$work/tmp PWRAP_CLIENT_PASSWORD=builder LD_PRELOAD=$(pkg-config --libs pam_wrapper | xargs) \
      PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR=$work/svc \
      "$build/tests/wrapper/pwrap_client" inst bob auth,acct) || fail "installed wrapper: $out"
echo "$out"

# --- pypamtest from the prefix --------------------------------------------
if [ -n "${PWRAP_PY_SUFFIX:-}" ]; then
  case $PWRAP_PY_DIR in
    /*) pydir=$PWRAP_PY_DIR ;;
    *) pydir=$prefix/$PWRAP_PY_DIR ;;
  esac
  mod=$pydir/pypamtest$PWRAP_PY_SUFFIX
  [ -f "$mod" ] || fail "$mod not installed"
  [ -f "$pydir/pypamtest.pyi" ] || fail "pypamtest.pyi not next to the module"
  out=$(cd "$work" && env -u LD_LIBRARY_PATH -u PYTHONHOME PYTHONPATH="$pydir" \
        LD_PRELOAD="${PWRAP_SAN_PRELOAD:-}" "$PWRAP_PYTHON" -c '
import pypamtest
print(pypamtest.__file__)
print([l.split()[-1] for l in open("/proc/self/maps") if "libpamtest.so" in l][0])
print(repr(pypamtest.TestResult(["i"], ["e"])))') || fail "import pypamtest from $pydir: $out"
  echo "$out"
  [ "$(sed -n 1p <<<"$out")" = "$mod" ] || fail "imported $(sed -n 1p <<<"$out"), not $mod"
  case $(sed -n 2p <<<"$out") in
    "$prefix"/*) ;;
    *) fail "pypamtest loaded $(sed -n 2p <<<"$out"), not the prefix's libpamtest" ;;
  esac
  [ "$(sed -n 3p <<<"$out")" = "{ errors: { {e} } infos: { {i} } }" ] || fail "TestResult repr"
fi

# --- the CMake packages: relocatable, nothing of this machine -------------
cfg=$libdir/cmake
if grep -rnE '/(usr/)?lib[^ "]*/libpam(_misc)?\.so|libpam(_misc)?\.(so|a)\b' "$cfg"; then
  fail "a path of this machine's libpam is written into the CMake packages"
fi
if grep -rnF "$prefix" "$cfg"; then
  fail "the CMake packages name the prefix instead of computing it"
fi
incs=$(sed -n 's/.*INTERFACE_INCLUDE_DIRECTORIES "\(.*\)"/\1/p' "$cfg/pamtest/pamtest-targets.cmake")
[ "$incs" = '${_IMPORT_PREFIX}/include' ] || fail "include directories: '$incs' (want it once)"
grep -q 'INTERFACE_LINK_LIBRARIES "pamtest::libpam;pamtest::libpam_misc"' \
  "$cfg/pamtest/pamtest-targets.cmake" || fail "pamtest::pamtest does not bring libpam and libpam_misc"

mv "$prefix" "$prefix.moved"
moved=$prefix.moved
cflags=${PWRAP_CONSUMER_CFLAGS:-}
"$cmake" -S "$PWRAP_SOURCE_DIR/tests/install/consumer" -B "$work/consumer" \
  -DCMAKE_PREFIX_PATH="$moved" -DCMAKE_C_COMPILER="${PWRAP_CC:-cc}" \
  -DCMAKE_C_FLAGS="$cflags" -DCMAKE_EXE_LINKER_FLAGS="$cflags" \
  > "$work/consumer.log" 2>&1 || { cat "$work/consumer.log"; fail "consumer: configure"; }
"$cmake" --build "$work/consumer" >> "$work/consumer.log" 2>&1 \
  || { cat "$work/consumer.log"; fail "consumer: build (misc_conv through pamtest::pamtest)"; }
paths=$(cat "$work/consumer/package-paths.txt")
echo "$paths"
for want in "PAM_WRAPPER_LIBRARY=$moved/" "PAM_WRAPPER_MODULE_DIR=$moved/" \
            "PAMTEST_INCLUDE_DIR=$moved/"; do
  grep -q "^$want" <<<"$paths" || fail "moved package: no ${want%%=*} below $moved"
done
wraplib=$(sed -n 's/^PAM_WRAPPER_LIBRARY=//p' <<<"$paths")
[ -f "$wraplib" ] || fail "PAM_WRAPPER_LIBRARY $wraplib does not exist"
[ -f "$(sed -n 's/^PAMTEST_INCLUDE_DIR=//p' <<<"$paths")/libpamtest.h" ] || fail "PAMTEST_INCLUDE_DIR"

run_consumer() {  # password, expected exit status
  local rc=0
  out=$(printf '%s\n' "$1" | TMPDIR=$work/tmp LD_PRELOAD="${PWRAP_SAN_PRELOAD:+$PWRAP_SAN_PRELOAD:}$wraplib" \
        PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR=$work/svc "$work/consumer/consumer" inst bob 2>&1) || rc=$?
  echo "$out"
  [ "$rc" = "$2" ] || fail "consumer with password '$1' exited $rc, expected $2: $out"
}
run_consumer builder 0
grep -q "consumer: Success" <<<"$out" || fail "consumer did not succeed"
run_consumer wrong 1

# --- upstream's version rule: older requests find ours, not another copy ---
bash "$PWRAP_SOURCE_DIR/tests/packaging/check_find_versions.sh" "$cmake" \
  "$work/find-versions" "$moved" "$moved" || fail "find_package() version requests"
echo "install test passed"
