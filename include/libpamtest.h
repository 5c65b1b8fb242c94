/* SPDX-License-Identifier: BSD-3-Clause */
/**
 * @file libpamtest.h
 * @brief Run a list of PAM operations against a service and check the results.
 *
 * libpamtest drives one PAM transaction per call: it starts (or reuses) a
 * handle, runs the test cases in order, answers the modules' prompts from
 * caller-supplied lists, copies the modules' info and error messages into
 * caller-supplied buffers, stops at the first case whose result differs from
 * the expected one and ends the handle.  It is meant to run inside a process
 * wrapped by pam_wrapper (LD_PRELOAD=libpam_wrapper.so PAM_WRAPPER=1
 * PAM_WRAPPER_SERVICE_DIR=dir), so that the service files come from a test
 * directory.  Names and values are those of upstream pam_wrapper 1.1.x.
 */
#ifndef LIBPAMTEST_H
#define LIBPAMTEST_H

#include <stddef.h>
#include <security/pam_appl.h>

#ifdef __cplusplus
extern "C" {
#endif

/**
 * @defgroup pamtest libpamtest
 * @{
 */

/** The operation a test case runs. */
enum pamtest_ops {
	/** pam_authenticate() */
	PAMTEST_AUTHENTICATE = 0,
	/** pam_setcred() */
	PAMTEST_SETCRED = 1,
	/** pam_acct_mgmt() */
	PAMTEST_ACCOUNT = 2,
	/** pam_open_session() */
	PAMTEST_OPEN_SESSION = 3,
	/** pam_close_session() */
	PAMTEST_CLOSE_SESSION = 4,
	/** pam_chauthtok() */
	PAMTEST_CHAUTHTOK = 5,

	/**
	 * Not a PAM operation: store a copy of the PAM environment
	 * (pam_getenvlist()) in case_out.envlist.  The caller frees it with
	 * pamtest_free_env().  Write it with expected_rv PAM_SUCCESS.
	 */
	PAMTEST_GETENVLIST = 20,
	/**
	 * Not a PAM operation: store the handle in case_out.ph and do not
	 * pam_end() it when the call returns.  The caller either ends it with
	 * pam_end() or passes it to a later call.  Write it with expected_rv
	 * PAM_SUCCESS.
	 */
	PAMTEST_KEEPHANDLE = 21,
};

/**
 * One test case.  Build it with pam_test() or pam_test_flags().
 */
struct pam_testcase {
	/** What to run. */
	enum pamtest_ops pam_operation;
	/** The PAM return value the case expects. */
	int expected_rv;
	/** Flags passed to the PAM function (PAM_SILENT, ...). */
	int flags;
	/**
	 * Output: what the PAM function returned.  PAMTEST_GETENVLIST and
	 * PAMTEST_KEEPHANDLE set 0 (PAM_SUCCESS; PAM_BUF_ERR when
	 * pam_getenvlist() fails); cases that did not run are not touched.
	 */
	int op_rv;
	/** Output of the pseudo operations. */
	union {
		/** PAMTEST_GETENVLIST: the environment; free with pamtest_free_env(). */
		char **envlist;
		/** PAMTEST_KEEPHANDLE: the handle that was kept. */
		pam_handle_t *ph;
	} case_out;
};

/** A test case running @p op that expects @p rv, with no flags. */
#define pam_test(op, rv) { (op), (rv), 0, 0, { NULL } }

/** A test case running @p op with @p flags that expects @p rv. */
#define pam_test_flags(op, rv, flags) { (op), (rv), (flags), 0, { NULL } }

/** The result of a whole run. */
enum pamtest_err {
	/** Every case returned what it expected and the handle was ended. */
	PAMTEST_ERR_OK = 0,
	/**
	 * pam_start() failed, or was not called because PAM_WRAPPER=1 and
	 * PAM_WRAPPER_SERVICE_DIR are set but libpam_wrapper.so is not loaded
	 * (LD_PRELOAD forgotten; a line on stderr says so).
	 */
	PAMTEST_ERR_START = 1,
	/** A case returned something else than it expected. */
	PAMTEST_ERR_CASE = 2,
	/** A case named an unknown operation. */
	PAMTEST_ERR_OP = 3,
	/** pam_end() failed. */
	PAMTEST_ERR_END = 4,
	/**
	 * The handle could not be kept safely (its conversation could not be
	 * detached from the call); it was ended and case_out.ph set to NULL.
	 */
	PAMTEST_ERR_KEEPHANDLE = 5,
	/** Invalid arguments or an internal failure (out of memory). */
	PAMTEST_ERR_INTERNAL = 6,
};

/**
 * What the built-in conversation answers and where it copies messages.
 *
 * Every member may be NULL.  Ownership stays with the caller; the library
 * reads and writes these arrays only while a call is running.
 *
 * Answers: in_echo_off answers PAM_PROMPT_ECHO_OFF prompts and in_echo_on
 * answers PAM_PROMPT_ECHO_ON prompts.  Each is a NULL-terminated array of
 * strings, consumed in order across all the cases of one call (each call
 * starts again at the first answer).  When a prompt finds no answer left (or
 * the array is NULL) the conversation fails with PAM_CONV_ERR; it never
 * reads past the terminating NULL.
 *
 * Messages: out_info receives PAM_TEXT_INFO messages and out_err receives
 * PAM_ERROR_MSG messages, one message per buffer, in order.  Each is a
 * NULL-terminated array of pointers to buffers of at least PAM_MAX_MSG_SIZE
 * (512) bytes each.  A message is copied NUL-terminated and cut to
 * PAM_MAX_MSG_SIZE - 1 bytes; once the array reaches its NULL entry further
 * messages are dropped (the conversation still succeeds).  Buffers that
 * receive no message are not touched.
 */
struct pamtest_conv_data {
	/** NULL-terminated answers to PAM_PROMPT_ECHO_OFF prompts. */
	const char **in_echo_off;
	/** NULL-terminated answers to PAM_PROMPT_ECHO_ON prompts. */
	const char **in_echo_on;
	/** NULL-terminated array of PAM_MAX_MSG_SIZE buffers for PAM_ERROR_MSG. */
	char **out_err;
	/** NULL-terminated array of PAM_MAX_MSG_SIZE buffers for PAM_TEXT_INFO. */
	char **out_info;
};

/**
 * A call number of struct pamtest_conv_faults that matches every
 * conversation call.
 */
#define PAMTEST_CONV_EVERY_CALL (~0U)

/**
 * Length of the long answer when long_answer_len is 0: longer than
 * PAM_MAX_RESP_SIZE (512) and than the 1024-byte buffers some modules use.
 */
#define PAMTEST_CONV_LONG_ANSWER_LEN 2048U

/**
 * Faults to inject into the conversation of one run (_pamtest_faults(),
 * _pamtest_conv_faults()).  Build it with a designated initializer so that
 * the members you do not name are 0 (no fault).
 *
 * Conversation calls are numbered from 1 for each run, across all its
 * cases.  A member "..._at" names the call it applies to: 0 never,
 * PAMTEST_CONV_EVERY_CALL every call, N the N-th call.  When several apply
 * to one call, the first in member order wins.  A faulted call never
 * reaches the conversation behind it (its messages are not recorded and no
 * answer is used), except a long-answer call, whose messages do.
 *
 * A new struct, not new members of struct pamtest_conv_data, so that
 * binaries built against that struct keep working.
 */
struct pamtest_conv_faults {
	/** This call returns fail_code, with *resp set to NULL. */
	unsigned int fail_at;
	/** What the failed call returns; 0 (PAM_SUCCESS) means PAM_CONV_ERR. */
	int fail_code;
	/** This call returns PAM_SUCCESS with *resp set to NULL (no array). */
	unsigned int null_resp_at;
	/**
	 * This call returns PAM_SUCCESS with an array of num_msg responses
	 * whose resp members are all NULL (owned by the module, as usual).
	 */
	unsigned int null_entry_at;
	/**
	 * The prompts (PAM_PROMPT_ECHO_OFF and PAM_PROMPT_ECHO_ON) of this
	 * call are answered with a string of long_answer_len characters
	 * "abcd...zabc..."; its other messages go to the conversation as
	 * usual.
	 */
	unsigned int long_answer_at;
	/** Length of the long answer; 0 means PAMTEST_CONV_LONG_ANSWER_LEN. */
	size_t long_answer_len;
	/** Output: how many conversation calls the run made. */
	unsigned int calls;
};

/** A PAM conversation function (the type of struct pam_conv's conv member). */
typedef int (*pam_conv_fn)(int num_msg,
			   const struct pam_message **msg,
			   struct pam_response **resp,
			   void *appdata_ptr);

/**
 * Run @p num_test_cases cases with the built-in conversation.
 *
 * This is the pointer + count form; run_pamtest() computes the count of an
 * array for you.
 *
 * @param service     The PAM service (ignored when @p pam_handle is given).
 * @param user        The user (ignored when @p pam_handle is given).
 * @param conv_data   Answers and message buffers; may be NULL (prompts then
 *                    fail with PAM_CONV_ERR, messages are dropped).
 * @param test_cases  The cases; op_rv and case_out are filled in.  May be
 *                    NULL only when @p num_test_cases is 0.
 * @param num_test_cases How many cases; 0 starts and ends a handle.
 * @param pam_handle  NULL to pam_start() a new handle, or a handle kept by an
 *                    earlier call (PAMTEST_KEEPHANDLE) to continue its
 *                    transaction.  A given handle gets this call's
 *                    conversation and, like a new one, is pam_end()ed when
 *                    the call returns unless a PAMTEST_KEEPHANDLE case ran.
 *
 * Cases run in order and the run stops at the first case whose op_rv differs
 * from its expected_rv.  The handle is then ended with the op_rv of the last
 * case that ran (PAM_SUCCESS when none ran).  A kept handle is left with a
 * conversation that fails every prompt and drops messages, never with one
 * that points into this call.
 *
 * @return PAMTEST_ERR_OK, or what went wrong (see enum pamtest_err); a
 *         failed pam_end() gives PAMTEST_ERR_END even after a failed case.
 */
enum pamtest_err _pamtest(const char *service,
			  const char *user,
			  struct pamtest_conv_data *conv_data,
			  struct pam_testcase test_cases[],
			  size_t num_test_cases,
			  pam_handle_t *pam_handle);

/**
 * Run @p num_test_cases cases with the caller's conversation function.
 *
 * As _pamtest(), but prompts and messages go to @p conv_fn called with
 * @p conv_userdata, both owned by the caller; they stay installed on a kept
 * handle.  With a NULL @p pam_handle a NULL @p conv_fn installs a
 * conversation that fails every prompt and drops messages.  With a non-NULL @p pam_handle,
 * @p service and @p user are ignored and a NULL @p conv_fn keeps the
 * handle's current conversation.
 */
enum pamtest_err _pamtest_conv(const char *service,
			       const char *user,
			       pam_conv_fn conv_fn,
			       void *conv_userdata,
			       struct pam_testcase test_cases[],
			       size_t num_test_cases,
			       pam_handle_t *pam_handle);

/**
 * _pamtest() with faults injected into the built-in conversation.
 *
 * @p faults may be NULL (then exactly _pamtest()); its calls member is
 * set.  A kept handle is left with a conversation that fails every prompt
 * and drops messages, as with _pamtest().
 */
enum pamtest_err _pamtest_faults(const char *service,
				 const char *user,
				 struct pamtest_conv_data *conv_data,
				 struct pamtest_conv_faults *faults,
				 struct pam_testcase test_cases[],
				 size_t num_test_cases,
				 pam_handle_t *pam_handle);

/**
 * _pamtest_conv() with faults injected in front of @p conv_fn.
 *
 * @p faults may be NULL (then exactly _pamtest_conv()); its calls member
 * is set.  With a NULL @p conv_fn the faults sit in front of a
 * conversation that fails every prompt and drops messages (new handle), or
 * in front of the given handle's current conversation.  A kept handle gets
 * that conversation back, without the faults (their state lives only as
 * long as the call).
 */
enum pamtest_err _pamtest_conv_faults(const char *service,
				      const char *user,
				      pam_conv_fn conv_fn,
				      void *conv_userdata,
				      struct pamtest_conv_faults *faults,
				      struct pam_testcase test_cases[],
				      size_t num_test_cases,
				      pam_handle_t *pam_handle);

/**
 * The first case whose op_rv differs from its expected_rv, or NULL when
 * there is none (or @p test_cases is NULL).
 */
const struct pam_testcase *
_pamtest_failed_case(struct pam_testcase test_cases[], size_t num_test_cases);

/** A static English description of @p perr; never NULL ("Unknown" for others). */
const char *pamtest_strerror(enum pamtest_err perr);

/** Free an environment list from a PAMTEST_GETENVLIST case; NULL is allowed. */
void pamtest_free_env(char **envlist);

/** @cond PAMTEST_INTERNAL */
/*
 * Array-counting helpers.  PAMTEST_ARRAY_SIZE_(a) is the element count of the
 * array a; with GCC or Clang, handing it a pointer (which would silently give
 * a wrong count) is a compile error that names
 * pamtest_argument_must_be_an_array_not_a_pointer.
 */
#if (defined(__GNUC__) || defined(__clang__)) && !defined(__cplusplus)
#define PAMTEST_NOT_A_POINTER_(a) \
	(0U * sizeof(struct { \
		int pamtest_argument_must_be_an_array_not_a_pointer : \
			__builtin_types_compatible_p(__typeof__(a), \
						     __typeof__(&(a)[0])) ? -1 : 1; \
	}))
#else
#define PAMTEST_NOT_A_POINTER_(a) 0U
#endif
#define PAMTEST_ARRAY_SIZE_(a) \
	(sizeof(a) / sizeof((a)[0]) + PAMTEST_NOT_A_POINTER_(a))

/* Dispatch on the number of macro arguments (up to 7). */
#define PAMTEST_NARG_(a1, a2, a3, a4, a5, a6, a7, n, ...) n
#define PAMTEST_COUNT_(...) PAMTEST_NARG_(__VA_ARGS__, 7, 6, 5, 4, 3, 2, 1, 0)
#define PAMTEST_PASTE_(a, b) a##b
#define PAMTEST_SELECT_(name, n) PAMTEST_PASTE_(name, n)

#define PAMTEST_RUN_4(svc, user, data, tests) \
	_pamtest((svc), (user), (data), (tests), PAMTEST_ARRAY_SIZE_(tests), NULL)
#define PAMTEST_RUN_5(svc, user, data, tests, ph) \
	_pamtest((svc), (user), (data), (tests), PAMTEST_ARRAY_SIZE_(tests), (ph))
#define PAMTEST_RUN_CONV_5(svc, user, fn, udata, tests) \
	_pamtest_conv((svc), (user), (fn), (udata), (tests), \
		      PAMTEST_ARRAY_SIZE_(tests), NULL)
#define PAMTEST_RUN_CONV_6(svc, user, fn, udata, tests, ph) \
	_pamtest_conv((svc), (user), (fn), (udata), (tests), \
		      PAMTEST_ARRAY_SIZE_(tests), (ph))
#define PAMTEST_RUN_N_5(svc, user, data, tests, n) \
	_pamtest((svc), (user), (data), (tests), (n), NULL)
#define PAMTEST_RUN_N_6(svc, user, data, tests, n, ph) \
	_pamtest((svc), (user), (data), (tests), (n), (ph))
#define PAMTEST_RUN_FAULTS_5(svc, user, data, faults, tests) \
	_pamtest_faults((svc), (user), (data), (faults), (tests), \
			PAMTEST_ARRAY_SIZE_(tests), NULL)
#define PAMTEST_RUN_FAULTS_6(svc, user, data, faults, tests, ph) \
	_pamtest_faults((svc), (user), (data), (faults), (tests), \
			PAMTEST_ARRAY_SIZE_(tests), (ph))
#define PAMTEST_RUN_CONV_FAULTS_6(svc, user, fn, udata, faults, tests) \
	_pamtest_conv_faults((svc), (user), (fn), (udata), (faults), (tests), \
			     PAMTEST_ARRAY_SIZE_(tests), NULL)
#define PAMTEST_RUN_CONV_FAULTS_7(svc, user, fn, udata, faults, tests, ph) \
	_pamtest_conv_faults((svc), (user), (fn), (udata), (faults), (tests), \
			     PAMTEST_ARRAY_SIZE_(tests), (ph))
/** @endcond */

/**
 * run_pamtest(service, user, conv_data, tests)
 * run_pamtest(service, user, conv_data, tests, pam_handle)
 *
 * _pamtest() on the array @c tests (its element count is computed; passing
 * a pointer is a compile error with GCC and Clang).  The 4-argument form
 * starts a new handle.
 */
#define run_pamtest(...) \
	PAMTEST_SELECT_(PAMTEST_RUN_, PAMTEST_COUNT_(__VA_ARGS__))(__VA_ARGS__)

/**
 * run_pamtest_conv(service, user, conv_fn, conv_userdata, tests)
 * run_pamtest_conv(service, user, conv_fn, conv_userdata, tests, pam_handle)
 *
 * _pamtest_conv() on the array @c tests.
 */
#define run_pamtest_conv(...) \
	PAMTEST_SELECT_(PAMTEST_RUN_CONV_, PAMTEST_COUNT_(__VA_ARGS__))(__VA_ARGS__)

/**
 * run_pamtest_n(service, user, conv_data, tests, n)
 * run_pamtest_n(service, user, conv_data, tests, n, pam_handle)
 *
 * _pamtest() on @p n cases at the pointer @c tests, for lists built at run
 * time.
 */
#define run_pamtest_n(...) \
	PAMTEST_SELECT_(PAMTEST_RUN_N_, PAMTEST_COUNT_(__VA_ARGS__))(__VA_ARGS__)

/**
 * run_pamtest_faults(service, user, conv_data, faults, tests)
 * run_pamtest_faults(service, user, conv_data, faults, tests, pam_handle)
 *
 * _pamtest_faults() on the array @c tests.
 */
#define run_pamtest_faults(...) \
	PAMTEST_SELECT_(PAMTEST_RUN_FAULTS_, PAMTEST_COUNT_(__VA_ARGS__))(__VA_ARGS__)

/**
 * run_pamtest_conv_faults(service, user, conv_fn, conv_userdata, faults, tests)
 * run_pamtest_conv_faults(service, user, conv_fn, conv_userdata, faults, tests,
 *                         pam_handle)
 *
 * _pamtest_conv_faults() on the array @c tests.
 */
#define run_pamtest_conv_faults(...) \
	PAMTEST_SELECT_(PAMTEST_RUN_CONV_FAULTS_, \
			PAMTEST_COUNT_(__VA_ARGS__))(__VA_ARGS__)

/** _pamtest_failed_case() on the array @p tests. */
#define pamtest_failed_case(tests) \
	_pamtest_failed_case((tests), PAMTEST_ARRAY_SIZE_(tests))

/** @} */

#ifdef __cplusplus
}
#endif

#endif /* LIBPAMTEST_H */
