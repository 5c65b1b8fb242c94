/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Built by test_deb.sh against Debian's libpamtest0-dev 1.1.4, so that it
 * records Debian's SONAME libpamtest.so.SOVERSION; run again once our
 * packages replaced Debian's, it must still start and get libpamtest's
 * answers (through our libpamtest0's compatibility name).
 */
#include <stdio.h>
#include <string.h>

#include <libpamtest.h>

int main(void)
{
	const char *ok = pamtest_strerror(PAMTEST_ERR_OK);
	const char *start = pamtest_strerror(PAMTEST_ERR_START);

	printf("%s|%s\n", ok, start);
	return strcmp(ok, "Success") == 0 &&
	       strcmp(start, "pam_start failed()") == 0 ? 0 : 1;
}
