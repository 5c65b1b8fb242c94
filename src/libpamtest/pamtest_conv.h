/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Private to this project (libpamtest, pypamtest); not installed.
 *
 * libpamtest's built-in conversation (pamtest_conv.c): the one routing of
 * PAM messages to answers and captured messages, and the one place reply
 * arrays are allocated and freed.  libpamtest runs it for _pamtest() and
 * _pamtest_faults() and frees replies of its fault layer with
 * pamtest_free_reply(); pypamtest compiles the same file in and hands
 * pamtest_builtin_conv to _pamtest_conv_faults() with a message sink of its
 * own, because a Python run collects any number of messages of any length
 * where struct pamtest_conv_data has a fixed number of PAM_MAX_MSG_SIZE
 * buffers.  Everything here is hidden: neither shared object exports it,
 * so libpamtest's ABI stays what include/libpamtest.h says.
 */
#ifndef PAMTEST_CONV_H
#define PAMTEST_CONV_H

#include <stdbool.h>
#include <stddef.h>

#include <security/pam_appl.h>

#include "libpamtest.h"

#define PAMTEST_HIDDEN __attribute__((visibility("hidden")))

/*
 * Takes a PAM_ERROR_MSG or PAM_TEXT_INFO message (msg_style says which)
 * instead of data's buffers.  msg is never NULL ("" for a NULL text) and is
 * lent for the call only: a sink keeps a copy.  Returns 0, or -1 when out
 * of memory (the conversation then fails with PAM_BUF_ERR).
 */
typedef int (*pamtest_msg_sink)(void *ctx, int msg_style, const char *msg);

/*
 * State of the built-in conversation for one run, in the frame of the call
 * that runs it (the caller owns everything it points to).  data may be
 * NULL; with a sink, data's out_err and out_info are not used.  The indexes
 * say how many answers and buffers the run has used so far; oom is set
 * when the conversation failed for want of memory, which the module only
 * sees as PAM_BUF_ERR.
 */
struct pamtest_conv_state {
	struct pamtest_conv_data *data;
	pamtest_msg_sink sink;
	void *sink_ctx;
	size_t echo_off_idx;
	size_t echo_on_idx;
	size_t err_idx;
	size_t info_idx;
	bool oom;
};

/*
 * The conversation (appdata_ptr: struct pamtest_conv_state, or NULL for a
 * handle no run is using: every prompt then fails and messages are
 * dropped).  On success the reply array and its strings belong to the
 * caller (the module), as PAM requires.
 */
PAMTEST_HIDDEN int pamtest_builtin_conv(int num_msg,
					const struct pam_message **msg,
					struct pam_response **resp,
					void *appdata_ptr);

/* What a kept handle is left with: no state, so nothing can dangle. */
PAMTEST_HIDDEN extern const struct pam_conv pamtest_detached_conv;

/* Frees a reply array of num_msg entries; answers may be passwords, so
 * they are wiped first. */
PAMTEST_HIDDEN void pamtest_free_reply(struct pam_response *reply,
				       int num_msg);

#endif /* PAMTEST_CONV_H */
