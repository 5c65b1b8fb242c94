#!/usr/bin/env bash
# Installs the Debian packages the project needs to build, test and demo, on
# Debian 12 "bookworm" and Debian 13 "trixie" alike (every name below exists
# on both; clang's runtime is the one of the clang installed).
# Usage: scripts/install-deps.sh [extra-package...]
# Only packages that are missing are installed; as non-root it just reports.
set -euo pipefail

pkgs=(gcc make cmake pkg-config libc6-dev libpam0g-dev libpam-modules
      libpam-modules-bin libcmocka-dev python3 python3-dev python3-pytest
      python3-pytest-xdist
      python3-pam pamtester openssh-server openssh-client libnss-wrapper
      libuid-wrapper valgrind clang util-linux procps
      file login passwd sudo strace
      # --system: pam_pwquality (and the dictionary it checks against),
      # which the tests' stacks run for real
      libpam-pwquality cracklib-runtime
      # the packages users install (tests/packaging): .deb, .rpm, pip
      build-essential dpkg-dev debhelper dh-python lintian rpm
      python3-setuptools python3-wheel python3-venv python3-yaml
      # scripts/test.sh's "Debian 13" phase (scripts/debian-chroot.sh)
      debootstrap "$@")

missing() {  # package...: prints those not installed
  local p st
  for p; do
    st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
    [ "$st" = installed ] || echo "$p"
  done
}
# clang's runtime (libFuzzer, the sanitizers) is packaged per clang version:
# libclang-rt-14-dev on Debian 12, libclang-rt-19-dev on Debian 13.
clang_rt() {  # prints the one of the installed clang, nothing without clang
  local v
  v=$(clang -dumpversion 2>/dev/null) || return 0
  echo "libclang-rt-${v%%.*}-dev"
}

mapfile -t need < <(missing "${pkgs[@]}" $(clang_rt))
[ ${#need[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
  command -v clang >/dev/null ||
    need+=("libclang-rt-N-dev (N: the installed clang's major version)")
  echo "install-deps: missing Debian packages: ${need[*]}" >&2
  echo "install-deps: as root (with sudo as a user) it installs them; or apt-get install them first" >&2
  exit 1
fi
echo "install-deps: installing ${need[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# openssh-server's postinst may try to start a service; we never need it.
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod 755 /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
# clang came with this run: now its runtime.
mapfile -t need < <(missing $(clang_rt))
[ ${#need[@]} -eq 0 ] ||
  apt-get install -y -qq --no-install-recommends "${need[@]}" >/dev/null
