#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Debian's pamtester under libpam_wrapper.so, as a normal user: every PAM
# operation through pam_matrix with the answers on stdin, then stock
# Linux-PAM modules (pam_echo, pam_succeed_if, pam_exec) with nss_wrapper
# serving the group they check.  As root it drops to nobody first.
#
# Usage: examples/pamtester/run-pamtester.sh [BUILD_DIR]
# Needs: pamtester libnss-wrapper pkg-config.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# libpam_wrapper.so: $PAM_WRAPPER_LIB, else BUILD_DIR/lib (default: this
# tree's build/), else pkg-config; our modules live next to it.
lib=${PAM_WRAPPER_LIB:-${1:-$here/../../build}/lib/libpam_wrapper.so}
[ -e "$lib" ] || lib=$(pkg-config --libs pam_wrapper)
lib=$(realpath "${lib%% *}") && modules=${PAM_WRAPPER_MODULES:-$(dirname "$lib")/pam_wrapper}
nss=$(pkg-config --libs nss_wrapper) && nss=${nss%% *}

dir=$(mktemp -d "${TMPDIR:-/tmp}/pam_wrapper-pamtester.XXXXXX")
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/services" "$dir/tmp"
echo "alice:secret:matrix" > "$dir/passdb"
for svc in matrix stock; do
  sed -e "s|@MODULES@|$modules|g" -e "s|@DIR@|$dir|g" "$here/$svc.pam" > "$dir/services/$svc"
done
cp "$here/check-token.sh" "$dir/"
printf 'alice:x:1000:1000:Alice:/home/alice:/bin/sh\nbob:x:1001:1001:Bob:/home/bob:/bin/sh\n' > "$dir/passwd"
printf 'alice:x:1000:\nbob:x:1001:\ntesters:x:2000:alice\n' > "$dir/group"

# As root, prove the point as nobody (who then owns the scratch files:
# chauthtok rewrites the passdb next to itself).
as=()
if [ "$(id -u)" = 0 ]; then
  as=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
  chown -R nobody:nogroup "$dir"
fi
wrapped() { # pamtester ARGS... (stdin: the answers, one per line)
  "${as[@]}" env TMPDIR="$dir/tmp" LD_PRELOAD="$nss:$lib" PAM_WRAPPER=1 \
    PAM_WRAPPER_SERVICE_DIR="$dir/services" \
    NSS_WRAPPER_PASSWD="$dir/passwd" NSS_WRAPPER_GROUP="$dir/group" \
    timeout 600 pamtester "$@"
}
must_fail() { # WHY ANSWER PAMTESTER-ARGS...
  local why=$1 answer=$2
  shift 2
  if echo "$answer" | wrapped "$@"; then echo "example: $why" >&2; exit 1; fi
}

echo "== running as $("${as[@]}" id -un); service matrix:"
grep -v '^#' "$dir/services/matrix" | sed 's/^/   /'
echo
echo "-- authenticate, acct_mgmt, open_session, close_session, chauthtok"
echo "   (answers: password, old password, new password twice)"
printf 'secret\nsecret\nnew-secret\nnew-secret\n' |
  wrapped -v matrix alice authenticate acct_mgmt open_session close_session chauthtok
echo "   passdb now: $(cat "$dir/passdb")"
echo
echo "-- the old password no longer works (pam_matrix verbose says so)"
must_fail "the old password was accepted" secret matrix alice authenticate
echo
echo "== service stock:"
grep -v '^#' "$dir/services/stock" | sed 's/^/   /'
echo
echo "-- alice is in group testers and knows the token"
echo opensesame | wrapped -v stock alice authenticate acct_mgmt
echo
echo "-- bob is not in group testers"
must_fail "bob got in" opensesame stock bob authenticate
echo
echo "-- alice with a wrong token: check-token.sh says no"
must_fail "a wrong token was accepted" nope stock alice authenticate
echo
for _ in $(seq 6000); do [ -z "$(ls -A "$dir/tmp")" ] && break; sleep 0.1; done
if [ -n "$(ls -A "$dir/tmp")" ]; then echo "example: left in TMPDIR: $(ls -A "$dir/tmp")" >&2; exit 1; fi
echo "example: done - no root, no /etc/pam.d, nothing left in TMPDIR"
