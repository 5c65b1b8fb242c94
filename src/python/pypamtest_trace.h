/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pypamtest and the wrapper's module trace (pypamtest_trace.c).  All with
 * the GIL held.
 */
#ifndef PYPAMTEST_TRACE_H
#define PYPAMTEST_TRACE_H

#include <Python.h>
#include <limits.h>
#include <stdbool.h>

/* One traced run: its private file, and the variables it replaced. */
struct pyp_trace {
	char dir[PATH_MAX];
	char path[PATH_MAX];
	char *old_trace;
	char *old_format;
	bool active;
};

/* Points PAM_WRAPPER_TRACE at a new private file; 0, or -1 with a Python
 * exception set. */
int pyp_trace_begin(struct pyp_trace *t);
/* Puts the variables back and returns the run's records (a new list), or
 * NULL with an exception set; the file is removed either way. */
PyObject *pyp_trace_end(struct pyp_trace *t);
/* The same without reading (an error path). */
void pyp_trace_abandon(struct pyp_trace *t);
/* The records of a trace file in json format: a new list of dicts, or NULL
 * with an exception set (a missing file is an empty list when
 * missing_ok). */
PyObject *pyp_read_trace_file(const char *path, bool missing_ok);
/* Sets .trace = records on the exception being raised (if any). */
void pyp_trace_attach(PyObject *records);

#endif
