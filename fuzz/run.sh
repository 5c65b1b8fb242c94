#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Builds the libFuzzer targets with clang (standalone CMake project fuzz/)
# and runs each for a bounded time, starting from the seed corpus in
# fuzz/corpus/<target>/.  New inputs go to a scratch corpus in the build dir,
# never into the repository.  A crash, leak, sanitizer report or timeout
# fails the run and leaves the input in <build>/artifacts/.  The timeout of
# one input (-timeout=600) is a hang detector, far above any honest time on
# a loaded machine; the run's length is a budget, not a limit to meet.
#
# Usage: fuzz/run.sh [SECONDS]      seconds per target (default 20);
#                                   0 only replays the seed corpus
# Environment: PWRAP_FUZZ_BUILD_DIR  build dir (default <repo>/build-fuzz)
#              PWRAP_FUZZ_TARGETS    targets to run (default: all four)
#              PWRAP_FUZZ_PAM_PREFIX a PAM installed there for fuzz_pamdiff
#                                    (default: the system's)
#              CC                    clang to use (default: clang)
# Exit status: 0 clean, 1 a target failed, 77 clang/libFuzzer unavailable.
set -euo pipefail
secs=${1:-20}
case $secs in ''|*[!0-9]*) echo "usage: $0 [SECONDS]" >&2; exit 2;; esac
here=$(cd "$(dirname "$0")/.." && pwd)
build=${PWRAP_FUZZ_BUILD_DIR:-$here/build-fuzz}
targets=${PWRAP_FUZZ_TARGETS:-"fuzz_rewrite fuzz_passdb fuzz_conv fuzz_pamdiff"}
cc=${CC:-clang}
case $cc in *clang*) ;; *) cc=clang;; esac

if ! command -v "$cc" >/dev/null 2>&1 ||
   ! echo 'int LLVMFuzzerTestOneInput(const char *d, unsigned long n){(void)d;(void)n;return 0;}' |
     "$cc" -x c -fsanitize=fuzzer -o /dev/null - >/dev/null 2>&1; then
  echo "fuzz/run.sh: $cc with libFuzzer (libclang-rt-dev) not available; skipped" >&2
  exit 77
fi

# PWRAP_FUZZ_PAM_PREFIX: fuzz_pamdiff runs the libpam installed there
CC=$cc cmake -S "$here/fuzz" -B "$build" -DCMAKE_C_COMPILER="$cc" \
  -DPWRAP_PAM_PREFIX="${PWRAP_FUZZ_PAM_PREFIX:-}" >/dev/null
cmake --build "$build" -j"$(nproc)" >/dev/null

# Scratch files (fuzz_passdb rewrites a passdb per input, with fsync) go to
# tmpfs when there is one.
shm=${TMPDIR:-/tmp}
[ -d /dev/shm ] && [ -w /dev/shm ] && shm=/dev/shm
scratch=$(mktemp -d "$shm/pwrap-fuzz.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
mkdir -p "$build/artifacts"
status=0
for t in $targets; do
  work="$build/corpus/$t"
  mkdir -p "$work"
  if [ "$secs" = 0 ]; then
    limits=(-runs=0)
  else
    limits=(-max_total_time="$secs")
  fi
  # Target-specific options: fuzz_pamdiff gets its dictionary.
  extra=()
  case $t in
    fuzz_pamdiff) extra=(-dict="$here/fuzz/pamdiff.dict");;
  esac
  if [ ! -x "$build/$t" ]; then
    echo "== $t: skipped: not built (OpenPAM: its grammar is not pamdiff's)"
    continue
  fi
  echo "== $t (${secs}s)"
  # Private TMPDIR: whatever a target writes is removed with it.
  if TMPDIR=$scratch PWRAP_FUZZ_TMPDIR=$scratch \
     ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 \
     UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
     "$build/$t" "${limits[@]}" ${extra[@]+"${extra[@]}"} -timeout=600 -rss_limit_mb=2048 -max_len=16384 \
       -print_final_stats=1 -artifact_prefix="$build/artifacts/$t-" \
       "$work" "$here/fuzz/corpus/$t" >"$build/$t.log" 2>&1; then
    grep -E '^(stat::number_of_executed_units|Done)' "$build/$t.log" || true
  else
    status=1
    echo "fuzz/run.sh: $t FAILED; log $build/$t.log, inputs in $build/artifacts/" >&2
    grep -aE 'ERROR|SUMMARY|fuzz_[a-z]+:|Test unit written' "$build/$t.log" | head -20 >&2 || true
  fi
done
exit $status
