#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# test_module_table_upstream_debian12/_debian13: the module table
# (test_module_table) against upstream's modules that
# module_table_upstream_fetch (fetch_upstream.sh) unpacked into DIR, or
# skipped with the reason it gave when it could not fetch them.
# Usage: upstream_table.sh DIR PROGRAM   (MT_TABLE_MODDIR lies inside DIR)
dir=$1
prog=$2
if [ -e "$dir.missing" ]; then
  echo "SKIPPED: $(cat "$dir.missing")"
  exit 77
fi
if [ ! -e "$dir/.fetched" ]; then
  echo "$dir was not fetched: run the fixture module_table_upstream_fetch first" >&2
  exit 1
fi
echo "Debian's libpam-wrapper $(cat "$dir/.version"), unpacked in $dir"
exec "$prog"
