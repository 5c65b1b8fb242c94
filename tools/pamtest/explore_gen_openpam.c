/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest explore, OpenPAM: the service directory a replay runs on.  Each
 * policy file the service reads is written again from the entries the
 * reader found (explore_openpam.h), one per line: a module line names the
 * stand-in, told which line it stands for ("facility flag <dir>/s
 * pwrap_xp=<site>"), an include names the copy of the included file.
 * OpenPAM reads nothing else of a line it skips, so the copy reads as the
 * original does; a configuration on which pam_start fails has nothing
 * to replay but that failure, which the copy keeps (a module that cannot
 * be loaded stays one that cannot).
 */
#define _GNU_SOURCE
#include "explore.h"
#include "pwrap_names.h"
#include "explore_openpam.h"
#include "explore_read.h"
#include "pwrap_tool.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const flags[] = { "required", "requisite", "sufficient",
				     "binding", "optional" };

static char *copy_name(const struct xp_conf *c, int f)
{
	char *n = NULL;

	if (f == c->service_file)
		return strdup(c->service);
	if (f == c->other_file)
		return strdup("other");
	return asprintf(&n, "xp%d", f) < 0 ? NULL : n;
}

int xp_gen_replay(const struct xp_conf *c, const char *dir,
		  const char *standin, char **err)
{
	const struct xp_openpam *o = c->impl;
	char *s = NULL;
	int rc = -1;

	*err = NULL;
	if (asprintf(&s, "%s/s", dir) < 0 || symlink(standin, s) != 0) {
		*err = strdup("cannot link the stand-in module");
		goto out;
	}
	for (size_t f = 0; f < c->nfiles; f++) {
		struct pwrap_buf b = { 0 };
		char *name = copy_name(c, (int)f);
		int w;

		pwrap_buf_str(&b, "");
		if (!xp_readable(c->files[f].path)) {	/* a missing include */
			free(name);
			pwrap_buf_free(&b);
			continue;
		}
		for (size_t i = 0; o != NULL && i < o->n; i++) {
			const struct xp_raw *e = &o->v[i];
			char *inc;

			if (e->file != (int)f)
				continue;
			if (e->flag < 0) {
				inc = copy_name(c, e->include);
				pwrap_buf_fmt(&b, "%s include %s\n", pwrap_group_name(e->facility),
					inc != NULL ? inc : "?");
				free(inc);
			} else if (e->standin) {
				pwrap_buf_fmt(&b, "%s %s %s/s pwrap_xp=%d\n",
					pwrap_group_name(e->facility), flags[e->flag], dir,
					e->site);
			} else {
				pwrap_buf_fmt(&b, "%s %s %s/absent/pam_absent.so\n",
					pwrap_group_name(e->facility), flags[e->flag], dir);
			}
		}
		/* where OpenPAM gives up, the copy does too (a facility
		 * that does not exist) */
		if (c->refused != NULL && c->refused_file == (int)f)
			pwrap_buf_str(&b, "refused required pam_absent.so\n");
		w = name != NULL && !b.failed ? pwrap_write_file(dir, name, b.p, NULL) : -1;
		free(name);
		pwrap_buf_free(&b);
		if (w != 0) {
			*err = strdup("cannot write the copy for the replay");
			goto out;
		}
	}
	rc = 0;
out:
	free(s);
	return rc;
}
