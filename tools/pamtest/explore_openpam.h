/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest explore, OpenPAM: the entries of each policy file as read
 * (explore_openpam.c), from which explore_gen_openpam.c writes the
 * replay's copy.  Kept in xp_conf.impl.
 */
#ifndef PAMTEST_EXPLORE_OPENPAM_H
#define PAMTEST_EXPLORE_OPENPAM_H

#include "explore.h"

struct xp_raw {
	int file;
	unsigned line;
	int facility;
	int flag;	/* a module line; -1 for an include */
	int site;
	bool standin;	/* the module can be loaded */
	int include;	/* an include: the file included */
};

struct xp_openpam {
	struct xp_raw *v;	/* in the order read, once each */
	size_t n;
};

#endif
