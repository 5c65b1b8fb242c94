/*
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * pypamtest's side of the wrapper's module trace (PAM_WRAPPER_TRACE, see
 * libpam_wrapper(7) and doc/trace-format.md): run_pamtest(..., trace=True)
 * points PAM_WRAPPER_TRACE at a private file for the run (json format),
 * puts the old values back afterwards and returns the records as a list of
 * dicts; read_trace(path) parses any trace file the same way.  The records
 * hold no password: the wrapper writes none.
 *
 * The variables are process-wide: while a traced run is in progress (the
 * GIL released), a transaction another thread starts is traced into the
 * same file.
 */
#define _GNU_SOURCE 1
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "pypamtest_trace.h"

/* getenv(name), copied (NULL when unset); false when out of memory. */
static bool save_var(const char *name, char **out)
{
	const char *v = getenv(name);

	*out = NULL;
	return v == NULL || (*out = strdup(v)) != NULL;
}

static void restore_var(const char *name, char *old)
{
	if (old != NULL) {
		setenv(name, old, 1);
	} else {
		unsetenv(name);
	}
	free(old);
}

int pyp_trace_begin(struct pyp_trace *t)
{
	const char *tmp = getenv("TMPDIR");

	memset(t, 0, sizeof(*t));
	if (tmp == NULL || tmp[0] != '/') {
		tmp = "/tmp";
	}
	if (snprintf(t->dir, sizeof(t->dir), "%s/pypamtest-trace.XXXXXX",
		     tmp) >= (int)sizeof(t->path) - 16) {
		errno = ENAMETOOLONG;
		PyErr_SetFromErrnoWithFilename(PyExc_OSError, tmp);
		t->dir[0] = '\0';
		return -1;
	}
	if (mkdtemp(t->dir) == NULL) {
		PyErr_SetFromErrnoWithFilename(PyExc_OSError, t->dir);
		t->dir[0] = '\0';
		return -1;
	}
	if (snprintf(t->path, sizeof(t->path), "%s/trace.json", t->dir) >=
	    (int)sizeof(t->path)) {
		pyp_trace_abandon(t);	/* (cannot happen: checked above) */
		errno = ENAMETOOLONG;
		PyErr_SetFromErrno(PyExc_OSError);
		return -1;
	}
	if (!save_var("PAM_WRAPPER_TRACE", &t->old_trace) ||
	    !save_var("PAM_WRAPPER_TRACE_FORMAT", &t->old_format)) {
		pyp_trace_abandon(t);
		PyErr_NoMemory();
		return -1;
	}
	t->active = true;
	if (setenv("PAM_WRAPPER_TRACE", t->path, 1) != 0 ||
	    setenv("PAM_WRAPPER_TRACE_FORMAT", "json", 1) != 0) {
		PyErr_SetFromErrno(PyExc_OSError);
		pyp_trace_abandon(t);
		return -1;
	}
	return 0;
}

void pyp_trace_abandon(struct pyp_trace *t)
{
	if (t->active) {
		restore_var("PAM_WRAPPER_TRACE", t->old_trace);
		restore_var("PAM_WRAPPER_TRACE_FORMAT", t->old_format);
		t->old_trace = t->old_format = NULL;
		t->active = false;
	}
	free(t->old_trace);
	free(t->old_format);
	t->old_trace = t->old_format = NULL;
	if (t->dir[0] != '\0') {
		unlink(t->path);
		rmdir(t->dir);
		t->dir[0] = '\0';
	}
}

PyObject *pyp_trace_end(struct pyp_trace *t)
{
	PyObject *records;

	if (t->active) {
		restore_var("PAM_WRAPPER_TRACE", t->old_trace);
		restore_var("PAM_WRAPPER_TRACE_FORMAT", t->old_format);
		t->old_trace = t->old_format = NULL;
		t->active = false;
	}
	records = pyp_read_trace_file(t->path, true);
	pyp_trace_abandon(t);
	return records;
}

PyObject *pyp_read_trace_file(const char *path, bool missing_ok)
{
	PyObject *json = NULL, *loads = NULL, *list = NULL;
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	FILE *f = fopen(path, "re");

	if (f == NULL) {
		if (errno == ENOENT && missing_ok) {
			return PyList_New(0);	/* no transaction ran */
		}
		return PyErr_SetFromErrnoWithFilename(PyExc_OSError, path);
	}
	json = PyImport_ImportModule("json");
	loads = json != NULL ? PyObject_GetAttrString(json, "loads") : NULL;
	list = loads != NULL ? PyList_New(0) : NULL;
	while (list != NULL && (n = getline(&line, &cap, f)) > 0) {
		PyObject *text, *rec;

		if (n == 1 && line[0] == '\n') {
			continue;
		}
		text = PyUnicode_DecodeUTF8(line, n, "surrogateescape");
		rec = text != NULL ? PyObject_CallFunctionObjArgs(loads, text, NULL)
				  : NULL;
		Py_XDECREF(text);
		if (rec == NULL || PyList_Append(list, rec) != 0) {
			Py_XDECREF(rec);
			Py_CLEAR(list);
			break;
		}
		Py_DECREF(rec);
	}
	free(line);
	fclose(f);
	Py_XDECREF(loads);
	Py_XDECREF(json);
	return list;
}

void pyp_trace_attach(PyObject *records)
{
	PyObject *type, *value, *tb;

	if (records == NULL || !PyErr_Occurred()) {
		return;
	}
	PyErr_Fetch(&type, &value, &tb);
	PyErr_NormalizeException(&type, &value, &tb);
	if (value != NULL &&
	    PyObject_SetAttrString(value, "trace", records) != 0) {
		PyErr_Clear();
	}
	PyErr_Restore(type, value, tb);
}
