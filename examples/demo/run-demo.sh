#!/usr/bin/env bash
# Runs the demo against an existing build: an ordinary PAM application
# (pam_demo.c here) logs alice in through pam_matrix, its PAM configuration
# taken from a throwaway directory instead of /etc/pam.d, as a normal user
# (as root it drops to nobody first).  Copy this to try your own service file.
# Usage: examples/demo/run-demo.sh BUILD_DIR
set -euo pipefail
build=$(cd "${1:?usage: run-demo.sh BUILD_DIR}" && pwd)
src=$(cd "$(dirname "$0")/../.." && pwd)
demo=$(mktemp -d /tmp/pam_wrapper-demo.XXXXXX)
trap 'rm -rf "$demo"' EXIT
mkdir "$demo/services"
echo "alice:wonderland:demo" > "$demo/passdb"
cat > "$demo/services/demo" <<SVC
auth     required pam_matrix.so passdb=$demo/passdb verbose
account  required pam_matrix.so passdb=$demo/passdb
session  required pam_matrix.so passdb=$demo/passdb
SVC
scenario=$src/examples/scenarios/login.pamtest
if [ "$(id -u)" = 0 ]; then
  # nobody may not reach the build tree (a clone below /root): run a copy
  # with the same layout (bin/, lib/, lib/pam_wrapper/).
  mkdir -p "$demo/build/bin" "$demo/build/lib"
  cp -a "$build"/lib/libpam_wrapper.so* "$build/lib/pam_wrapper" "$demo/build/lib/"
  cp -a "$build/bin/pam_demo" "$build/bin/pamtest" "$demo/build/bin/"
  cp "$scenario" "$demo/"
  scenario=$demo/login.pamtest
  build=$demo/build
fi
mkdir "$demo/tmp"
chmod -R a+rX "$demo"
chmod 1777 "$demo/tmp"	# the wrapped program's TMPDIR, checked at the end

# As root, prove the point by dropping to nobody; otherwise run as you.
run=()
if [ "$(id -u)" = 0 ]; then
  run=(setpriv --reuid=nobody --regid=nogroup --clear-groups)
fi
wrapped() {
  "${run[@]}" env TMPDIR="$demo/tmp" LD_PRELOAD="$build/lib/libpam_wrapper.so" PAM_WRAPPER=1 \
    PAM_WRAPPER_SERVICE_DIR="$demo/services" "$@"
}

echo "== the service file (pam_matrix.so is found in $build/lib/pam_wrapper/):"
sed 's/^/   /' "$demo/services/demo"
echo "== running as: $("${run[@]}" id -un) (uid $("${run[@]}" id -u))"
echo
echo "-- alice logs in with the right password"
echo wonderland | wrapped "$build/bin/pam_demo" demo alice
echo
echo "-- alice logs in with a wrong password"
if echo "rabbit" | wrapped "$build/bin/pam_demo" demo alice; then
  echo "demo: a wrong password was accepted" >&2
  exit 1
fi
echo
echo "-- the same program without the wrapper uses /etc/pam.d and fails"
if echo wonderland | "${run[@]}" "$build/bin/pam_demo" demo alice; then
  echo "demo: unexpected success without the wrapper" >&2
  exit 1
fi
echo
echo "-- the same checks as a declarative scenario (examples/scenarios/login.pamtest)"
"${run[@]}" env TMPDIR="$demo/tmp" "$build/bin/pamtest" "$scenario"
echo
left=$(ls -A "$demo/tmp")
if [ -n "$left" ]; then
  echo "demo: the wrapper left files in TMPDIR: $left" >&2
  exit 1
fi
echo "demo: done - no root, no /etc/pam.d changes, nothing left in TMPDIR"
