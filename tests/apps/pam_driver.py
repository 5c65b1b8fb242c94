# SPDX-License-Identifier: BSD-3-Clause
#
# A small PAM application written with Debian's python3-pam (`import PAM`,
# a C extension linked to libpam, so our preloaded libpam_wrapper.so
# redirects its pam_start).  The tests run it wrapped and read what it saw.
#
# Input (JSON on stdin):
#   {"service": "svc", "user": "alice",
#    "answers": ["secret", ...],     # answers to prompts, in order
#    "items": {"PAM_RHOST": "..."},  # optional pam_set_item calls
#    "ops": ["authenticate", "acct_mgmt", "setcred", "open_session",
#            "close_session", "chauthtok"]}
# Output (JSON on stdout):
#   {"results": [{"op": "authenticate", "rc": 0, "error": null,
#                 "env": {...PAM environment after the op...}}, ...],
#    "conversation": [{"style": "echo_off", "msg": "Password: ",
#                      "op": "authenticate"}, ...]}
# rc is the PAM return code (0 = PAM_SUCCESS); every op runs even after
# a failure, like a test that wants to see each result.
import json
import sys

import PAM

STYLES = {
    PAM.PAM_PROMPT_ECHO_OFF: "echo_off",
    PAM.PAM_PROMPT_ECHO_ON: "echo_on",
    PAM.PAM_ERROR_MSG: "error",
    PAM.PAM_TEXT_INFO: "info",
}


def main():
    spec = json.load(sys.stdin)
    answers = list(spec.get("answers", []))
    conversation = []
    current = {"op": None}

    def conv(_auth, queries, _data):
        replies = []
        for msg, style in queries:
            name = STYLES.get(style, str(style))
            conversation.append({"style": name, "msg": msg,
                                 "op": current["op"]})
            if name in ("echo_off", "echo_on"):
                replies.append((answers.pop(0) if answers else "", 0))
            else:
                replies.append(("", 0))
        return replies

    pamh = PAM.pam()
    pamh.start(spec["service"])
    pamh.set_item(PAM.PAM_USER, spec["user"])
    pamh.set_item(PAM.PAM_CONV, conv)
    for name, value in spec.get("items", {}).items():
        pamh.set_item(getattr(PAM, name), value)

    calls = {
        "authenticate": lambda: pamh.authenticate(),
        "acct_mgmt": lambda: pamh.acct_mgmt(),
        "setcred": lambda: pamh.setcred(PAM.PAM_ESTABLISH_CRED),
        "open_session": lambda: pamh.open_session(),
        "close_session": lambda: pamh.close_session(),
        "chauthtok": lambda: pamh.chauthtok(),
    }
    results = []
    for op in spec["ops"]:
        current["op"] = op
        rc, error = 0, None
        try:
            calls[op]()
        except PAM.error as e:
            error, rc = e.args[0], e.args[1]
        env = dict(kv.split("=", 1) for kv in (pamh.getenvlist() or []))
        results.append({"op": op, "rc": rc, "error": error, "env": env})
    json.dump({"results": results, "conversation": conversation},
              sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
