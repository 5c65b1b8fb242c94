#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
#
# pam_matrix driven by pamtester, whose conversation is Linux-PAM's
# misc_conv (upstream pam_matrix crashed it by passing a NULL response
# pointer), inside the preload wrapper with bare module names.  Covers
# authenticate (verbose messages), acct_mgmt, sessions, chauthtok with the
# passdb rewritten, the mismatch message, PAM_MATRIX_PASSWD and a passdb with
# a bad line (logged as file:line on the wrapper's stderr).
set -eu

: "${PWRAP_PRELOAD:?run through ctest}"
dir=$(mktemp -d "${TMPDIR:-/tmp}/pwrap-pamtester.XXXXXX")
trap 'rm -rf "$dir"' EXIT
out=$dir/out
err=$dir/err
fails=0
passes=0

ok() { passes=$((passes + 1)); echo "ok - $1"; }
bad() {
	fails=$((fails + 1))
	echo "not ok - $1"
	sed 's/^/  stdout: /' "$out"
	sed 's/^/  stderr: /' "$err"
}

# wrapped ARGS...: pamtester ARGS under the wrapper, stdin from the caller.
wrapped() {
	LD_PRELOAD=$PWRAP_PRELOAD PAM_WRAPPER=1 \
		PAM_WRAPPER_SERVICE_DIR=$dir/services \
		pamtester "$@" >"$out" 2>"$err"
}

# slowly LINE...: one line at a time, each once pamtester has asked for it
# (its Nth password prompt is in $out or $err).  misc_conv reads stdin with
# a single read(2) per prompt, so lines written together would all go to
# the first; waiting for the prompt, not for some time, holds on a loaded
# machine too (600 s without it: only a hang).  The caller removes $out and
# $err first: the other side of the pipe makes them anew.
slowly() {
	n=0
	for line in "$@"; do
		n=$((n + 1))
		tries=0
		until [ "$(cat "$out" "$err" 2>/dev/null |
			   grep -o -i password | wc -l)" -ge "$n" ] ||
		      [ "$tries" -ge 12000 ]; do
			tries=$((tries + 1))
			sleep 0.05
		done
		printf '%s\n' "$line"
	done
}

# check NAME WANT-RC RC GREP-ARGS...: the last run returned RC and its output
# (stdout and stderr) matches.
check() {
	name=$1 want=$2 got=$3
	shift 3
	if [ "$got" -eq "$want" ] && cat "$out" "$err" | grep -q "$@"; then
		ok "$name"
	else
		bad "$name (exit $got, want $want)"
	fi
}

mkdir "$dir/services"
printf '# test users\nalice:secret:svc\nbob:bobpw:other\n' >"$dir/passdb"
for g in auth account password session; do
	echo "$g required pam_matrix.so passdb=$dir/passdb verbose"
done >"$dir/services/svc"

rc=0; echo secret | wrapped svc alice authenticate || rc=$?
check "authenticate" 0 $rc "successfully authenticated"
check "verbose success message" 0 $rc "^Authentication succeeded"
check "password prompt" 0 $rc "Password: "

rc=0; echo wrong | wrapped svc alice authenticate || rc=$?
check "wrong password" 1 $rc "Authentication failed"

rc=0; echo bobpw | wrapped svc nobody-here authenticate || rc=$?
check "unknown user" 1 $rc "Authentication failure"

rc=0; wrapped svc alice acct_mgmt </dev/null || rc=$?
check "acct_mgmt" 0 $rc "account management done"

rc=0; wrapped svc bob acct_mgmt </dev/null || rc=$?
check "acct_mgmt other service" 1 $rc "Permission denied"

rc=0; wrapped svc alice open_session close_session </dev/null || rc=$?
check "sessions" 0 $rc "session has successfully been closed"

rm -f "$out" "$err"
rc=0; slowly secret n3w n3w | wrapped svc alice chauthtok || rc=$?
check "chauthtok" 0 $rc "altered successfully"
check "chauthtok prompts" 0 $rc "Old password: New Password :Verify New Password :"
if grep -qx 'alice:n3w:svc' "$dir/passdb" && grep -qx '# test users' "$dir/passdb" &&
	grep -qx 'bob:bobpw:other' "$dir/passdb"; then
	ok "passdb rewritten"
else
	bad "passdb rewritten"
fi

rc=0; echo n3w | wrapped svc alice authenticate || rc=$?
check "new password works" 0 $rc "successfully authenticated"

rm -f "$out" "$err"
rc=0; slowly n3w one two | wrapped svc alice chauthtok || rc=$?
check "chauthtok mismatch" 1 $rc "Passwords do not match"

# The passdb from the environment, and a bad line of alice's in it.
printf 'alice:broken\nalice:envpw:svc\n' >"$dir/envdb"
echo "auth required pam_matrix.so" >"$dir/services/envsvc"
rc=0; echo envpw | PAM_WRAPPER_DEBUGLEVEL=1 PAM_MATRIX_PASSWD=$dir/envdb \
	wrapped envsvc alice authenticate || rc=$?
check "PAM_MATRIX_PASSWD" 0 $rc "successfully authenticated"
check "bad line logged" 0 $rc "$dir/envdb:1: too few fields"

echo "$passes passed, $fails failed"
[ "$fails" -eq 0 ]
