#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# What a change to a PAM configuration does: before/ is Debian 12's login
# with its common-auth and common-account; hardened/ adds pam_faillock as
# pam_faillock(8) says (no combination of module outcomes succeeds that
# did not: exit status 0); mistake/ puts pam_faillock's failure counter in
# the place of pam_deny.so, and a wrong password falls through to
# pam_permit.so (exit status 1, and the path).
#
# Usage: run-diff.sh [BUILD_DIR]   (pamtest from BUILD_DIR/bin, else PATH)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pamtest=pamtest
if [ $# -ge 1 ]; then pamtest=$1/bin/pamtest; fi
# what pam_faillock returns (preauth: success or auth_err, authfail:
# ignore or auth_err), whether this machine has it or not
model=(--model pam_faillock=success,auth_err,ignore)

echo "== the hardening"
"$pamtest" explore --diff "$here/before" "$here/hardened" login "${model[@]}"

echo "== the mistake"
set +e
"$pamtest" explore --diff "$here/before" "$here/mistake" login -t auth "${model[@]}"
rc=$?
set -e
[ $rc = 1 ] || { echo "run-diff.sh: expected a new success (exit 1), got $rc" >&2; exit 1; }

echo "== the scenario that keeps the hardening under test"
"$pamtest" "$here/no-new-way-in.pamtest"
