#!/bin/bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The benchmark suite (doc/benchmarks.md): P1 tax on a non-PAM process, P2
# in-process transactions/s, P3 a 1,000,000-line passdb, P4 1,000 concurrent
# processes under a tight RLIMIT_NPROC, P5 a fresh PAM program's CPU (every
# process it creates), P7 sshd password logins (CPU of sshd's whole tree),
# SW the sweep's cost per dead runtime directory, and P2 under callgrind;
# ours against Debian's libpam-wrapper ("upstream"), side by side in the
# same run, as ratios.
#
#   bash bench/run.sh            full run (~5 min); installs libpam-wrapper
#                                and valgrind with apt when root; writes
#                                bench/results/<date>.md (a run with --only:
#                                <date>-<benchmarks>.md) and prints the
#                                summary table of every goal (met / NOT met)
#   bash bench/run.sh --smoke    seconds, no upstream, no apt, writes nothing;
#                                exits 1 only if a run FAILED (never on timing)
#
# Other options are passed to bench/bench.py (--only P5,P2, --no-callgrind,
# --p4-n N, --p4-user USER, --p7-rounds N, --p7-logins N, --keep, --out
# FILE, ...).  PWRAP_BENCH_BUILD
# overrides the build directory (default build-bench, Release, configured
# here if missing).
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
src=$(dirname "$here")
build=${PWRAP_BENCH_BUILD:-$src/build-bench}
smoke=0
for a in "$@"; do
	[ "$a" = --smoke ] && smoke=1
done

# Packages: Debian's pam_wrapper (the upstream column), valgrind (callgrind),
# sshd, ssh and the cwrap libraries with strace (P7; without them P7 says it
# was skipped), and what building our tree needs.
pkgs="cmake gcc libpam0g-dev python3"
[ $smoke = 1 ] || pkgs="$pkgs libpam-wrapper valgrind openssh-server
	openssh-client libnss-wrapper libuid-wrapper strace"
missing=
for p in $pkgs; do
	dpkg-query -W -f '${Status}' "$p" 2>/dev/null | grep -q 'ok installed' ||
		missing="$missing $p"
done
if [ -n "$missing" ]; then
	if [ "$(id -u)" = 0 ]; then
		echo "run.sh: installing$missing" >&2
		# (install-deps.sh keeps openssh-server's postinst from
		# starting a service)
		bash "$src/scripts/install-deps.sh" $missing >/dev/null
	else
		echo "run.sh: missing packages:$missing (run as root to install;" \
		     "continuing without them)" >&2
	fi
fi

# Our tree, Release.  Only the two targets the bench uses are built, so a
# half-edited tool elsewhere in the tree cannot stop it.
if [ ! -f "$build/CMakeCache.txt" ]; then
	cmake -S "$src" -B "$build" -DCMAKE_BUILD_TYPE=Release \
		-DPython3_EXECUTABLE=/usr/bin/python3 -DBUILD_TESTING=OFF >/dev/null
fi
cmake --build "$build" -j2 --target pam_wrapper pam_matrix >/dev/null

# The drivers.
bin=$build/bench
mkdir -p "$bin"
cflags="-O2 -Wall -Wextra -Werror"
cc $cflags -o "$bin/spawn" "$here/spawn.c"
cc $cflags -o "$bin/p2_txn" "$here/p2_txn.c" -lpam
cc $cflags -shared -fPIC -o "$bin/empty.so" "$here/empty.c"
cc $cflags -shared -fPIC -o "$bin/noaudit.so" "$here/noaudit.c"

args=(--build "$build" --bin "$bin")
if [ $smoke = 0 ]; then
	# --out wins; a partial run (--only) never replaces the day's full report
	out=$here/results/$(date +%Y-%m-%d)
	prev=
	for a in "$@"; do
		case $a in
		--out | --out=*) out= ;;
		--only=*) only=${a#--only=} ;;
		esac
		[ "$prev" = --only ] && only=$a
		prev=$a
	done
	if [ -n "$out" ]; then
		[ -n "${only:-}" ] && out=$out-$(printf %s "$only" | tr -c 'A-Za-z0-9' -)
		args+=(--out "$out.md")
	fi
fi
exec python3 "$here/bench.py" "${args[@]}" "$@"
