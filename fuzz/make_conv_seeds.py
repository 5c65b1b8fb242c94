#!/usr/bin/python3
# SPDX-License-Identifier: BSD-3-Clause
"""Writes the binary seed inputs of fuzz_conv into fuzz/corpus/fuzz_conv/.

The layout is the one fuzz_conv.c reads (see its header comment); the seeds
cover the interesting shapes once each so the fuzzer starts from them:
0 messages, a negative count, more than 16 messages and buffers, invalid
styles, NULL message pointers and texts, over-long texts, no answers left,
NULL conv_data and a kept handle.  Run it again after changing the layout.
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))
OUT = os.path.join(HERE, "corpus", "fuzz_conv")

ECHO_OFF, ECHO_ON, ERROR, INFO = 0, 1, 2, 3   # style byte < 240: styles[b % 4]
INVALID_0, INVALID_RADIO = 244, 245            # b >= 240: styles[b % 9]
NULL_TEXT = 255
NULL_PTR = 0x1F


def answers(lst, null=False):
    if null:
        return bytes([8])
    out = bytes([len(lst)])
    for a in lst:
        out += bytes([len(a)]) + a
    return out


def msg(style, text=b"", null_ptr=False, null_text=False):
    """One message; text is padded to a multiple of 8 bytes."""
    fl = NULL_PTR if null_ptr else 0
    if null_text:
        return bytes([fl, style, NULL_TEXT])
    n = (len(text) + 7) // 8
    return bytes([fl, style, n]) + text.ljust(n * 8, b".")


def rnd(msgs, count=None):
    return bytes([len(msgs) if count is None else count]) + b"".join(msgs)


def seed(off, on, nerr, ninfo, ops, flags, rounds):
    return (off + on + bytes([nerr, ninfo, len(ops) - 1, flags]) +
            bytes(ops) + b"".join(rounds))


SEEDS = {
    "auth_prompt": seed(answers([b"secret"]), answers([]), 16, 16, [0], 0,
                        [rnd([msg(ECHO_OFF, b"Password: "),
                              msg(INFO, b"Authentication succeeded")])]),
    "chauthtok": seed(answers([b"old", b"new", b"new"]), answers([b"me"]),
                      2, 2, [5], 0,
                      [rnd([msg(ECHO_OFF, b"Old password: "),
                            msg(ECHO_ON, b"login: "),
                            msg(ECHO_OFF, b"New Password :"),
                            msg(ECHO_OFF, b"Verify New Password :")])]),
    "17_messages": seed(answers([]), answers([]), 16, 16, [0], 0,
                        [rnd([msg(INFO, b"line %d" % i) for i in range(17)])]),
    "39_errors_2_calls": seed(answers([]), answers([]), 20, 0, [0, 2], 0,
                              [rnd([msg(ERROR, b"e")] * 39),
                               rnd([msg(ERROR, b"again")] * 3)]),
    "long_text": seed(answers([]), answers([]), 1, 1, [0], 0,
                      [rnd([msg(INFO, b"L" * 1000), msg(ERROR, b"E" * 600)])]),
    "no_answer_left": seed(answers([b"only"]), answers([], null=True), 1, 1,
                           [0], 0,
                           [rnd([msg(ECHO_OFF, b"1"), msg(ECHO_OFF, b"2")])]),
    "null_bits": seed(answers([b"a"]), answers([b"b"]), 23, 23, [0], 0,
                      [rnd([msg(INFO, null_text=True),
                            msg(ERROR, null_ptr=True)])]),
    "invalid_styles": seed(answers([b"a"]), answers([]), 4, 4, [0, 1], 0,
                           [rnd([msg(INVALID_0, b"x")]),
                            rnd([msg(INVALID_RADIO, b"y")])]),
    "zero_and_negative": seed(answers([]), answers([]), 1, 1, [0, 3], 0,
                              [bytes([0xFF]), bytes([0xFE])]),
    "null_msg_array": seed(answers([]), answers([]), 1, 1, [0], 0,
                           [rnd([msg(INFO, b"x")], count=0xFD)]),
    "null_conv_data": seed(answers([b"pw"]), answers([]), 3, 3, [0], 2,
                           [rnd([msg(INFO, b"info"), msg(ECHO_OFF, b"pw")])]),
    "keephandle": seed(answers([b"pw"]), answers([]), 3, 3, [0], 1,
                       [rnd([msg(ECHO_OFF, b"Password: ")]),
                        rnd([msg(INFO, b"after"), msg(ECHO_OFF, b"again")])]),
    "getenv_unknown_op": seed(answers([]), answers([]), 1, 1, [0, 254, 255], 0,
                              [rnd([msg(INFO, b"x")])]),
}

if __name__ == "__main__":
    os.makedirs(OUT, exist_ok=True)
    for name, data in SEEDS.items():
        with open(os.path.join(OUT, name), "wb") as f:
            f.write(data)
