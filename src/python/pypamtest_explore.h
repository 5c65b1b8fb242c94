/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pypamtest.explore() (pypamtest_explore.c), registered in pypamtest.c's
 * method table.
 */
#ifndef PYPAMTEST_EXPLORE_H
#define PYPAMTEST_EXPLORE_H

#include <Python.h>

PyObject *pwrap_py_explore(PyObject *self, PyObject *args, PyObject *kwargs);
extern const char pwrap_py_explore_doc[];
PyObject *pwrap_py_tool_path(PyObject *self, PyObject *arg);
extern const char pwrap_py_tool_path_doc[];

#endif
