/* SPDX-License-Identifier: BSD-3-Clause */
/* The library the test modules of xp_dep_module.c need (built with or
 * without a symbol version: xp_dep_v1.map, xp_dep_v2.map). */
int xp_dep_fn(void);

int xp_dep_fn(void)
{
	return 42;
}
