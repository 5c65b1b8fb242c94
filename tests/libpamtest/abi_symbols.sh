#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# libpamtest's dynamic symbols: every function binaries built against an
# older libpamtest.h call is still exported (and the new ones are there),
# and the SONAME is still libpamtest.so.0.
# Usage: abi_symbols.sh LIBPAMTEST_SO
set -eu
lib=$1
syms=$(nm -D --defined-only "$lib" | awk '$2 == "T" { print $3 }')
rc=0
for f in _pamtest _pamtest_conv _pamtest_failed_case pamtest_strerror \
         pamtest_free_env _pamtest_faults _pamtest_conv_faults; do
  if ! printf '%s\n' "$syms" | grep -qx "$f"; then
    echo "abi_symbols: $lib does not export $f" >&2
    rc=1
  fi
done
soname=$(readelf -d "$lib" | sed -n 's/.*Library soname: \[\(.*\)\]/\1/p')
if [ "$soname" != libpamtest.so.0 ]; then
  echo "abi_symbols: SONAME is '$soname', not libpamtest.so.0" >&2
  rc=1
fi
exit $rc
