#!/bin/sh
# SPDX-License-Identifier: BSD-3-Clause
# Run by pam_exec (expose_authtok): PAM_USER, PAM_SERVICE and PAM_TYPE are
# in the environment, the token arrives on stdin, stdout goes to the
# application (pam_exec option "stdout").  Accepts "opensesame".
token=$(tr -d '\000')
echo "check-token.sh: $PAM_TYPE for $PAM_USER on $PAM_SERVICE"
[ "$token" = opensesame ]
