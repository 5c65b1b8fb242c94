/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What the files of src/pamconf share and no one else uses: the two
 * grammars' readers behind pamconf_parse().
 */
#ifndef PAMCONF_IMPL_H
#define PAMCONF_IMPL_H

#include "pamconf.h"
#include "pwrap_buf.h"

int pamconf_parse_linux(const struct pamconf_rules *r, const char *text,
			size_t len, struct pamconf_file *f);
int pamconf_parse_openpam(const char *text, size_t len,
			  struct pamconf_file *f);
/* Frees what one line owns. */
void pamconf_line_free(struct pamconf_line *l);

#endif
