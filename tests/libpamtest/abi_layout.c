/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Compile-time check of libpamtest's ABI: binaries built against an older
 * libpamtest.h (upstream pam_wrapper 1.1.x's layout) must keep working with
 * this library, so the structs they share with it keep their size, member
 * offsets and member types, the enums keep their values and the functions
 * keep their prototypes.  Each struct is compared with a copy of the old
 * layout written out here (so the check holds on every architecture);
 * struct pamtest_conv_faults is new and frozen the same way now.  Compiled
 * by ctest (libpamtest_abi_layout_*); nothing runs.
 */
#include <stddef.h>

#include <libpamtest.h>

#define SAME_TYPE(expr, type) _Generic((expr), type: 1, default: 0)
#define MEMBER(s, m) (((s *)0)->m)

/* struct pamtest_conv_data as upstream 1.1.x and our 1.2.0 define it. */
struct old_conv_data {
	const char **in_echo_off;
	const char **in_echo_on;
	char **out_err;
	char **out_info;
};

_Static_assert(sizeof(struct pamtest_conv_data) == sizeof(struct old_conv_data),
	       "struct pamtest_conv_data changed size");
_Static_assert(offsetof(struct pamtest_conv_data, in_echo_off) ==
	       offsetof(struct old_conv_data, in_echo_off), "in_echo_off moved");
_Static_assert(offsetof(struct pamtest_conv_data, in_echo_on) ==
	       offsetof(struct old_conv_data, in_echo_on), "in_echo_on moved");
_Static_assert(offsetof(struct pamtest_conv_data, out_err) ==
	       offsetof(struct old_conv_data, out_err), "out_err moved");
_Static_assert(offsetof(struct pamtest_conv_data, out_info) ==
	       offsetof(struct old_conv_data, out_info), "out_info moved");
_Static_assert(SAME_TYPE(MEMBER(struct pamtest_conv_data, in_echo_off), const char **),
	       "in_echo_off type");
_Static_assert(SAME_TYPE(MEMBER(struct pamtest_conv_data, in_echo_on), const char **),
	       "in_echo_on type");
_Static_assert(SAME_TYPE(MEMBER(struct pamtest_conv_data, out_err), char **),
	       "out_err type");
_Static_assert(SAME_TYPE(MEMBER(struct pamtest_conv_data, out_info), char **),
	       "out_info type");

/* struct pam_testcase, likewise. */
struct old_testcase {
	enum pamtest_ops pam_operation;
	int expected_rv;
	int flags;
	int op_rv;
	union {
		char **envlist;
		pam_handle_t *ph;
	} case_out;
};

_Static_assert(sizeof(struct pam_testcase) == sizeof(struct old_testcase),
	       "struct pam_testcase changed size");
_Static_assert(offsetof(struct pam_testcase, pam_operation) == 0, "pam_operation moved");
_Static_assert(offsetof(struct pam_testcase, expected_rv) ==
	       offsetof(struct old_testcase, expected_rv), "expected_rv moved");
_Static_assert(offsetof(struct pam_testcase, flags) ==
	       offsetof(struct old_testcase, flags), "flags moved");
_Static_assert(offsetof(struct pam_testcase, op_rv) ==
	       offsetof(struct old_testcase, op_rv), "op_rv moved");
_Static_assert(offsetof(struct pam_testcase, case_out) ==
	       offsetof(struct old_testcase, case_out), "case_out moved");
_Static_assert(sizeof(MEMBER(struct pam_testcase, case_out)) == sizeof(void *),
	       "case_out size");

/* The enums' values are part of the ABI too. */
_Static_assert(PAMTEST_AUTHENTICATE == 0 && PAMTEST_SETCRED == 1 &&
	       PAMTEST_ACCOUNT == 2 && PAMTEST_OPEN_SESSION == 3 &&
	       PAMTEST_CLOSE_SESSION == 4 && PAMTEST_CHAUTHTOK == 5 &&
	       PAMTEST_GETENVLIST == 20 && PAMTEST_KEEPHANDLE == 21,
	       "enum pamtest_ops values");
_Static_assert(PAMTEST_ERR_OK == 0 && PAMTEST_ERR_START == 1 &&
	       PAMTEST_ERR_CASE == 2 && PAMTEST_ERR_OP == 3 &&
	       PAMTEST_ERR_END == 4 && PAMTEST_ERR_KEEPHANDLE == 5 &&
	       PAMTEST_ERR_INTERNAL == 6, "enum pamtest_err values");

/* struct pamtest_conv_faults (new in 1.2.0), frozen from now on. */
struct faults_1_2 {
	unsigned int fail_at;
	int fail_code;
	unsigned int null_resp_at;
	unsigned int null_entry_at;
	unsigned int long_answer_at;
	size_t long_answer_len;
	unsigned int calls;
};

_Static_assert(sizeof(struct pamtest_conv_faults) == sizeof(struct faults_1_2),
	       "struct pamtest_conv_faults changed size");
_Static_assert(offsetof(struct pamtest_conv_faults, fail_at) ==
	       offsetof(struct faults_1_2, fail_at), "fail_at moved");
_Static_assert(offsetof(struct pamtest_conv_faults, fail_code) ==
	       offsetof(struct faults_1_2, fail_code), "fail_code moved");
_Static_assert(offsetof(struct pamtest_conv_faults, null_resp_at) ==
	       offsetof(struct faults_1_2, null_resp_at), "null_resp_at moved");
_Static_assert(offsetof(struct pamtest_conv_faults, null_entry_at) ==
	       offsetof(struct faults_1_2, null_entry_at), "null_entry_at moved");
_Static_assert(offsetof(struct pamtest_conv_faults, long_answer_at) ==
	       offsetof(struct faults_1_2, long_answer_at), "long_answer_at moved");
_Static_assert(offsetof(struct pamtest_conv_faults, long_answer_len) ==
	       offsetof(struct faults_1_2, long_answer_len), "long_answer_len moved");
_Static_assert(offsetof(struct pamtest_conv_faults, calls) ==
	       offsetof(struct faults_1_2, calls), "calls moved");

/*
 * The prototypes: initializing these pointers is a constraint violation
 * (an error with -Werror=incompatible-pointer-types, which the test uses)
 * when a function's type changes.
 */
enum pamtest_err (*const abi_pamtest)(const char *, const char *,
				      struct pamtest_conv_data *,
				      struct pam_testcase *, size_t,
				      pam_handle_t *) = _pamtest;
enum pamtest_err (*const abi_pamtest_conv)(const char *, const char *,
					   pam_conv_fn, void *,
					   struct pam_testcase *, size_t,
					   pam_handle_t *) = _pamtest_conv;
const struct pam_testcase *(*const abi_failed_case)(struct pam_testcase *,
						     size_t) = _pamtest_failed_case;
const char *(*const abi_strerror)(enum pamtest_err) = pamtest_strerror;
void (*const abi_free_env)(char **) = pamtest_free_env;
enum pamtest_err (*const abi_pamtest_faults)(const char *, const char *,
					     struct pamtest_conv_data *,
					     struct pamtest_conv_faults *,
					     struct pam_testcase *, size_t,
					     pam_handle_t *) = _pamtest_faults;
enum pamtest_err (*const abi_pamtest_conv_faults)(const char *, const char *,
						  pam_conv_fn, void *,
						  struct pamtest_conv_faults *,
						  struct pam_testcase *, size_t,
						  pam_handle_t *) = _pamtest_conv_faults;
