#!/usr/bin/env bash
# Runs every test: installs missing packages, builds, runs the CTest suite
# (which includes the pytest suites and, as root, the same tests again as
# nobody), then the ASan+UBSan build's suite and the valgrind run.
# Usage: scripts/test.sh            (everything)
#        PWRAP_QUICK=1 scripts/test.sh   (only the normal build's suite)
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/install-deps.sh"

src=$here
# As root, tests also run as nobody: the tree must be readable by nobody.
# When it is not (a clone below /root), build from a copy in /tmp.
if [ "$(id -u)" = 0 ] && ! setpriv --reuid=nobody --regid=nogroup --clear-groups \
      test -r "$here/CMakeLists.txt" 2>/dev/null; then
  src=$(mktemp -d /tmp/pam_wrapper-src.XXXXXX)
  chmod 755 "$src"
  tar -C "$here" --exclude='./build*' -cf - . | tar -C "$src" -xf -
  trap 'rm -rf "$src"' EXIT
  echo "test.sh: source tree not readable by nobody; building from a copy in $src"
fi

build=${PWRAP_BUILD_DIR:-$src/build}
jobs=$(nproc)
run_suite() {  # dir, extra cmake args...
  local dir=$1; shift
  # -Werror for developers and CI (off by default for users).
  cmake -S "$src" -B "$dir" -DPython3_EXECUTABLE=/usr/bin/python3 -DPWRAP_WERROR=ON "$@" >/dev/null
  cmake --build "$dir" -j"$jobs"
  # (ctest --test-dir needs CMake 3.20; 3.16 is supported)
  (cd "$dir" && ctest --output-on-failure -j"$jobs" ${PWRAP_CTEST_ARGS:-})
}

# Last and alone: the Debian packages built from this tree, installed over
# Debian's, used and purged (tests/packaging/test_deb.sh).  It changes the
# system's packages and puts them back, so it never runs next to other
# tests; Debian's .debs are fetched first, which it needs to put them back.
run_system_package_tests() {  # build dir
  local debs rc=0
  debs=$(mktemp -d /tmp/pwrap-debian-debs.XXXXXX)
  chmod 755 "$debs"
  if [ "$(id -u)" = 0 ] && ! (cd "$debs" && apt-get download -q libpam-wrapper \
        libpamtest0 libpamtest0-dev python3-pypamtest) > "$debs/download.log" 2>&1; then
    echo "test.sh: apt-get download of Debian's pam-wrapper packages failed:"
    cat "$debs/download.log"
  fi
  (cd "$1" && PWRAP_PACKAGE_INSTALL_TEST=1 PWRAP_DEBIAN_DEBS=$debs \
     ctest -V -L system-packages) || rc=$?
  rm -rf "$debs"
  return "$rc"
}

echo "== normal build =="
run_suite "$build"
if [ -z "${PWRAP_QUICK:-}" ]; then
  # The path for libpam without pam_start_confdir (Linux-PAM < 1.4,
  # OpenPAM), taken here with Debian's libpam.
  echo "== forced legacy build (PAM_WRAPPER_FORCE_LEGACY=ON) =="
  run_suite "$build-legacy" -DPAM_WRAPPER_FORCE_LEGACY=ON
  # Other PAM implementations, built by hand outside the repository (see
  # README): only when their installation prefixes are given.
  for impl in "Linux-PAM 1.3.1:PWRAP_LINUX_PAM_131_PREFIX" \
              "OpenPAM:PWRAP_OPENPAM_PREFIX"; do
    name=${impl%%:*} var=${impl#*:}
    if [ -n "${!var:-}" ]; then
      echo "== $name at ${!var} =="
      run_suite "$build-${var,,}" -DPWRAP_PAM_PREFIX="${!var}"
    else
      echo "== $name: SKIPPED ($var is not set; this machine has only Debian's Linux-PAM) =="
    fi
  done
  echo "== ASan+UBSan build =="
  run_suite "$build-asan" -DPWRAP_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug
  echo "== valgrind run of the C tests =="
  "$src/scripts/valgrind.sh" "$build"
  echo "== valgrind run of the C tests, forced legacy build (fopen interposed) =="
  "$src/scripts/valgrind.sh" "$build-legacy"
  echo "== Debian packages over Debian's (alone: changes the system's packages) =="
  run_system_package_tests "$build"
fi
echo "test.sh: all suites passed"
