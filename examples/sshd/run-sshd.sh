#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Debian's OpenSSH sshd as a normal user, its PAM stack (pam_matrix) read
# through libpam_wrapper.so, the account "alice" served by nss_wrapper, ids
# by uid_wrapper; then ssh logs in with a password, with keyboard-
# interactive, and fails with a wrong password.  Everything lives in a
# scratch directory and on 127.0.0.1; sshd is stopped at the end.  As root
# the server is started as nobody (an sshd that believes it is root wants
# its /run/sshd privilege separation chroot).
#
# Usage: examples/sshd/run-sshd.sh [BUILD_DIR]
# Needs: openssh-server openssh-client libnss-wrapper libuid-wrapper
#        pkg-config python3.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)

# libpam_wrapper.so: $PAM_WRAPPER_LIB, else BUILD_DIR/lib (default: this
# tree's build/), else pkg-config; our modules live next to it.
lib=${PAM_WRAPPER_LIB:-${1:-$here/../../build}/lib/libpam_wrapper.so}
[ -e "$lib" ] || lib=$(pkg-config --libs pam_wrapper)
lib=$(realpath "${lib%% *}") && modules=${PAM_WRAPPER_MODULES:-$(dirname "$lib")/pam_wrapper}
nss=$(pkg-config --libs nss_wrapper) && nss=${nss%% *}
uidw=$(pkg-config --libs uid_wrapper) && uidw=${uidw%% *}

dir=$(mktemp -d "${TMPDIR:-/tmp}/pam_wrapper-sshd.XXXXXX")
sshd_pid=
cleanup() {
  if [ -n "$sshd_pid" ]; then kill "$sshd_pid" 2>/dev/null || true; wait "$sshd_pid" 2>/dev/null || true; fi
  rm -rf "$dir"
}
trap cleanup EXIT

# Who runs sshd: you, or nobody when started as root.
as=()
if [ "$(id -u)" = 0 ]; then as=(setpriv --reuid=nobody --regid=nogroup --clear-groups); fi
uid=$("${as[@]}" id -u)
gid=$("${as[@]}" id -g)

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
mkdir -p "$dir/services" "$dir/tmp" "$dir/home/alice"
echo "alice:secret:sshd" > "$dir/passdb"
# nss_wrapper's view of the world: alice has sshd's own uid (an unprivileged
# sshd can only log in as itself), her home here and a real shell.
echo "alice:x:$uid:$gid:Alice:$dir/home/alice:/bin/sh" > "$dir/passwd"
echo "alice:x:$gid:" > "$dir/group"
sed -e "s|@MODULES@|$modules|g" -e "s|@DIR@|$dir|g" "$here/sshd.pam" > "$dir/services/sshd"
sed -e "s|@PORT@|$port|g" -e "s|@DIR@|$dir|g" "$here/sshd_config.in" > "$dir/sshd_config"
ssh-keygen -q -t ed25519 -N '' -f "$dir/hostkey"
cp "$here/askpass.sh" "$dir/askpass"
chmod 755 "$dir" "$dir/askpass"
chmod 1777 "$dir/tmp"     # the wrapped sshd's TMPDIR, checked at the end
if [ ${#as[@]} -gt 0 ]; then chown -R "$uid:$gid" "$dir"; fi

echo "== sshd on 127.0.0.1:$port as uid $uid, PAM service file:"
sed 's/^/   /' "$dir/services/sshd" | grep -v '^   #'
# sshd must be started by absolute path; it re-executes itself per client.
"${as[@]}" env -i PATH=/usr/bin:/bin HOME="$dir" TMPDIR="$dir/tmp" \
  LD_PRELOAD="$uidw:$nss:$lib" UID_WRAPPER=1 \
  NSS_WRAPPER_PASSWD="$dir/passwd" NSS_WRAPPER_GROUP="$dir/group" \
  PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$dir/services" \
  /usr/sbin/sshd -D -e -f "$dir/sshd_config" 2> "$dir/sshd.log" &
sshd_pid=$!
for _ in $(seq 6000); do
  grep -q "Server listening" "$dir/sshd.log" && break
  kill -0 "$sshd_pid" 2>/dev/null || break
  sleep 0.1
done
grep -q "Server listening" "$dir/sshd.log" || { cat "$dir/sshd.log" >&2; exit 1; }

login() { # METHOD PASSWORD
  HOME="$dir" EXAMPLE_PASSWORD=$2 SSH_ASKPASS="$dir/askpass" SSH_ASKPASS_REQUIRE=force \
  timeout 600 ssh -F /dev/null -T -p "$port" \
    -o StrictHostKeyChecking=no -o UserKnownHostsFile=/dev/null -o LogLevel=ERROR \
    -o PubkeyAuthentication=no -o IdentityAgent=none -o NumberOfPasswordPrompts=1 \
    -o PreferredAuthentications="$1" \
    alice@127.0.0.1 'echo "remote: logged in, HOME=$HOME HOMEDIR=$HOMEDIR (from pam_matrix)"' </dev/null
}

echo; echo "-- password authentication"
login password secret
echo; echo "-- keyboard-interactive: the prompt is pam_matrix's"
login keyboard-interactive secret
echo; echo "-- a wrong password is refused"
if login password wrong; then echo "example: a wrong password was accepted" >&2; exit 1; fi
echo "(ssh exit status 255, as expected)"

kill "$sshd_pid"; wait "$sshd_pid" 2>/dev/null || true; sshd_pid=
echo; echo "== sshd's log:"; sed 's/^/   /' "$dir/sshd.log"
# The per-connection process of the last login may still be ending (it has
# just refused a password): a directory stays live while its lock is held,
# so wait (at most 600 s: only a hang takes that long) until every lock is
# free.
for _ in $(seq 6000); do
  busy=
  for l in "$dir"/tmp/pam_wrapper.*/.lock; do
    if [ -e "$l" ] && ! flock -n -x "$l" true 2>/dev/null; then busy=1; fi
  done
  [ -z "$busy" ] && break
  sleep 0.1
done
# sshd's per-connection processes end with _exit(), which leaves their
# runtime directory to the next wrapped process of the user: any program
# that uses PAM under the wrapper (here pamtester, refused at once) removes
# them when it starts, and its own at exit.
"${as[@]}" env -i PATH=/usr/bin:/bin TMPDIR="$dir/tmp" LD_PRELOAD="$lib" \
  PAM_WRAPPER=1 PAM_WRAPPER_SERVICE_DIR="$dir/services" \
  pamtester pwrap-sweep nobody authenticate >/dev/null 2>&1 || true
if [ -n "$(ls -A "$dir/tmp")" ]; then echo "example: left in TMPDIR: $(ls -A "$dir/tmp")" >&2; exit 1; fi
if pgrep -f "$dir/sshd_config" >/dev/null; then echo "example: sshd still running" >&2; exit 1; fi
echo "example: done - sshd ran as uid $uid, nothing left running or in TMPDIR"
