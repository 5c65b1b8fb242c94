/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The containers of libpam_wrapper.so.  The one list: a singly linked list of entries keyed
 * by a name, for the files it keeps track of (rewritten files in conf/,
 * pwrap_walk.c; copies in services/ and files saved from an inherited
 * services/, pwrap_services.c).  The lists are a handful of entries long
 * and only read under the preparation lock, so a linear search does.  The
 * list owns nothing: entries are allocated and freed by the file that keeps
 * the list, which takes an entry out before freeing it.  And a vector of
 * strings (the include targets a rewritten file names).
 */
#define _GNU_SOURCE
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "pwrap_private.h"

struct pwrap_entry *pwrap_list_find(struct pwrap_entry *head, const char *name)
{
	for (struct pwrap_entry *e = head; e != NULL; e = e->next) {
		if (strcmp(e->name, name) == 0) {
			return e;
		}
	}
	return NULL;
}

void pwrap_list_push(struct pwrap_entry **head, struct pwrap_entry *e)
{
	e->next = *head;
	*head = e;
}

struct pwrap_entry *pwrap_list_take(struct pwrap_entry **head,
				    const char *name)
{
	for (struct pwrap_entry **pp = head; *pp != NULL; pp = &(*pp)->next) {
		if (name == NULL || strcmp((*pp)->name, name) == 0) {
			struct pwrap_entry *e = *pp;

			*pp = e->next;
			e->next = NULL;
			return e;
		}
	}
	return NULL;
}

void pwrap_strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i]);
	}
	free(v);
}

int pwrap_strv_add(char ***v, size_t *n, const char *s)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (nv == NULL) {
		return -1;
	}
	*v = nv;
	nv[*n] = strdup(s);
	if (nv[*n] == NULL) {
		return -1;
	}
	(*n)++;
	return 0;
}
