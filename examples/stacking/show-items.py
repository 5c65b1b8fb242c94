#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
#
# Authenticates USER on SERVICE with Debian's python3-pam and prints the
# result, every prompt it was asked (answered with ANSWER) and the PAM
# environment afterwards (where pam_get_items put the items).
# Usage: show-items.py SERVICE USER [ANSWER]
import sys

import PAM

service, user = sys.argv[1], sys.argv[2]
answer = sys.argv[3] if len(sys.argv) > 3 else ""


STYLES = {PAM.PAM_PROMPT_ECHO_OFF: "echo off", PAM.PAM_PROMPT_ECHO_ON: "echo on",
          PAM.PAM_ERROR_MSG: "error", PAM.PAM_TEXT_INFO: "info"}


def conversation(_pamh, queries, _data):
    for text, style in queries:
        print(f"    prompt ({STYLES.get(style, style)}): {text!r} "
              f"-> answering {answer!r}")
    return [(answer, 0) for _ in queries]


pamh = PAM.pam()
pamh.start(service)
pamh.set_item(PAM.PAM_USER, user)
pamh.set_item(PAM.PAM_CONV, conversation)
try:
    pamh.authenticate()
    print("    pam_authenticate: success")
except PAM.error as e:
    print(f"    pam_authenticate: {e.args[0]} ({e.args[1]})")
print("    PAM environment: " + " ".join(pamh.getenvlist() or []))
