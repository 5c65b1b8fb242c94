#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# module_table_upstream_fetch: upstream pam_wrapper's modules as Debian
# ships them, for the module table to compare ours with
# (test_module_table_upstream_debian12/_debian13): Debian 12's
# libpam-wrapper (1.1.4) and Debian 13's (1.1.7), whichever Debian this is.
# Each is downloaded (apt-get download) and unpacked (dpkg-deb -x) into the
# build tree, never installed: so the comparison runs on a fresh machine,
# and with our own packages installed over Debian's.  The other release's
# package index is read with apt's lists and cache in a directory of our
# own, from the mirror this machine's apt uses (scripts/debian-mirror.sh).
#
# Usage: fetch_upstream.sh OUT SUITE...   (e.g. OUT bookworm trixie)
# For each SUITE: OUT/SUITE/ holds the package's files (kept: a later run
# fetches nothing), or OUT/SUITE.missing says why it could not be fetched
# (no network, no Debian mirror): the tests then skip with that reason.
# Exit status: 0, or 1 when a downloaded package cannot be unpacked.
set -euo pipefail
out=${1:?usage: fetch_upstream.sh OUT SUITE...}
shift
src=${PWRAP_SOURCE_DIR:-$(cd "$(dirname "$0")/../.." && pwd)}
mkdir -p "$out"

fetch() {  # suite: OUT/suite, or OUT/suite.missing
  local suite=$1 apt mirror deb
  local dir=$out/$suite
  [ ! -e "$dir/.fetched" ] || return 0
  rm -rf "$dir" "$dir.missing" "$dir.apt"
  if ! mirror=$("$src/scripts/debian-mirror.sh" 2>&1); then
    echo "$mirror" > "$dir.missing"
    return 0
  fi
  apt=$dir.apt
  mkdir -p "$apt/lists/partial" "$apt/cache/archives/partial" "$apt/deb"
  echo "deb $mirror $suite main" > "$apt/sources.list"
  local o=(-q -o "Dir::State::Lists=$apt/lists" -o "Dir::Cache=$apt/cache"
           -o "Dir::Etc::SourceList=$apt/sources.list"
           -o "Dir::Etc::SourceParts=$apt/none")
  if ! apt-get "${o[@]}" --error-on=any update > "$apt/log" 2>&1 ||
     ! (cd "$apt/deb" && apt-get "${o[@]}" download libpam-wrapper) >> "$apt/log" 2>&1; then
    cat "$apt/log"
    echo "could not fetch libpam-wrapper of Debian's $suite from $mirror" \
         "($(grep -E '^(W: Failed to fetch|E:)' "$apt/log" | sed -n 1p); no network?)" \
      > "$dir.missing"
    rm -rf "$apt"
    return 0
  fi
  deb=$(ls "$apt"/deb/libpam-wrapper_*.deb)
  dpkg-deb -x "$deb" "$dir"
  dpkg-deb -f "$deb" Version > "$dir/.version"
  rm -rf "$apt"
  touch "$dir/.fetched"
}

for suite; do
  fetch "$suite"
  if [ -e "$out/$suite.missing" ]; then
    echo "$suite: $(cat "$out/$suite.missing")"
  else
    echo "$suite: libpam-wrapper $(cat "$out/$suite/.version") in $out/$suite"
  fi
done
