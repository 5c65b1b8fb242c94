/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Name <-> value lookups of pamtest(1) for PAM codes, operations, string items
 * and flags.  Names are accepted with or without their "PAM_" prefix; the
 * returned names are static strings.
 */
#ifndef PAMTEST_NAMES_H
#define PAMTEST_NAMES_H

#include "scenario.h"

const char *pam_code_name(int code);
int parse_pam_code(const char *s, int *out);
const char *op_name(enum op op);
int parse_op(const char *s, enum op *out);
const char *item_name(int item);
int parse_item(const char *s, int *out);
const char *flag_name(int flag);
int parse_flag(const char *s, int *out);
/* PAM_AUTHTOK and PAM_OLDAUTHTOK: values are never printed. */
int is_secret_item(int item);

#endif
