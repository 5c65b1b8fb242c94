#!/usr/bin/env bash
# Runs the C tests labelled "memcheck" of an existing build under valgrind;
# any valgrind error or definite leak fails the test.  Forked children (the
# wrapper's watcher, tests' own children) are not checked: they _exit with
# their parent's heap, which is not a leak.
# Usage: scripts/valgrind.sh BUILD_DIR
set -euo pipefail
build=${1:?usage: valgrind.sh BUILD_DIR}
supp="$(cd "$(dirname "$0")" && pwd)/valgrind.supp"
# (a subshell, not ctest --test-dir: that needs CMake 3.20)
(cd "$build" && ctest --output-on-failure -j"$(nproc)" -T memcheck -L memcheck \
  --overwrite MemoryCheckCommand=/usr/bin/valgrind \
  --overwrite "MemoryCheckCommandOptions=--error-exitcode=99 --leak-check=full --errors-for-leak-kinds=definite --show-leak-kinds=definite --track-fds=no --trace-children=no --child-silent-after-fork=yes --suppressions=$supp" \
  ) | tee "$build/valgrind-summary.txt"
if grep -q "Defects:" "$build/valgrind-summary.txt"; then
  echo "valgrind.sh: memcheck defects found" >&2
  exit 1
fi
