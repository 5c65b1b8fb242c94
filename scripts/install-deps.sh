#!/usr/bin/env bash
# Installs the Debian 12 packages the project needs to build, test and demo.
# Usage: scripts/install-deps.sh [extra-package...]
# Only packages that are missing are installed; as non-root it just reports.
set -euo pipefail

pkgs=(gcc make cmake pkg-config libc6-dev libpam0g-dev libpam-modules
      libpam-modules-bin libcmocka-dev python3 python3-dev python3-pytest
      python3-pytest-xdist
      python3-pam pamtester openssh-server openssh-client libnss-wrapper
      libuid-wrapper valgrind clang libclang-rt-14-dev util-linux procps
      file login passwd sudo strace
      # --system: pam_pwquality (and the dictionary it checks against),
      # which the tests' stacks run for real
      libpam-pwquality cracklib-runtime
      # the packages users install (tests/packaging): .deb, .rpm, pip
      build-essential dpkg-dev debhelper dh-python lintian rpm
      python3-setuptools python3-wheel python3-venv python3-yaml "$@")

missing=()
for p in "${pkgs[@]}"; do
  st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
  [ "$st" = installed ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

if [ "$(id -u)" != 0 ]; then
  echo "install-deps: missing Debian packages: ${missing[*]}" >&2
  echo "install-deps: run as root (or apt-get install them) first" >&2
  exit 1
fi
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq
# openssh-server's postinst may try to start a service; we never need it.
if [ ! -e /usr/sbin/policy-rc.d ]; then
  printf '#!/bin/sh\nexit 101\n' > /usr/sbin/policy-rc.d
  chmod 755 /usr/sbin/policy-rc.d
  trap 'rm -f /usr/sbin/policy-rc.d' EXIT
fi
apt-get install -y -qq --no-install-recommends "${missing[@]}" >/dev/null
