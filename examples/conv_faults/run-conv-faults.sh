#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-3-Clause
#
# Conversation fault injection, twice: the libpamtest program conv_faults
# (conv_faults.c) and the pamtest scenario faults.pamtest check what
# pam_matrix returns when the application's conversation fails, answers
# without a reply array or with NULL answers, or answers with more than
# PAM_MAX_RESP_SIZE characters.
#
# Usage: examples/conv_faults/run-conv-faults.sh [BUILD_DIR]
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
build=$(realpath "${1:-$here/../../build}")

# libpam_wrapper.so: $PAM_WRAPPER_LIB, else BUILD_DIR/lib.
lib=$(realpath "${PAM_WRAPPER_LIB:-$build/lib/libpam_wrapper.so}")

echo "-- libpamtest: build/bin/conv_faults"
LD_PRELOAD="$lib" PAM_WRAPPER=1 "$build/bin/conv_faults"
echo
echo "-- pamtest: faults.pamtest"
"$build/bin/pamtest" --lib "$lib" "$here/faults.pamtest"
