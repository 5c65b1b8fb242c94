#!/usr/bin/env bash
# Installs the build into a temporary prefix and checks what a user of an
# installed pam_wrapper relies on: file locations, pkg-config and CMake
# package metadata, and that the installed preload library finds the
# installed modules by bare name.
# Usage: test_install.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: test_install.sh BUILD_DIR}
prefix=$(mktemp -d "${TMPDIR:-/tmp}/pwrap-install.XXXXXX")
trap 'rm -rf "$prefix"' EXIT
fail() { echo "FAIL: $*" >&2; exit 1; }

cmake --install "$build" --prefix "$prefix" >/dev/null
libdir=$(dirname "$(find "$prefix" -name libpam_wrapper.so | head -1)")

for f in libpam_wrapper.so libpam_wrapper.so.0 pam_wrapper/pam_matrix.so \
         pam_wrapper/pam_set_items.so pam_wrapper/pam_get_items.so \
         pam_wrapper/pam_chatty.so pkgconfig/pam_wrapper.pc \
         pkgconfig/libpamtest.pc cmake/pam_wrapper/pam_wrapper-config.cmake; do
  [ -e "$libdir/$f" ] || fail "$libdir/$f not installed"
done

export PKG_CONFIG_PATH=$libdir/pkgconfig
want=$(sed -n 's/^project(pam_wrapper VERSION \([0-9.]*\).*/\1/p' "$PWRAP_SOURCE_DIR/CMakeLists.txt")
[ "$(pkg-config --modversion pam_wrapper)" = "$want" ] || fail "pam_wrapper.pc version"
[ "$(pkg-config --variable=modules pam_wrapper)" = "$libdir/pam_wrapper" ] || fail "modules= variable"
[ "$(pkg-config --libs pam_wrapper | xargs)" = "$libdir/libpam_wrapper.so" ] || fail "Libs: is not the library path"
[ "$(pkg-config --variable=modules libpamtest)" = "$libdir/pam_wrapper" ] || fail "libpamtest modules="

# The installed wrapper resolves bare module names to the installed modules.
work=$(mktemp -d "${TMPDIR:-/tmp}/pwrap-install-run.XXXXXX")
trap 'rm -rf "$prefix" "$work"' EXIT
mkdir "$work/svc" "$work/tmp"
echo "bob:builder:inst" > "$work/passdb"
printf 'auth required pam_matrix.so passdb=%s\naccount required pam_matrix.so passdb=%s\n' \
  "$work/passdb" "$work/passdb" > "$work/svc/inst"
out=$(TMPDIR=$work/tmp PWRAP_CLIENT_PASSWORD=builder LD_PRELOAD=$(pkg-config --libs pam_wrapper | xargs) \
      PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR=$work/svc \
      "$build/tests/wrapper/pwrap_client" inst bob auth,acct) || fail "installed wrapper: $out"
echo "$out"
echo "install test passed"
