#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Compiles one file and checks the outcome, for the libpamtest compile tests.
# Usage: expect_compile.sh ok    COMPILER ARGS...
#        expect_compile.sh error REGEX COMPILER ARGS...
# "error" passes only when the compiler fails AND its messages match REGEX,
# so an unrelated failure (a missing include) does not count as success.
set -u
mode=$1; shift
regex=
if [ "$mode" = error ]; then
  regex=$1; shift
fi
out=$("$@" 2>&1); rc=$?
printf '%s\n' "$out"
case $mode in
  ok)
    [ $rc -eq 0 ] || { echo "expect_compile: failed to compile" >&2; exit 1; } ;;
  error)
    [ $rc -ne 0 ] || { echo "expect_compile: compiled but must not" >&2; exit 1; }
    printf '%s\n' "$out" | grep -Eq -- "$regex" ||
      { echo "expect_compile: failed without naming /$regex/" >&2; exit 1; } ;;
  *)
    echo "expect_compile: unknown mode $mode" >&2; exit 2 ;;
esac
