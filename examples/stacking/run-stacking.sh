#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The stacking example: pam_set_items -> pam_unix -> pam_get_items, as a
# normal user (as root it drops to nobody first).  pam_unix checks a real
# password for "carol", who exists only in nss_wrapper's passwd file with
# her SHA-512 hash in the password field: pam_unix verifies such entries in
# its own process, while a shadowed entry ("x") would need /etc/shadow or
# the setuid unix_chkpwd helper, which ignores LD_PRELOAD.
#
# Shown: a token set by pam_set_items is used by both use_first_pass and
# try_first_pass without a prompt; without a token use_first_pass fails at
# once and try_first_pass prompts; pam_get_items shows what pam_unix saw.
#
# Usage: examples/stacking/run-stacking.sh [BUILD_DIR]
# Needs: libnss-wrapper python3-pam pkg-config.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# libpam_wrapper.so: $PAM_WRAPPER_LIB, else BUILD_DIR/lib (default: this
# tree's build/), else pkg-config; our modules live next to it.
lib=${PAM_WRAPPER_LIB:-${1:-$here/../../build}/lib/libpam_wrapper.so}
[ -e "$lib" ] || lib=$(pkg-config --libs pam_wrapper)
lib=$(realpath "${lib%% *}") && modules=${PAM_WRAPPER_MODULES:-$(dirname "$lib")/pam_wrapper}
nss=$(pkg-config --libs nss_wrapper) && nss=${nss%% *}

dir=$(mktemp -d "${TMPDIR:-/tmp}/pam_wrapper-stacking.XXXXXX")
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/services" "$dir/tmp"
cp "$here/passwd" "$here/group" "$here/show-items.py" "$dir/"
for option in use_first_pass try_first_pass; do
  sed -e "s|@MODULES@|$modules|g" -e "s|@OPTION@|$option|g" \
    "$here/stacking.pam" > "$dir/services/stacking-$option"
done

as=()
if [ "$(id -u)" = 0 ]; then
  as=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
  chown -R nobody:nogroup "$dir"
fi
try() { # SERVICE USER ANSWER [VAR=value for pam_set_items...]
  local service=$1 user=$2 answer=$3
  shift 3
  "${as[@]}" env TMPDIR="$dir/tmp" LD_PRELOAD="$nss:$lib" PAM_WRAPPER=1 \
    PAM_WRAPPER_SERVICE_DIR="$dir/services" \
    NSS_WRAPPER_PASSWD="$dir/passwd" NSS_WRAPPER_GROUP="$dir/group" "$@" \
    timeout 600 /usr/bin/python3 "$dir/show-items.py" "$service" "$user" "$answer"
}

echo "== service stacking-use_first_pass:"
grep -v '^#' "$dir/services/stacking-use_first_pass" | sed 's/^/   /'
echo "   (carol's password is \"unixpw\")"
for option in use_first_pass try_first_pass; do
  echo
  echo "-- $option, PAM_AUTHTOK=unixpw from pam_set_items"
  try "stacking-$option" carol "" PAM_AUTHTOK=unixpw PAM_RHOST=client.example
  echo "-- $option, PAM_AUTHTOK=wrong from pam_set_items (pam_unix does not ask again)"
  try "stacking-$option" carol unixpw PAM_AUTHTOK=wrong
  echo "-- $option, no token set; the prompt (if any) is answered \"unixpw\""
  try "stacking-$option" carol unixpw 2>&1
done
echo
echo "-- a user nobody knows"
try stacking-use_first_pass ghost "" PAM_AUTHTOK=unixpw
echo
for _ in $(seq 6000); do [ -z "$(ls -A "$dir/tmp")" ] && break; sleep 0.1; done
if [ -n "$(ls -A "$dir/tmp")" ]; then echo "example: left in TMPDIR: $(ls -A "$dir/tmp")" >&2; exit 1; fi
echo "example: done - pam_unix checked carol's password without root or /etc changes"
