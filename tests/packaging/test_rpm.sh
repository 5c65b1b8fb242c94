#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# The RPM spec (pam_wrapper.spec), built on this Debian machine as Fedora's
# packagers would start it: `rpmbuild -ta` of a tarball of the tree
# (--nodeps: Debian's rpm database knows none of the build dependencies;
# --without check: the suite runs in CI anyway; no debuginfo packages,
# which rpm makes or not by its version: 4.20 of Debian 13 does).  Checks:
# the spec's version is the project's, the packages are Fedora's names (pam_wrapper,
# libpamtest, libpamtest-devel, python3-libpamtest) plus pam_wrapper-tools,
# their file lists (rpm -qlp) are the ones in expected-rpm-files.txt, and
# the subpackages require each other as they must.  Installing them on
# Fedora cannot be checked here (doc/packaging.md).
# Usage: test_rpm.sh   Environment: PWRAP_SOURCE_DIR, PWRAP_PYTHON.
set -euo pipefail
src=${PWRAP_SOURCE_DIR:?}
here=$(cd "$(dirname "$0")" && pwd)
python=${PWRAP_PYTHON:-/usr/bin/python3}
skip() { echo "SKIPPED: $*"; exit 77; }
fail() { echo "FAIL: $*" >&2; exit 1; }

command -v rpmbuild >/dev/null || skip "rpmbuild is missing (Debian package rpm)"
version=$(sed -n 's/^project(pam_wrapper VERSION \([0-9.]*\).*/\1/p' "$src/CMakeLists.txt")
spec_version=$(sed -n 's/^Version: *//p' "$src/pam_wrapper.spec")
[ "$spec_version" = "$version" ] || fail "pam_wrapper.spec has Version $spec_version, CMakeLists.txt $version"

work=$(mktemp -d "${TMPDIR:-/tmp}/pwrap-rpm.XXXXXX")
trap 'rm -rf "$work"' EXIT
tarball=$work/pam_wrapper-$version.tar.gz
tar -C "$src" --exclude='./build*' --exclude=./.git --exclude='./obj-*' \
  --transform "s|^\.|pam_wrapper-$version|" -czf "$tarball" .
echo "+ rpmbuild -ta --nodeps --without check pam_wrapper-$version.tar.gz"
rpmbuild -ta --nodeps --without check --define "_topdir $work/top" \
  --define "_smp_mflags -j2" --define "__python3 $python" \
  --define "debug_package %{nil}" "$tarball" \
  > "$work/rpmbuild.log" 2>&1 || { tail -40 "$work/rpmbuild.log"; fail "rpmbuild"; }

rpms=$(find "$work/top/RPMS" -name '*.rpm' | sort)
names=$(for r in $rpms; do rpm -qp --qf '%{NAME}\n' "$r"; done | sort | xargs)
[ "$names" = "libpamtest libpamtest-devel pam_wrapper pam_wrapper-tools python3-libpamtest" ] \
  || fail "packages: $names"
libdir=$(rpm --eval '%{_libdir}')
sitearch=$("$python" -c "import sysconfig; print(sysconfig.get_path('platlib', 'posix_prefix', vars={'platbase': '/usr', 'base': '/usr'}))")
suffix=$("$python" -c 'import sysconfig; print(sysconfig.get_config_var("EXT_SUFFIX"))')
for r in $rpms; do
  n=$(rpm -qp --qf '%{NAME}' "$r")
  rpm -qlp "$r" | grep -v '^/usr/lib/\.build-id' \
    | sed "s|^$sitearch/|<sitearch>/|; s|^$libdir/|<libdir>/|; s|$suffix\$|<ext_suffix>|; s|-$version\b|-<version>|g; s|\.so\.$version\$|.so.<version>|; s#^\(/usr/share/man/.*\)\.\(gz\|xz\|bz2\|zst\)\$#\1#; s|^|$n |"
done | sort > "$work/files.txt"
grep -v '^#' "$here/expected-rpm-files.txt" | sort > "$work/expected.txt"
diff -u "$work/expected.txt" "$work/files.txt" \
  || fail "the RPMs' files differ from expected-rpm-files.txt (update it and doc/packaging.md)"

requires() { rpm -qp --requires "$(ls "$work"/top/RPMS/*/"$1"-"$version"-*.rpm)"; }
isa=$(rpm --eval '%{?_isa}')
for want in "python3-libpamtest:libpamtest$isa = $version-1" \
            "python3-libpamtest:pam_wrapper$isa = $version-1" \
            "python3-libpamtest:python(abi) = $("$python" -c 'import sys; print("%d.%d" % sys.version_info[:2])')" \
            "libpamtest-devel:libpamtest$isa = $version-1" \
            "libpamtest-devel:pam-devel$isa" \
            "pam_wrapper-tools:pam_wrapper$isa = $version-1"; do
  requires "${want%%:*}" | grep -qxF "${want#*:}" || fail "${want%%:*} does not require ${want#*:}"
done
echo "test_rpm: passed ($names)"
