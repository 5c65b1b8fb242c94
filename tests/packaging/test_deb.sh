#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The Debian packages (debian/), as a user gets them: built from a copy of
# the tree with dpkg-buildpackage, checked with lintian and against the
# expected file lists, installed with apt over Debian's 1.1.4 packages,
# used as installed (a CMake find_package consumer, a pkg-config consumer,
# import pypamtest, the pytest plugin through its entry point, the tools,
# a program built against Debian's libpamtest0-dev and Debian's own
# pypamtest still running on ours, the module project of examples/ci/),
# purged, and checked with dpkg -S that nothing of them is left.  The
# machine is then put back as it was: Debian's packages that were
# installed before are installed again, from their .debs, offline.
#
# It changes the system's packages, so it runs only when asked
# (PWRAP_PACKAGE_INSTALL_TEST=1, scripts/test.sh's last phase) and alone
# (ctest RUN_SERIAL); otherwise, and when it cannot run (not root,
# dpkg-dev/debhelper/lintian missing, Debian's .debs not at hand to put the
# machine back), it exits 77 (skipped) saying why.
# Usage: test_deb.sh BUILD_DIR
# Environment: PWRAP_SOURCE_DIR, PWRAP_PYTHON (pwrap_add_test),
#   PWRAP_PACKAGE_INSTALL_TEST=1, PWRAP_DEBIAN_DEBS (a directory holding
#   Debian's .debs of the installed versions; else the apt cache is tried).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
src=${PWRAP_SOURCE_DIR:?}
python=${PWRAP_PYTHON:-/usr/bin/python3}
skip() { echo "SKIPPED: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

# How users build and install the packages; examples/ci/ runs the same
# (check_ci_examples.py reads these two lines).
deb_build='(cd pam_wrapper && DEB_BUILD_OPTIONS="nocheck noautodbgsym" dpkg-buildpackage -us -uc -b -Pnocheck)'
deb_install='apt-get install -y --no-install-recommends ./*.deb'

# Debian's names (ours replace them) and ours only.
debian_pkgs=(libpam-wrapper libpamtest0 libpamtest0-dev python3-pypamtest)
our_pkgs=("${debian_pkgs[@]}" pam-wrapper-tools)

# --- can it run? -----------------------------------------------------------
[ "$(id -u)" = 0 ] || skip "not root: installing packages needs root"
[ "${PWRAP_PACKAGE_INSTALL_TEST:-}" = 1 ] || skip "it replaces the system's \
packages, so it runs only with PWRAP_PACKAGE_INSTALL_TEST=1 and alone \
(scripts/test.sh's last phase)"
for t in dpkg-buildpackage:dpkg-dev dh:debhelper dh_python3:dh-python \
         lintian:lintian apt-get:apt setpriv:util-linux; do
  command -v "${t%%:*}" >/dev/null || skip "${t%%:*} is missing (Debian package ${t#*:})"
done
arch=$(dpkg --print-architecture)
multiarch=$(dpkg-architecture -qDEB_HOST_MULTIARCH)
apt_opts=(-y -q --no-install-recommends -o DPkg::Lock::Timeout=300)
export DEBIAN_FRONTEND=noninteractive

work=$(mktemp -d "${TMPDIR:-/tmp}/pwrap-deb.XXXXXX")
trap 'rm -rf "$work"' EXIT   # (restore() below, once it may change packages)
chmod 755 "$work"
mkdir "$work/restore" "$work/build"

# What is installed now, to be put back at the end.  Each installed one
# of the five names needs its .deb at hand, or we do not start.
declare -A before=()
for p in "${our_pkgs[@]}"; do
  v=$(dpkg-query -W -f='${db:Status-Status} ${Version}' "$p" 2>/dev/null || true)
  [ "${v%% *}" = installed ] && before[$p]=${v#* }
done
find_deb() {  # package version: prints the path of its .deb, or nothing
  local f=${1}_${2/:/%3a}_$arch.deb g=${1}_${2/:/%3a}_all.deb d
  for d in "${PWRAP_DEBIAN_DEBS:-}" /var/cache/apt/archives; do
    [ -n "$d" ] || continue
    for x in "$d/$f" "$d/$g"; do
      [ -f "$x" ] && { echo "$x"; return; }
    done
  done
}
# Debian's packages are installed first when they are not (the test is
# about replacing them); that needs their .debs too, and they are purged
# again at the end.
candidate() { apt-cache policy "$1" 2>/dev/null | sed -n 's/^  Candidate: //p'; }
for p in "${debian_pkgs[@]}"; do
  v=${before[$p]:-$(candidate "$p")}
  case $v in ""|"(none)") skip "apt knows no version of Debian's $p" ;; esac
  case $v in 1.2.0-*) skip "$p $v (ours) is installed: put Debian's back first" ;; esac
  deb=$(find_deb "$p" "$v")
  [ -n "$deb" ] || skip "Debian's $p $v: its .deb is neither in PWRAP_DEBIAN_DEBS \
nor in /var/cache/apt/archives, so the machine could not be put back \
(scripts/test.sh fetches them with apt-get download)"
  cp "$deb" "$work/restore/"
done
[ -z "${before[pam-wrapper-tools]:-}" ] || skip "pam-wrapper-tools is installed already"

# --- putting the machine back, whatever happens ----------------------------
installed_ours=0
restore() {
  local rc=$?
  set +e
  if [ "$installed_ours" = 1 ]; then
    apt-get purge "${apt_opts[@]}" "${our_pkgs[@]}" > "$work/restore-purge.log" 2>&1 \
      || { cat "$work/restore-purge.log"; rc=1; }
  fi
  local again=() gone=() p
  for p in "${debian_pkgs[@]}"; do
    if [ -n "${before[$p]:-}" ]; then
      again+=("$(find_deb_in_restore "$p")")
    else
      gone+=("$p")
    fi
  done
  # Debian's that were not there before: not there afterwards.
  if [ ${#gone[@]} -gt 0 ]; then
    apt-get purge "${apt_opts[@]}" "${gone[@]}" > "$work/restore-gone.log" 2>&1 \
      || { cat "$work/restore-gone.log"; rc=1; }
  fi
  if [ ${#again[@]} -gt 0 ]; then
    apt-get install "${apt_opts[@]}" --allow-downgrades "${again[@]}" \
      > "$work/restore-install.log" 2>&1 || { cat "$work/restore-install.log"; rc=1; }
  fi
  local same=1
  for p in "${our_pkgs[@]}"; do
    now=$(dpkg-query -W -f='${db:Status-Status} ${Version}' "$p" 2>/dev/null || true)
    want=${before[$p]:+installed ${before[$p]}}
    [ "${now%% *}" = installed ] || now=""
    if [ "$now" != "$want" ]; then
      echo "FAIL: $p is '${now:-not installed}' after the test, was '${want:-not installed}'" >&2
      rc=1 same=0
    fi
  done
  [ "$same" = 1 ] && echo "the system's packages are as before the test"
  rm -rf "$work"
  exit "$rc"
}
find_deb_in_restore() { ls "$work/restore/${1}_"*.deb; }
trap restore EXIT

only_these_change() {  # log name, .deb files...: simulates installing them
  local log=$work/$1.log; shift
  # Nothing but the named packages may change: no dependency fetched from
  # the network, nothing else removed.
  apt-get install -s "${apt_opts[@]}" --allow-downgrades "$@" > "$log" 2>&1 \
    || { cat "$log"; fail "apt-get cannot install $*"; }
  local names=" $(for d in "$@"; do dpkg-deb -f "$d" Package; done | xargs) "
  while read -r op name _; do
    name=${name%%:*}
    case $op in
      Inst|Remv|Purg) [[ $names == *" $name "* ]] || \
        fail "installing $* would also $op $name (install it first; see $log)" ;;
    esac
  done < "$log"
}
apt_install() {  # log name, .deb files...
  only_these_change "$1.sim" "${@:2}"
  apt-get install "${apt_opts[@]}" --allow-downgrades "${@:2}" > "$work/$1.log" 2>&1 \
    || { cat "$work/$1.log"; fail "apt-get install ${*:2}"; }
}

if [ ${#before[@]} -lt ${#debian_pkgs[@]} ]; then
  echo "== installing Debian's packages first (purged again at the end)"
  apt_install debian-first "$work"/restore/*.deb
fi
for p in "${debian_pkgs[@]}"; do
  v=$(dpkg-query -W -f='${Version}' "$p")
  case $v in 1.1.*) ;; *) fail "expected Debian's 1.1.x $p, found $v" ;; esac
done
debian_version=$(dpkg-query -W -f='${Version}' libpam-wrapper)

# A program built against Debian's libpamtest0-dev (it records the SONAME
# libpamtest.so.SOVERSION), and Debian's own pypamtest, unpacked: both
# must keep running on ours.
mkdir -m 755 "$work/debian-built" "$work/debian-py"
cc -o "$work/debian-built/strerror" "$here/debian_built.c" -lpamtest
readelf -d "$work/debian-built/strerror" | grep -q 'NEEDED.*\[libpamtest\.so\.SOVERSION\]' \
  || fail "the program built against Debian's libpamtest does not record libpamtest.so.SOVERSION"
dpkg-deb -x "$(find_deb_in_restore python3-pypamtest)" "$work/debian-py"
debian_pydir=$work/debian-py/usr/lib/python3/dist-packages

# --- build, as a user does --------------------------------------------------
echo "== dpkg-buildpackage"
tar -C "$src" --exclude='./build*' --exclude=./.git --exclude='./obj-*' -cf - . \
  | { mkdir "$work/build/pam_wrapper"; tar -C "$work/build/pam_wrapper" -xf -; }
(cd "$work/build/pam_wrapper" && dpkg-checkbuilddeps -Pnocheck) \
  || skip "build dependencies of debian/control are missing (above)"
version=$(cd "$work/build/pam_wrapper" && dpkg-parsechangelog -SVersion)
want=$(sed -n 's/^project(pam_wrapper VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
[ "${version%-*}" = "$want" ] || fail "debian/changelog says $version, CMakeLists.txt $want"
dpkg --compare-versions "$version" gt "$debian_version" \
  || fail "our version $version does not sort above Debian's $debian_version"
echo "+ $deb_build"
(cd "$work/build" && eval "$deb_build") > "$work/dpkg-buildpackage.log" 2>&1 \
  || { tail -40 "$work/dpkg-buildpackage.log"; fail "dpkg-buildpackage"; }
debs=()
for p in "${our_pkgs[@]}"; do
  debs+=("$work/build/${p}_${version}_$arch.deb")
  [ -f "${debs[-1]}" ] || fail "dpkg-buildpackage made no ${debs[-1]##*/}"
done
[ "$(ls "$work/build"/*.deb | wc -l)" = ${#our_pkgs[@]} ] \
  || fail "unexpected packages: $(ls "$work/build"/*.deb)"

# --- lintian: no error; the warnings kept are the ones doc/packaging.md explains
echo "== lintian"
lintian --fail-on error "$work/build/pam-wrapper_${version}_$arch.changes" \
  > "$work/lintian.log" 2>&1 || { cat "$work/lintian.log"; fail "lintian reports errors"; }
cat "$work/lintian.log"
unexplained=$(grep '^W: ' "$work/lintian.log" | grep -v ': initial-upload-closes-no-bugs ' || true)
[ -z "$unexplained" ] || fail "lintian warnings not explained in doc/packaging.md: $unexplained"

# --- file lists: as listed in expected-deb-files.txt ------------------------
# (but the installer's bookkeeping in the .dist-info, which dh-python writes
# by its version: RECORD on Debian 12, INSTALLER without RECORD on 13)
py_suffix=$("$python" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
for d in "${debs[@]}"; do
  p=$(dpkg-deb -f "$d" Package)
  dpkg-deb -c "$d" | awk '{ print $6 ($7 == "->" ? " -> " $8 : "") }' \
    | sed "s|^\./|/|; s|/$multiarch/|/<multiarch>/|g; s|$py_suffix|<ext_suffix>|; s|-$want\.dist-info|-<version>.dist-info|; s|\.so\.$want\b|.so.<version>|g; s|^|$p |"
done | grep -v '/$' | grep -Ev '\.dist-info/(RECORD|INSTALLER)$' | sort > "$work/files.txt"
grep -v '^#' "$here/expected-deb-files.txt" | sort > "$work/expected.txt"
diff -u "$work/expected.txt" "$work/files.txt" || fail "the packages' files differ from expected-deb-files.txt (update it and doc/packaging.md)"
# Relations: libpamtest0 from the symbols file, Breaks/Replaces for the
# man page that moved from Debian's libpam-wrapper to the tools.
field() { dpkg-deb -f "$work/build/${1}_${version}_$arch.deb" "$2"; }
[[ $(field python3-pypamtest Depends) == *"libpamtest0 (>= $want)"* ]] \
  || fail "python3-pypamtest: no libpamtest0 (>= $want) from the symbols file: $(field python3-pypamtest Depends)"
for f in Breaks Replaces; do
  [ "$(field pam-wrapper-tools $f)" = "libpam-wrapper (<< $want~)" ] \
    || fail "pam-wrapper-tools $f: $(field pam-wrapper-tools $f)"
done

# --- install over Debian's ---------------------------------------------------
echo "== apt-get install over Debian's $debian_version"
only_these_change ours.sim "${debs[@]}"
installed_ours=1
echo "+ $deb_install"
(cd "$work/build" && eval "$deb_install") > "$work/ours.log" 2>&1 \
  || { cat "$work/ours.log"; fail "$deb_install"; }
for p in "${our_pkgs[@]}"; do
  [ "$(dpkg-query -W -f='${Version}' "$p")" = "$version" ] || fail "$p is not $version after apt-get install"
done
libdir=/usr/lib/$multiarch
[ "$(readlink "$libdir/libpamtest.so.SOVERSION")" = libpamtest.so.0 ] \
  || fail "no libpamtest.so.SOVERSION -> libpamtest.so.0"

# --- use what dpkg installed -------------------------------------------------
echo "== consumers of the installed packages"
bash "$here/installed_consumers.sh" "$libdir" "$python" "$work/consumers" \
  "$work/debian-built/strerror" "$debian_pydir"

echo "== examples/ci module project, as its CI jobs build and test it (as nobody)"
mkdir "$work/module"
cp -r "$src/examples/ci/module/." "$work/module/"
chown -R nobody:nogroup "$work/module"
"$python" "$here/check_ci_examples.py" --module-commands "$src/examples/ci" > "$work/module-commands"
while IFS= read -r cmd; do
  echo "+ $cmd"
  (cd "$work/module" && setpriv --reuid=nobody --regid=nogroup --clear-groups \
     env -i PATH=/usr/bin:/bin HOME=/nonexistent TMPDIR=/tmp LANG=C.UTF-8 bash -ec "$cmd") \
    || fail "examples/ci: '$cmd' failed against the installed packages"
done < "$work/module-commands"

# --- purge: nothing left -------------------------------------------------------
echo "== apt-get purge"
paths=$(for d in "${debs[@]}"; do dpkg-deb -c "$d" | awk '{print $6}' | sed 's|^\./|/|; s|/$||'; done | sort -u)
apt-get purge "${apt_opts[@]}" "${our_pkgs[@]}" > "$work/purge.log" 2>&1 \
  || { cat "$work/purge.log"; fail "apt-get purge"; }
installed_ours=0
left=0
while IFS= read -r f; do
  [ -n "$f" ] || continue
  if dpkg -S "$f" > /dev/null 2>&1; then
    # Directories shared with other packages (/usr/lib/<multiarch>, ...).
    [ -d "$f" ] && [ ! -L "$f" ] && continue
    echo "still owned by a package after the purge: $f ($(dpkg -S "$f" 2>&1 | head -1))"
    left=1
  elif [ -e "$f" ] || [ -L "$f" ]; then
    echo "left behind by the purge: $f"
    left=1
  fi
done <<< "$paths"
for p in "${our_pkgs[@]}"; do
  if dpkg-query -W -f='${db:Status-Abbrev}' "$p" 2>/dev/null | grep -q .; then
    st=$(dpkg-query -W -f='${db:Status-Abbrev}' "$p")
    case $st in "un "|"pn ") ;; *) echo "$p is still known to dpkg: $st"; left=1 ;; esac
  fi
done
stray=$(ls -d "$libdir"/libpamtest.so* "$libdir"/libpam_wrapper.so* "$libdir/pam_wrapper" \
          /usr/lib/python3/dist-packages/pytest_pam_wrapper 2>/dev/null || true)
[ -z "$stray" ] || { echo "left behind: $stray"; left=1; }
[ "$left" = 0 ] || fail "the purge left files behind"
echo "test_deb: passed (ours $version over Debian's $debian_version)"
