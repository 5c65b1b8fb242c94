#!/usr/bin/env bash
# The demo: an ordinary PAM application (examples/demo/pam_demo.c) logs a user
# in through pam_matrix, with its PAM configuration taken from a throwaway
# directory instead of /etc/pam.d, by a normal (non-root) user.
# Usage: scripts/demo.sh      (as root it installs missing packages first and
#                              runs the application as nobody)
# It builds the whole tree into build/ (PWRAP_BUILD_DIR), without the tests.
set -euo pipefail
here=$(cd "$(dirname "$0")/.." && pwd)
"$here/scripts/install-deps.sh"

build=${PWRAP_BUILD_DIR:-$here/build}
echo "== building into $build"
cmake -S "$here" -B "$build" -DPython3_EXECUTABLE=/usr/bin/python3 >/dev/null
# Everything (not only what the demo runs): the README's Quick start uses
# this build next (lib/libpam_wrapper.so, bin/pam_wrapper, bin/pamtest).
cmake --build "$build" -j"$(nproc)" >/dev/null

exec bash "$here/examples/demo/run-demo.sh" "$build"
