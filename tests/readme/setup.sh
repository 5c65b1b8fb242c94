#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# readme_setup: what a newcomer has before the README's other blocks.  Runs
# the README's first command, scripts/demo.sh (it builds the whole tree into
# OUT/build and runs the demo), then installs that build into OUT/prefix as
# `sudo cmake --install build` would (test_readme.py puts the prefix on the
# paths).  Usage: setup.sh OUT
set -euo pipefail
out=${1:?usage: setup.sh OUT}
cmake=${PWRAP_CMAKE:-cmake}
rm -rf "$out"
mkdir -p "$out"
# (PWRAP_BUILD_DIR is ctest's build tree here: point it at our own)
PWRAP_BUILD_DIR=$out/build bash "$PWRAP_SOURCE_DIR/scripts/demo.sh"
for f in lib/libpam_wrapper.so bin/pam_wrapper bin/pamtest; do
  [ -e "$out/build/$f" ] || { echo "setup.sh: scripts/demo.sh did not build $f" >&2; exit 1; }
done
"$cmake" --install "$out/build" --prefix "$out/prefix" >/dev/null
