#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
# Runs a command on a copy of this tree inside a Debian chroot made with
# debootstrap (--variant=minbase), as scripts/test.sh's "Debian 13" phase
# does with trixie: the suite as it runs on another Debian release, from
# the machine it runs on.
#
# Usage: scripts/debian-chroot.sh SUITE DIR SRC COMMAND...   (as root)
#   SUITE    a Debian codename, e.g. trixie
#   DIR      where the chroot is kept between runs (test.sh:
#            /var/cache/pam_wrapper/debian13); made when missing, made anew
#            when broken (an unfinished debootstrap, another suite, a chroot
#            that cannot run its apt-get, or packages half installed)
#   SRC      the tree to copy in, without build* and .git, to /srv/pam_wrapper
#            (emptied first; left after the run, for its logs)
#   COMMAND  run in the chroot as root in /srv/pam_wrapper, with a clean
#            environment (PATH, HOME, USER, LOGNAME, LANG, TERM)
# The mirror is the one this machine's apt uses (scripts/debian-mirror.sh).
# The command sees /proc, /sys (read-only), /dev, /dev/pts, and a tmpfs of
# its own on /tmp and /dev/shm.  It runs in a mount and a PID namespace of
# this script's own (unshare): the machine never sees the mounts, they are
# unmounted when the command ends, however it ends, and processes it leaves
# running are named (a failure) and ended with the namespace.  One run at
# a time per DIR (a lock next to it).
# Exit status: the command's; 3 when the chroot cannot be made (the last
# line says why: no debootstrap, no Debian mirror, no network...).
set -euo pipefail

die_unmade() { echo "debian-chroot.sh: cannot make the $suite chroot: $*" >&2; exit 3; }

# --- pid 1 of a PID and mount namespace of our own: mount, run, unmount ---
if [ "${1:-}" = --inside ]; then
  shift
  root=$1; shift
  at=$root      # where the mounts are: below $root, then below / (pivot_root)
  umount_all() {
    local m
    for m in tmp dev/shm dev/pts dev sys proc; do
      ! mountpoint -q "$at/$m" || umount -l "$at/$m"
    done
  }
  trap umount_all EXIT
  trap 'exit 130' INT TERM
  # The chroot's / a mount point, as a system's is (tests that make a mount
  # namespace change the propagation of /: EINVAL otherwise).
  mount --bind "$root" "$root"
  mount -t proc proc "$root/proc"
  mount -t sysfs -o ro,nosuid,nodev,noexec sysfs "$root/sys"
  mount --bind /dev "$root/dev"
  mount --bind /dev/pts "$root/dev/pts"
  mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/dev/shm"
  mount -t tmpfs -o mode=1777,nosuid,nodev tmpfs "$root/tmp"
  # pivot_root, not chroot: the command's / is its namespace's root, so it
  # may make user namespaces (the kernel refuses them to chrooted processes;
  # the .nobody twins use them).
  cd "$root"
  mkdir -p .old-root
  pivot_root . .old-root
  at=""
  umount -l /.old-root
  rc=0
  env -i PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
    HOME=/root USER=root LOGNAME=root LANG=C.UTF-8 TERM="${TERM:-dumb}" \
    /bin/sh -c 'cd /srv/pam_wrapper && exec "$@"' sh "$@" || rc=$?
  # Nothing the command started may outlive it (a test that leaves a daemon
  # behind has failed): what is left besides us (pid 1) is named here, and
  # the kernel ends it when we exit.
  left=""
  for p in /proc/[0-9]*; do
    [ "${p#/proc/}" = 1 ] || left+="  ${p#/proc/}: $(tr '\0' ' ' < "$p/cmdline" 2>/dev/null)"$'\n'
  done
  if [ -n "$left" ]; then
    printf 'debian-chroot.sh: processes left running in the chroot (ended):\n%s' "$left" >&2
    [ "$rc" != 0 ] || rc=1
  fi
  exit "$rc"
fi

suite=${1:?usage: debian-chroot.sh SUITE DIR SRC COMMAND...}
root=${2:?usage: debian-chroot.sh SUITE DIR SRC COMMAND...}
src=${3:?usage: debian-chroot.sh SUITE DIR SRC COMMAND...}
shift 3
[ $# -gt 0 ] || { echo "usage: debian-chroot.sh SUITE DIR SRC COMMAND..." >&2; exit 2; }
[ "$(id -u)" = 0 ] || die_unmade "needs root (debootstrap, chroot, mount)"
command -v debootstrap >/dev/null ||
  die_unmade "debootstrap is not installed (scripts/install-deps.sh installs it)"
root=$(realpath -m "$root")
case $root in /|/usr|/usr/*|/etc|/etc/*|/dev|/dev/*|/proc|/proc/*|/sys|/sys/*)
  echo "debian-chroot.sh: refusing $root as a chroot directory" >&2; exit 2 ;;
esac
mkdir -p "$(dirname "$root")"
exec 9>"$root.lock"
flock 9

# A chroot is sound when debootstrap finished (the mark it is given last),
# it is the suite asked for, its apt runs, and dpkg has nothing half done.
sound() {
  [ "$(cat "$root/.pwrap-debootstrap" 2>/dev/null)" = "$suite" ] &&
    grep -qx "VERSION_CODENAME=$suite" "$root/etc/os-release" 2>/dev/null &&
    chroot "$root" /usr/bin/apt-get --version >/dev/null 2>&1 &&
    [ -z "$(chroot "$root" /usr/bin/dpkg --audit 2>&1)" ]
}
if ! sound; then
  if [ -e "$root" ]; then
    echo "debian-chroot.sh: $root is not a sound $suite chroot: making it anew"
    # (our mounts live in a namespace of their own; --one-file-system all
    # the same, so that nothing mounted there by someone else is followed)
    rm -rf --one-file-system "$root"
  fi
  mirror=$("$(dirname "$0")/debian-mirror.sh" 2>&1) || die_unmade "$mirror"
  echo "debian-chroot.sh: debootstrap --variant=minbase $suite $root $mirror"
  log=$(mktemp /tmp/debian-chroot-debootstrap.XXXXXX)
  # (in a mount namespace of its own too: what it mounts in the chroot
  # while it installs goes with it, even when it is killed)
  if ! unshare --mount --propagation private \
       debootstrap --variant=minbase "$suite" "$root" "$mirror" > "$log" 2>&1; then
    tail -n 5 "$log" >&2
    why=$(grep -E '^(E|W):' "$log" | tail -n1)
    rm -f "$log"
    die_unmade "debootstrap failed: ${why:-see above} (no network?)"
  fi
  rm -f "$log"
  echo "$suite" > "$root/.pwrap-debootstrap"
fi
# resolv.conf and hosts as the machine has them now (apt inside resolves)
cp -L /etc/resolv.conf "$root/etc/resolv.conf" 2>/dev/null || true
cp -L /etc/hosts "$root/etc/hosts" 2>/dev/null || true

rm -rf --one-file-system "$root/srv/pam_wrapper"
mkdir -p "$root/srv/pam_wrapper"
chmod 755 "$root/srv" "$root/srv/pam_wrapper"
tar -C "$src" --exclude='./build*' --exclude=./.git -cf - . |
  tar -C "$root/srv/pam_wrapper" -xf -
exec unshare --mount --propagation private --pid --fork "$0" --inside "$root" "$@"
