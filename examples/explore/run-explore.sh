#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# The explorer on a real-looking mistake: before/ has a pam_faildelay.so
# line inserted into the pam-auth-update block of common-auth, where the
# "success=1" of pam_unix.so now jumps onto pam_deny.so: nobody can log in.
# after/ has the line above the block.  Then check.pamtest keeps the fixed
# stack under test.
#
# Usage: run-explore.sh [BUILD_DIR]   (pamtest from BUILD_DIR/bin, else PATH)
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
pamtest=pamtest
if [ $# -ge 1 ]; then pamtest=$1/bin/pamtest; fi
model=(--model pam_nologin=ignore,auth_err)

echo "== before: the decision table of login's auth stack"
set +e
"$pamtest" explore -d "$here/before" login -t auth "${model[@]}"
rc=$?
set -e
[ $rc = 1 ] || { echo "run-explore.sh: expected findings (exit 1), got $rc" >&2; exit 1; }

echo "== after"
"$pamtest" explore -d "$here/after" login -t auth "${model[@]}"

echo "== after, every group, as json"
"$pamtest" explore -d "$here/after" login -f json > /dev/null

echo "== the scenario that keeps it that way"
"$pamtest" "$here/check.pamtest"
