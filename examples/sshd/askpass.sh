#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# SSH_ASKPASS helper: ssh runs it for each password or keyboard-interactive
# prompt (argument 1) and reads the answer from its stdout.
echo "askpass: ssh asks \"$1\"" >&2
printf '%s\n' "$EXAMPLE_PASSWORD"
