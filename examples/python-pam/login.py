#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
#
# A minimal PAM application in Python with Debian's python3-pam (`import
# PAM`, a C extension linked to libpam, so a preloaded libpam_wrapper.so
# redirects it).  Authenticates USER on SERVICE, checks the account, opens
# a session and prints the PAM environment the modules left.
# Usage: login.py SERVICE USER   (answers: from the terminal, else stdin)
import getpass
import sys

import PAM


def conversation(_pamh, queries, _data):
    replies = []
    for text, style in queries:
        if style == PAM.PAM_PROMPT_ECHO_OFF:
            answer = (getpass.getpass(text) if sys.stdin.isatty()
                      else sys.stdin.readline().rstrip("\n"))
        elif style == PAM.PAM_PROMPT_ECHO_ON:
            answer = input(text)
        else:  # PAM_TEXT_INFO / PAM_ERROR_MSG
            print(f"[module says] {text}")
            answer = ""
        replies.append((answer, 0))
    return replies


def main(service, user):
    pamh = PAM.pam()
    pamh.start(service)
    pamh.set_item(PAM.PAM_USER, user)
    pamh.set_item(PAM.PAM_CONV, conversation)
    try:
        pamh.authenticate()
        pamh.acct_mgmt()
        pamh.open_session()
    except PAM.error as e:
        print(f"login.py: {user} refused: {e.args[0]} ({e.args[1]})")
        return 1
    print(f"login.py: {user} logged in; PAM environment:")
    for kv in pamh.getenvlist() or []:
        print(f"    {kv}")
    pamh.close_session()
    return 0


if __name__ == "__main__":
    if len(sys.argv) != 3:
        sys.exit("usage: login.py SERVICE USER")
    sys.exit(main(sys.argv[1], sys.argv[2]))
