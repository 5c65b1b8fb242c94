#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Checks upstream's version rule of our CMake packages: find_package() of
# pam_wrapper and pamtest with any older version (0.9, 1, 1.1.4 as suites
# written for upstream ask) or this one finds ours, in CONFIG_ROOT (not
# another installation, such as Debian's 1.1.4 in /usr, that CMake would
# silently take instead); a newer one (next minor, next major) finds none.
# Usage: check_find_versions.sh CMAKE WORK_DIR CONFIG_ROOT [CMAKE_PREFIX_PATH]
#   CONFIG_ROOT: the directory below which the found config files must be.
set -euo pipefail
cmake=$1 work=$2 root=$3 prefix_path=${4:-}
src=$(cd "$(dirname "$0")/../.." && pwd)
v=$(sed -n 's/^project(pam_wrapper VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
IFS=. read -r major minor _ <<< "$v"
older="0.9 1 1.1.4 $v"
newer="$major.$((minor + 1)) $((major + 1))"
reqs=()
for name in pam_wrapper pamtest; do
  for r in $older $newer; do reqs+=("$name@$r"); done
done
"$cmake" -S "$src/tests/packaging/find_versions" -B "$work" \
  -DREQUESTS="$(IFS=';'; echo "${reqs[*]}")" ${prefix_path:+-DCMAKE_PREFIX_PATH="$prefix_path"} \
  > "$work.log" 2>&1 || { cat "$work.log"; echo "FAIL: find_versions: configure" >&2; exit 1; }
cat "$work/find-versions.txt"
bad=0
for name in pam_wrapper pamtest; do
  for r in $older; do
    grep -qx "FOUND $name $r $v $root/.*" "$work/find-versions.txt" \
      || { echo "FAIL: find_package($name $r) did not find ours ($v below $root)" >&2; bad=1; }
  done
  for r in $newer; do
    grep -qx "NOTFOUND $name $r" "$work/find-versions.txt" \
      || { echo "FAIL: find_package($name $r) found a package" >&2; bad=1; }
  done
done
exit "$bad"
