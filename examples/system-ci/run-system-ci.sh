#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# A PAM configuration's own tests, run for real as a normal user: every
# tests/*.pamtest names the stacks it tests with `service-dir system
# ../pam.d` (your role's rendered /etc/pam.d, or `service-dir system` for
# the machine's own), and pamtest runs them with pam_wrapper's test doubles
# in place of the modules that need root or a daemon (pam_wrapper(1),
# SYSTEM STACKS).  Nothing outside a private directory below $TMPDIR is
# written.  As root the tests run as nobody (pam_unix would ask root for no
# old password, pam_rootok would let root through).
#
# Usage: run-system-ci.sh [BUILD_DIR] [pamtest options...]
#   pamtest comes from BUILD_DIR/bin (a build tree), else from PATH (the
#   pam-wrapper-tools package).  Example: run-system-ci.sh "" -f junit -o report.xml
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd -P)
pamtest=pamtest
if [ $# -ge 1 ]; then
  if [ -n "$1" ]; then pamtest=$(cd "$1" && pwd -P)/bin/pamtest; fi
  shift
fi
as=()
if [ "$(id -u)" = 0 ]; then as=(setpriv --reuid=nobody --regid=nogroup --clear-groups); fi
# (physical paths and a directory the test user may enter: as root the
# tests run as nobody, who may not pass a private directory on the way;
# the scenarios name their stacks relative to themselves)
cd /
exec "${as[@]}" "$pamtest" "$@" "$here"/tests/*.pamtest
