#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Prints the URI of the Debian archive this machine's apt takes its packages
# from, as apt itself reads its sources (/etc/apt/sources.list and
# sources.list.d/, one-line .list and deb822 .sources alike), so that what
# fetches another Debian release (scripts/debian-chroot.sh,
# tests/modules/fetch_upstream.sh) uses the same mirror and the tree names
# none.  The archive is the source whose Release file says "Label: Debian"
# (not Debian-Security, not a third party's repository): apt knows labels
# only after `apt-get update`, which is run first (as root) when it has none.
# Usage: scripts/debian-mirror.sh   (exit 1, saying why, when there is none)
set -euo pipefail

mirror() {
  apt-get indextargets --format '$(REPO_URI)' 'Label: Debian' 2>/dev/null |
    sed -n 1p
}
uri=$(mirror)
if [ -z "$uri" ] && [ "$(id -u)" = 0 ]; then
  apt-get update -qq >/dev/null 2>&1 || true
  uri=$(mirror)
fi
if [ -z "$uri" ]; then
  echo "debian-mirror.sh: apt knows no Debian archive (no source whose Release" \
       "says 'Label: Debian'; not Debian, or 'apt-get update' never ran)" >&2
  exit 1
fi
echo "${uri%/}"
