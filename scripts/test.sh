#!/usr/bin/env bash
# Runs every test: installs missing packages, then one phase per build: the
# CTest suite (which includes the pytest suites and, as root, the same tests
# again as nobody) of the normal, forced-legacy, other-PAM, Debian 13 (in a
# chroot), ASan+UBSan and clang builds, then the valgrind runs.  A failed phase does not stop the
# others (a phase that needs a failed build says "not run"); the output ends
# with a summary per phase (scripts/test-summary.py): passed, failed or not
# run, its wall time, tests and cases passed/failed/skipped, skip reasons
# grouped.
# Exit status: 0 when every phase that ran passed, else 1.
#
# Usage: scripts/test.sh                  (everything)
#        PWRAP_QUICK=1 scripts/test.sh    (only the normal build's suite)
#        PWRAP_PHASES="normal debian13" scripts/test.sh   (only these phases)
# Environment: PWRAP_BUILD_DIR (default <tree>/build; the other builds are
#   <dir>-legacy, -asan, -clang, ...), PWRAP_LINUX_PAM_131_PREFIX,
#   PWRAP_LINUX_PAM_17_PREFIX and PWRAP_OPENPAM_PREFIX (see README),
#   PWRAP_DEBIAN13_CHROOT (see phase_debian13), PWRAP_CTEST_ARGS (extra
#   ctest args).
#
# A new phase: a function phase_NAME (its commands run under set -e; it may
# call not_run REASON, note TEXT, build_tree, run_ctest) and one run_phase
# line in the list at the bottom.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/install-deps.sh"

src=$here
results=$(mktemp -d /tmp/pam_wrapper-test.XXXXXX)
cleanup() { rm -rf "$results"; [ "$src" = "$here" ] || rm -rf "$src"; }
trap cleanup EXIT
# As root, tests also run as nobody: the tree must be readable by nobody.
# When it is not (a clone below /root), build from a copy in /tmp.
if [ "$(id -u)" = 0 ] && ! setpriv --reuid=nobody --regid=nogroup --clear-groups \
      test -r "$here/CMakeLists.txt" 2>/dev/null; then
  src=$(mktemp -d /tmp/pam_wrapper-src.XXXXXX)
  chmod 755 "$src"
  tar -C "$here" --exclude='./build*' -cf - . | tar -C "$src" -xf -
  echo "test.sh: source tree not readable by nobody; building from a copy in $src"
fi

# The login environment (USER, LOGNAME, HOME) as sudo or a login sets it,
# whatever the caller's shell had: the suite must pass that way (the .nobody
# twins get nobody's own; tests/common/test_env.py checks it).
USER=$(id -un 2>/dev/null || id -u)
LOGNAME=$USER
home=$(getent passwd "$(id -u)" | cut -d: -f6 || true)
HOME=${home:-${HOME:-/}}
export USER LOGNAME HOME
# pytest says why it skipped (the summary groups the reasons).
export PYTEST_ADDOPTS="-rs ${PYTEST_ADDOPTS:-}"

build=${PWRAP_BUILD_DIR:-$src/build}
jobs=$(nproc)
phase=""
runs=0

# --- what phases use ------------------------------------------------------

not_run() {  # reason: the phase does not run (not a failure)
  echo "$*" > "$results/$phase.notrun"
  echo "test.sh: $phase not run: $*"
  exit 0
}
note() {  # text shown under the phase in the summary
  echo "$*" >> "$results/$phase.note"
}
build_tree() {  # dir, extra cmake args...: configure (tests on, -Werror) and build
  local dir=$1; shift
  rm -f "$dir/.test-sh-built"
  cmake -S "$src" -B "$dir" -DPython3_EXECUTABLE=/usr/bin/python3 \
        -DBUILD_TESTING=ON -DPWRAP_WERROR=ON "$@" > "$results/configure.log"
  # what was built with, for the summary: compiler, and the PAM CMake found
  note "$(sed -n 's/^set(CMAKE_C_COMPILER_\(ID\|VERSION\) "\(.*\)")$/\2/p' \
           "$dir"/CMakeFiles/*/CMakeCCompiler.cmake | head -n2 | paste -sd' ') -Werror;" \
       "$(sed -n 's/^-- PAM: //p' "$results/configure.log" | tail -n1)"
  cmake --build "$dir" -j"$jobs"
  touch "$dir/.test-sh-built"
}
built() { [ -e "$1/.test-sh-built" ]; }
keep_logs() {  # build dir, console file: keep them for the summary
  local n=$((++runs)) log
  cp "$2" "$results/$phase.$n.console"
  log=$(ls -t "$1"/Testing/Temporary/Last{Test,DynamicAnalysis}*.log 2>/dev/null | head -n1 || true)
  [ -z "$log" ] || cp "$log" "$results/$phase.$n.log"
}
run_ctest() {  # build dir, ctest args...
  local dir=$1; shift
  echo 0 > "$results/rc"
  # (a subshell, not ctest --test-dir: that needs CMake 3.20; 3.16 is supported)
  { (cd "$dir" && ctest --output-on-failure -j"$jobs" ${PWRAP_CTEST_ARGS:-} "$@") 2>&1 ||
      echo $? > "$results/rc"; } | tee "$results/console"
  keep_logs "$dir" "$results/console"
  return "$(cat "$results/rc")"
}
build_and_test() {  # dir, extra cmake args...
  build_tree "$@"
  run_ctest "$1"
}
run_phase() {  # name, title, command...: runs it, records passed/failed
  local name=$1 title=$2 rc=0 t0=$SECONDS; shift 2
  [ -z "${PWRAP_PHASES:-}" ] || [[ " $PWRAP_PHASES " == *" $name "* ]] || return 0
  phase=$name runs=0
  echo "== $title =="
  set +e
  ( set -e; "$@" )
  rc=$?
  set -e
  printf '%s\t%s\t%s\t%s\n' "$name" "$title" \
    "$([ $rc = 0 ] && echo passed || echo failed)" $((SECONDS - t0)) >> "$results/phases"
}

# --- the phases ------------------------------------------------------------

phase_normal() { build_and_test "$build"; }
# Tests labelled "once" build what they need themselves (fuzz_smoke: the
# standalone fuzz/ project; readme_*: scripts/demo.sh's build), the same
# whatever the build around them: only the normal build runs them.
once_only=(-LE '^once$')
once_only_note="tests labelled \"once\" not run here: they build what they test themselves, the same in every build (run in the normal build)"
# The path for libpam without pam_start_confdir (Linux-PAM < 1.4, OpenPAM),
# taken here with Debian's libpam.
phase_legacy() {
  build_tree "$build-legacy" -DPAM_WRAPPER_FORCE_LEGACY=ON
  note "$once_only_note"
  run_ctest "$build-legacy" "${once_only[@]}"
}
# Other PAM implementations, built by hand outside the repository (README):
# only when their installation prefixes are given.
phase_prefix() {  # variable naming the prefix
  local var=$1
  [ -n "${!var:-}" ] ||
    not_run "$var is not set (this machine has only Debian's Linux-PAM; README: how to build it)"
  note "PAM at ${!var}"
  build_and_test "$build-${var,,}" -DPWRAP_PAM_PREFIX="${!var}"
}
phase_asan() { build_and_test "$build-asan" -DPWRAP_SANITIZE=ON -DCMAKE_BUILD_TYPE=Debug; }
# clang, the compiler of FreeBSD and macOS: -Werror over everything
# (library, modules, tools, pypamtest, tests and the fuzz targets), then the
# suite of that build.
phase_clang() {
  command -v clang >/dev/null ||
    not_run "clang is not installed (scripts/install-deps.sh installs it)"
  build_tree "$build-clang" -DCMAKE_C_COMPILER=clang -DPWRAP_FUZZ=ON
  note "everything built with clang, the fuzz targets and pypamtest too"
  note "$once_only_note"
  run_ctest "$build-clang" "${once_only[@]}"
}
# The normal build's suite again, three times in a row, with ctest -j4 and
# four CPU hogs beside it: no test may depend on the machine's speed (a CI
# machine runs other jobs).
phase_load() {  # build dir
  built "$1" || not_run "its build ($1) failed"
  note "the whole suite, ctest -j4 beside four 'yes > /dev/null' on $(nproc) CPUs, 3 runs in a row"
  local i
  hogs=()  # (not local: the trap reads it when the phase's subshell ends)
  for i in 1 2 3 4; do yes > /dev/null & hogs+=($!); done
  trap 'kill "${hogs[@]}"' EXIT
  for i in 1 2 3; do PWRAP_CTEST_ARGS="${PWRAP_CTEST_ARGS:-} -j4" run_ctest "$1"; done
}
phase_valgrind() {  # build dir
  built "$1" || not_run "its build ($1) failed"
  local rc=0
  "$src/scripts/valgrind.sh" "$1" || rc=$?
  keep_logs "$1" "$1/valgrind-summary.txt"
  return $rc
}

# Debian 13 "trixie" (Linux-PAM 1.7, GCC 14, Python 3.13, pytest 8,
# OpenSSH 10): the normal build's suite, as scripts/test.sh with PWRAP_QUICK=1
# runs it (root and nobody twins, README blocks, pip and RPM packages), in a
# chroot made by debootstrap --variant=minbase from this machine's Debian
# mirror, with the tree copied in and scripts/install-deps.sh run inside
# (scripts/debian-chroot.sh).  The chroot is kept between runs in
# PWRAP_DEBIAN13_CHROOT (default /var/cache/pam_wrapper/debian13) and made
# anew when missing or broken.
phase_debian13() {
  local root=${PWRAP_DEBIAN13_CHROOT:-/var/cache/pam_wrapper/debian13} rc=0
  [ "$(id -u)" = 0 ] || not_run "needs root (debootstrap, chroot, mounts)"
  command -v debootstrap >/dev/null ||
    not_run "debootstrap is not installed (scripts/install-deps.sh installs it)"
  "$src/scripts/debian-chroot.sh" trixie "$root" "$src" bash -c \
    'bash scripts/install-deps.sh && PWRAP_QUICK=1 bash scripts/test.sh' 2>&1 |
    tee "$results/console" || rc=$?
  # (exit 3: the chroot could not be made; its last line says why)
  [ "$rc" != 3 ] || not_run "$(tail -n1 "$results/console" | sed 's/^debian-chroot.sh: //')"
  note "chroot $root: debootstrap --variant=minbase trixie; in it:" \
       "$(grep -m1 -- '-Werror;' "$results/console" | sed 's/^ *//')"
  keep_logs "$root/srv/pam_wrapper/build" "$results/console"
  return "$rc"
}

# Last and alone: the Debian packages built from this tree, installed over
# Debian's, used and purged (tests/packaging/test_deb.sh).  It changes the
# system's packages and puts them back, so it never runs next to other
# tests; Debian's .debs are fetched first, which it needs to put them back.
phase_packages() {  # build dir
  built "$1" || not_run "its build ($1) failed"
  [ "$(id -u)" = 0 ] || not_run "needs root (it installs and purges packages)"
  local debs rc=0
  debs=$(mktemp -d /tmp/pwrap-debian-debs.XXXXXX)
  chmod 755 "$debs"
  if ! (cd "$debs" && apt-get download -q libpam-wrapper \
        libpamtest0 libpamtest0-dev python3-pypamtest) > "$debs/download.log" 2>&1; then
    echo "test.sh: apt-get download of Debian's pam-wrapper packages failed:"
    cat "$debs/download.log"
  fi
  PWRAP_PACKAGE_INSTALL_TEST=1 PWRAP_DEBIAN_DEBS=$debs run_ctest "$1" -V -L system-packages || rc=$?
  rm -rf "$debs"
  return "$rc"
}

run_phase normal "normal build" phase_normal
if [ -z "${PWRAP_QUICK:-}" ]; then
  run_phase legacy "forced-legacy build" phase_legacy
  run_phase linux-pam-131 "Linux-PAM 1.3.1" phase_prefix PWRAP_LINUX_PAM_131_PREFIX
  run_phase linux-pam-17 "Linux-PAM 1.7.2" phase_prefix PWRAP_LINUX_PAM_17_PREFIX
  run_phase openpam "OpenPAM" phase_prefix PWRAP_OPENPAM_PREFIX
  run_phase debian13 "Debian 13" phase_debian13
  run_phase asan "ASan+UBSan build" phase_asan
  run_phase clang "clang build" phase_clang
  run_phase load "normal build under load (ctest -j4 beside 4 CPU hogs, 3 runs)" phase_load "$build"
  run_phase valgrind "valgrind, normal build" phase_valgrind "$build"
  run_phase valgrind-legacy "valgrind, forced-legacy build" phase_valgrind "$build-legacy"
  run_phase packages "Debian packages over Debian's (alone: changes the system's packages)" phase_packages "$build"
fi
echo
echo "test.sh: run as $USER (USER=$USER LOGNAME=$LOGNAME HOME=$HOME, as sudo sets them)"
/usr/bin/python3 "$src/scripts/test-summary.py" "$results"
