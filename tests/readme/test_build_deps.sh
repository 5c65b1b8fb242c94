#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Building needs none of the test packages (README, "From source"): in a
# private mount namespace where cmocka (libcmocka-dev) and pytest
# (python3-pytest) are hidden by overlay whiteouts, a plain configure of the
# tree succeeds, and one with -DBUILD_TESTING=ON stops with one sentence that
# names both packages.  Exit 77 (skip) when such a namespace cannot be made.
# Usage: test_build_deps.sh SOURCE_DIR SCRATCH_DIR   (run by ctest)
set -euo pipefail
src=${1:?usage: test_build_deps.sh SOURCE_DIR SCRATCH_DIR}
scratch=${2:?}
cmake=${PWRAP_CMAKE:-cmake}
py=${PWRAP_PYTHON:-/usr/bin/python3}

if [ -z "${PWRAP_BUILD_DEPS_INNER:-}" ]; then
  rm -rf "$scratch"
  mkdir -p "$scratch"
  uns=(unshare -m)
  [ "$(id -u)" = 0 ] || uns=(unshare -r -m)
  if ! "${uns[@]}" true 2>/dev/null; then
    echo "skipped: cannot make a private mount namespace here (${uns[*]})"
    exit 77
  fi
  PWRAP_BUILD_DEPS_INNER=1 exec "${uns[@]}" bash "$0" "$@"
fi

mount --make-rprivate /
n=0
hide() {  # dir names...: whiteouts over them in an overlay of dir
  local dir=$1 up=$scratch/up$n wk=$scratch/wk$n; shift
  n=$((n + 1))
  mkdir -p "$up" "$wk"
  for f in "$@"; do mknod "$up/$f" c 0 0; done
  if ! mount -t overlay overlay -o "lowerdir=$dir,upperdir=$up,workdir=$wk" "$dir" 2>/dev/null; then
    echo "skipped: cannot mount an overlay over $dir here"
    exit 77
  fi
}
# (what is not installed needs no hiding)
inc=$(echo '#include <cmocka.h>' | cpp -H -o /dev/null -x c - 2>&1 |
      sed -n 's|^\. \(.*\)/cmocka\.h$|\1|p' | head -n1 || true)
[ -z "$inc" ] || hide "$inc" $(cd "$inc" && ls cmocka*.h)
libs=$(for f in /usr/lib/*/libcmocka.so* /usr/lib/libcmocka.so*; do
         if [ -e "$f" ]; then dirname "$f"; fi; done | sort -u)
for l in $libs; do hide "$l" $(cd "$l" && ls libcmocka.so*); done
pydir=$("$py" -c 'import os, pytest; print(os.path.dirname(os.path.dirname(pytest.__file__)))' \
        2>/dev/null || true)
[ -z "$pydir" ] || hide "$pydir" $(cd "$pydir" && ls -d pytest _pytest py.py 2>/dev/null || true)
if echo "#include <cmocka.h>" | cpp -o /dev/null -x c - 2>/dev/null || "$py" -c 'import pytest' 2>/dev/null; then
  echo "test_build_deps.sh: could not hide cmocka or pytest" >&2
  exit 1
fi

fail=0
if ! "$cmake" -S "$src" -B "$scratch/plain" -DPython3_EXECUTABLE="$py" \
     > "$scratch/plain.log" 2>&1; then
  echo "FAIL: a plain configure needs a test package:"; cat "$scratch/plain.log"
  fail=1
fi
if "$cmake" -S "$src" -B "$scratch/tests" -DPython3_EXECUTABLE="$py" \
   -DBUILD_TESTING=ON > "$scratch/tests.log" 2>&1; then
  echo "FAIL: -DBUILD_TESTING=ON configured without cmocka and pytest"
  fail=1
fi
msg=$(tr -s ' \n' '  ' < "$scratch/tests.log")
for want in "need cmocka (Debian: libcmocka-dev), pytest for $py (Debian: python3-pytest)" \
            "configure without -DBUILD_TESTING=ON"; do
  case $msg in
    *"$want"*) ;;
    *) echo "FAIL: the -DBUILD_TESTING=ON error does not say: $want"; cat "$scratch/tests.log"; fail=1;;
  esac
done
[ $fail = 0 ] && echo "ok: plain configure without cmocka and pytest; BUILD_TESTING=ON names both"
exit $fail
