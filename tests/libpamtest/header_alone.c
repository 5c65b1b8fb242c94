/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Compiled (never run) by the libpamtest_header_* tests: the public header
 * must compile on its own, without any other include before it, as C99, C11
 * and C++ with -Wall -Wextra -Werror -pedantic.
 */
#include <libpamtest.h>

int lpt_header_alone(void);
int lpt_header_alone(void)
{
	return (int)PAMTEST_ERR_OK;
}
