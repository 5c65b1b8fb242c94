#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# A Python PAM application (login.py, Debian's python3-pam) logs alice in
# through pam_matrix and pam_env under libpam_wrapper.so, as a normal user
# (as root it drops to nobody first).
#
# Usage: examples/python-pam/run-python-pam.sh [BUILD_DIR]
# Needs: python3-pam.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# libpam_wrapper.so: $PAM_WRAPPER_LIB, else BUILD_DIR/lib (default: this
# tree's build/), else pkg-config; our modules live next to it.
lib=${PAM_WRAPPER_LIB:-${1:-$here/../../build}/lib/libpam_wrapper.so}
[ -e "$lib" ] || lib=$(pkg-config --libs pam_wrapper)
lib=$(realpath "${lib%% *}") && modules=${PAM_WRAPPER_MODULES:-$(dirname "$lib")/pam_wrapper}

dir=$(mktemp -d "${TMPDIR:-/tmp}/pam_wrapper-python-pam.XXXXXX")
trap 'rm -rf "$dir"' EXIT
mkdir "$dir/services" "$dir/tmp"
echo "alice:secret:pylogin" > "$dir/passdb"
cp "$here/pam_env.conf" "$here/login.py" "$dir/"
sed -e "s|@MODULES@|$modules|g" -e "s|@DIR@|$dir|g" "$here/pylogin.pam" > "$dir/services/pylogin"

as=()
if [ "$(id -u)" = 0 ]; then
  as=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
  chown -R nobody:nogroup "$dir"
fi
wrapped() {
  "${as[@]}" env TMPDIR="$dir/tmp" LD_PRELOAD="$lib" PAM_WRAPPER=1 \
    PAM_WRAPPER_SERVICE_DIR="$dir/services" timeout 600 "$@"
}

echo "== service pylogin:"
grep -v '^#' "$dir/services/pylogin" | sed 's/^/   /'
echo
echo "-- alice with the right password"
echo secret | wrapped /usr/bin/python3 "$dir/login.py" pylogin alice
echo
echo "-- alice with a wrong password"
if echo wrong | wrapped /usr/bin/python3 "$dir/login.py" pylogin alice; then
  echo "example: a wrong password was accepted" >&2; exit 1
fi
echo
for _ in $(seq 6000); do [ -z "$(ls -A "$dir/tmp")" ] && break; sleep 0.1; done
if [ -n "$(ls -A "$dir/tmp")" ]; then echo "example: left in TMPDIR: $(ls -A "$dir/tmp")" >&2; exit 1; fi
echo "example: done - no root, no /etc/pam.d, nothing left in TMPDIR"
