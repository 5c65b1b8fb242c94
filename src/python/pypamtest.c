/*
 * SPDX-License-Identifier: BSD-3-Clause
 *
 * pypamtest: the CPython extension module over libpamtest.  It lets a Python
 * test run a PAM transaction (a list of TestCase operations) against a
 * service file, answering the module's prompts from lists of strings and
 * collecting its info and error messages.  The conversation is
 * libpamtest's built-in one (pamtest_conv.c, compiled in), handed to
 * _pamtest_conv_faults() with a message sink of ours that collects any
 * number of messages of any length (struct pamtest_conv_data's fixed
 * buffers could not).  A prompt with no answer left gets a NULL response
 * (as upstream's does), and the GIL is released around the whole PAM
 * transaction:
 * everything the conversation touches then is plain C memory (answers
 * copied before, messages converted after).
 *
 * Conversation faults (conv_fail_at=, conv_null_resp_at=, ...) are libpamtest's
 * (_pamtest_conv_faults): its fault layer sits in front of the conversation
 * and is gone again when the run returns.
 *
 * Handle ownership (PAMTEST_KEEPHANDLE): a kept pam_handle_t is wrapped in a
 * capsule named "pypamtest.pam_handle".  The capsule's context is
 * &handle_owned while the capsule owns the handle; its destructor then calls
 * pam_end(ph, PAM_SUCCESS).  Passing the capsule as handle= hands the handle
 * to libpamtest (which ends it unless the run keeps it again), so the
 * capsule's context is cleared first and the capsule is "consumed": it can
 * be neither reused nor ended twice.  When the run keeps the same handle
 * again, the same capsule is re-armed and put on the new KEEPHANDLE case.
 */

#define _GNU_SOURCE 1
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <dlfcn.h>
#include <structmember.h>

#include <limits.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include <security/pam_appl.h>

#include "libpamtest.h"
#include "pamtest_conv.h"
#include "pamtest_preload.h"
#include "pypamtest_trace.h"
#include "pypamtest_explore.h"

#define HANDLE_CAPSULE_NAME "pypamtest.pam_handle"

/* The capsule context that marks "this capsule owns its PAM handle". */
static char handle_owned;

static PyObject *PamTestError; /* pypamtest.PamTestError, an OSError */

/* ------------------------------------------------------------------ */
/* What the conversation reads and fills: plain C, used without the GIL. */

struct str_list {
	char **v; /* heap strings, owned by the list */
	size_t n;
	size_t cap;
};

/* The messages of one run, filled by collect_message(). */
struct messages {
	struct str_list info;
	struct str_list errors;
};

static int str_list_append(struct str_list *l, const char *s)
{
	char *copy = NULL;

	if (l->n == l->cap) {
		size_t ncap = l->cap == 0 ? 16 : l->cap * 2;
		char **nv = realloc(l->v, ncap * sizeof(*nv));

		if (nv == NULL) {
			return -1;
		}
		l->v = nv;
		l->cap = ncap;
	}
	copy = strdup(s);
	if (copy == NULL) {
		return -1;
	}
	l->v[l->n++] = copy;
	return 0;
}

static void str_list_free(struct str_list *l)
{
	for (size_t i = 0; i < l->n; i++) {
		free(l->v[i]);
	}
	free(l->v);
	memset(l, 0, sizeof(*l));
}

/* The conversation's message sink (pamtest_conv.h): ctx is struct messages. */
static int collect_message(void *ctx, int msg_style, const char *msg)
{
	struct messages *m = ctx;

	return str_list_append(msg_style == PAM_ERROR_MSG ? &m->errors
							  : &m->info, msg);
}

/* Frees a NULL-terminated list of answers, which may be passwords: wiped. */
static void answers_free(char **v)
{
	for (size_t i = 0; v != NULL && v[i] != NULL; i++) {
		explicit_bzero(v[i], strlen(v[i]));
		free(v[i]);
	}
	free(v);
}

/* ------------------------------------------------------------------ */
/* TestCase                                                            */

typedef struct {
	PyObject_HEAD
	int pam_operation;
	int expected_rv;
	int flags;
	PyObject *pam_env;    /* dict after a GETENVLIST run, else NULL */
	PyObject *pam_handle; /* capsule after a KEEPHANDLE run, else NULL */
} TestCaseObject;

static PyTypeObject TestCaseType;

static bool valid_operation(int op)
{
	switch (op) {
	case PAMTEST_AUTHENTICATE:
	case PAMTEST_SETCRED:
	case PAMTEST_ACCOUNT:
	case PAMTEST_OPEN_SESSION:
	case PAMTEST_CLOSE_SESSION:
	case PAMTEST_CHAUTHTOK:
	case PAMTEST_GETENVLIST:
	case PAMTEST_KEEPHANDLE:
		return true;
	default:
		return false;
	}
}

static PyObject *TestCase_new(PyTypeObject *type, PyObject *args,
			      PyObject *kwds)
{
	static char *kwlist[] = {"pam_operation", "expected_rv", "flags", NULL};
	int op = 0;
	int expected_rv = PAM_SUCCESS;
	int flags = 0;
	TestCaseObject *self = NULL;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "i|ii:TestCase", kwlist,
					 &op, &expected_rv, &flags)) {
		return NULL;
	}
	if (!valid_operation(op)) {
		PyErr_Format(PyExc_ValueError,
			     "Unsupported PAM operation %d", op);
		return NULL;
	}
	self = (TestCaseObject *)type->tp_alloc(type, 0);
	if (self == NULL) {
		return NULL;
	}
	self->pam_operation = op;
	self->expected_rv = expected_rv;
	self->flags = flags;
	return (PyObject *)self;
}

static int TestCase_traverse(TestCaseObject *self, visitproc visit, void *arg)
{
	Py_VISIT(self->pam_env);
	Py_VISIT(self->pam_handle);
	return 0;
}

static int TestCase_clear(TestCaseObject *self)
{
	Py_CLEAR(self->pam_env);
	Py_CLEAR(self->pam_handle);
	return 0;
}

static void TestCase_dealloc(TestCaseObject *self)
{
	PyObject_GC_UnTrack(self);
	TestCase_clear(self);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

static PyObject *TestCase_repr(TestCaseObject *self)
{
	return PyUnicode_FromFormat(
		"{ pam_operation [%d] expected_rv [%d] flags [%d] }",
		self->pam_operation, self->expected_rv, self->flags);
}

/* pam_env and pam_handle exist only once a run has produced them. */
static PyObject *TestCase_get_out(TestCaseObject *self, void *which)
{
	PyObject *v = which == NULL ? self->pam_env : self->pam_handle;

	if (v == NULL) {
		PyErr_Format(PyExc_AttributeError,
			     "'TestCase' object has no attribute '%s' (it is "
			     "set by run_pamtest for a %s case)",
			     which == NULL ? "pam_env" : "pam_handle",
			     which == NULL ? "PAMTEST_GETENVLIST"
					   : "PAMTEST_KEEPHANDLE");
		return NULL;
	}
	return Py_NewRef(v);
}

static PyMemberDef TestCase_members[] = {
	{"pam_operation", T_INT, offsetof(TestCaseObject, pam_operation),
	 READONLY, "The PAMTEST_* operation to run."},
	{"expected_rv", T_INT, offsetof(TestCaseObject, expected_rv), READONLY,
	 "The PAM return code the operation must give."},
	{"flags", T_INT, offsetof(TestCaseObject, flags), READONLY,
	 "The flags passed to the PAM call."},
	{NULL, 0, 0, 0, NULL},
};

static PyGetSetDef TestCase_getset[] = {
	{"pam_env", (getter)TestCase_get_out, NULL,
	 "dict of the PAM environment, set by a PAMTEST_GETENVLIST run.", NULL},
	{"pam_handle", (getter)TestCase_get_out, NULL,
	 "capsule of the kept PAM handle, set by a PAMTEST_KEEPHANDLE run; "
	 "pass it as run_pamtest(..., handle=...).",
	 &handle_owned},
	{NULL, NULL, NULL, NULL, NULL},
};

PyDoc_STRVAR(TestCase_doc,
	     "TestCase(pam_operation, expected_rv=0, flags=0)\n--\n\n"
	     "One PAM operation of a run_pamtest() transaction and the return "
	     "code it must give.");

static PyTypeObject TestCaseType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "pypamtest.TestCase",
	.tp_basicsize = sizeof(TestCaseObject),
	.tp_dealloc = (destructor)TestCase_dealloc,
	.tp_repr = (reprfunc)TestCase_repr,
	.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC,
	.tp_doc = TestCase_doc,
	.tp_traverse = (traverseproc)TestCase_traverse,
	.tp_clear = (inquiry)TestCase_clear,
	.tp_members = TestCase_members,
	.tp_getset = TestCase_getset,
	.tp_new = TestCase_new,
};

/* ------------------------------------------------------------------ */
/* TestResult                                                          */

typedef struct {
	PyObject_HEAD
	PyObject *info;   /* tuple of str */
	PyObject *errors; /* tuple of str */
	PyObject *trace;  /* list of dict (trace=True), else None */
} TestResultObject;

static PyObject *sequence_arg(PyObject *obj, const char *what);

/*
 * A tuple of the str items of a message list argument (None or absent: an
 * empty tuple).  Tests build expected results with TestResult(info, errors)
 * and compare, so only str is taken: anything else could never be equal.
 */
static PyObject *message_tuple(PyObject *obj, const char *what)
{
	PyObject *t = NULL;

	if (obj == NULL || obj == Py_None) {
		return PyTuple_New(0);
	}
	t = sequence_arg(obj, what);
	if (t == NULL) {
		return NULL;
	}
	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(t); i++) {
		PyObject *item = PyTuple_GET_ITEM(t, i);

		if (!PyUnicode_Check(item)) {
			PyErr_Format(PyExc_TypeError,
				     "%s[%zd] must be str, not %.100s", what, i,
				     Py_TYPE(item)->tp_name);
			Py_DECREF(t);
			return NULL;
		}
	}
	return t;
}

static PyObject *TestResult_new(PyTypeObject *type, PyObject *args,
				PyObject *kwds)
{
	/* Positional only, as upstream's: TestResult([info[, errors]]). */
	static char *kwlist[] = {"", "", NULL};
	PyObject *info_arg = NULL;
	PyObject *errors_arg = NULL;
	PyObject *info = NULL;
	PyObject *errors = NULL;
	TestResultObject *self = NULL;

	if (!PyArg_ParseTupleAndKeywords(args, kwds, "|OO:TestResult", kwlist,
					 &info_arg, &errors_arg)) {
		return NULL;
	}
	info = message_tuple(info_arg, "info_list");
	errors = info != NULL ? message_tuple(errors_arg, "error_list") : NULL;
	if (errors != NULL) {
		self = (TestResultObject *)type->tp_alloc(type, 0);
	}
	if (self == NULL) {
		Py_XDECREF(info);
		Py_XDECREF(errors);
		return NULL;
	}
	self->info = info;
	self->errors = errors;
	self->trace = Py_NewRef(Py_None);
	return (PyObject *)self;
}

static void TestResult_dealloc(TestResultObject *self)
{
	Py_XDECREF(self->info);
	Py_XDECREF(self->errors);
	Py_XDECREF(self->trace);
	Py_TYPE(self)->tp_free((PyObject *)self);
}

/* "{m1}{m2}..." for a tuple of str. */
static PyObject *braced_join(PyObject *messages)
{
	PyObject *parts = PyList_New(0);
	PyObject *empty = NULL;
	PyObject *joined = NULL;

	if (parts == NULL) {
		return NULL;
	}
	for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(messages); i++) {
		PyObject *p = PyUnicode_FromFormat(
			"{%U}", PyTuple_GET_ITEM(messages, i));

		if (p == NULL || PyList_Append(parts, p) != 0) {
			Py_XDECREF(p);
			goto out;
		}
		Py_DECREF(p);
	}
	empty = PyUnicode_FromString("");
	if (empty != NULL) {
		joined = PyUnicode_Join(empty, parts);
	}
out:
	Py_XDECREF(empty);
	Py_DECREF(parts);
	return joined;
}

/*
 * Upstream's format, "{ errors: { {e1}{e2} } infos: { {i1}{i2} } }", which
 * tests compare against; unlike upstream's, the errors part shows the
 * errors (upstream printed the info list twice).
 */
static PyObject *TestResult_repr(TestResultObject *self)
{
	PyObject *errors = braced_join(self->errors);
	PyObject *info = errors != NULL ? braced_join(self->info) : NULL;
	PyObject *r = NULL;

	if (info != NULL) {
		r = PyUnicode_FromFormat("{ errors: { %U } infos: { %U } }",
					 errors, info);
	}
	Py_XDECREF(errors);
	Py_XDECREF(info);
	return r;
}

static PyMemberDef TestResult_members[] = {
	{"info", T_OBJECT_EX, offsetof(TestResultObject, info), READONLY,
	 "PAM_TEXT_INFO messages, in the order the modules sent them."},
	{"errors", T_OBJECT_EX, offsetof(TestResultObject, errors), READONLY,
	 "PAM_ERROR_MSG messages, in the order the modules sent them."},
	{"trace", T_OBJECT, offsetof(TestResultObject, trace), READONLY,
	 "run_pamtest(..., trace=True): the module trace's records (dicts), "
	 "else None."},
	{NULL, 0, 0, 0, NULL},
};

PyDoc_STRVAR(TestResult_doc,
	     "TestResult(info_list=(), error_list=(), /)\n--\n\n"
	     "The messages of a successful run_pamtest() transaction: info "
	     "(PAM_TEXT_INFO)\nand errors (PAM_ERROR_MSG), tuples of str in "
	     "the order the modules sent\nthem.  Tests may build one to "
	     "compare with.");

static PyTypeObject TestResultType = {
	PyVarObject_HEAD_INIT(NULL, 0)
	.tp_name = "pypamtest.TestResult",
	.tp_basicsize = sizeof(TestResultObject),
	.tp_dealloc = (destructor)TestResult_dealloc,
	.tp_repr = (reprfunc)TestResult_repr,
	.tp_flags = Py_TPFLAGS_DEFAULT,
	.tp_doc = TestResult_doc,
	.tp_members = TestResult_members,
	.tp_new = TestResult_new,
};

/* ------------------------------------------------------------------ */
/* Conversions                                                         */

static PyObject *decode(const char *s, Py_ssize_t len)
{
	if (s == NULL) {
		s = "";
		len = 0;
	}
	if (len < 0) {
		len = (Py_ssize_t)strlen(s);
	}
	return PyUnicode_DecodeUTF8(s, len, "surrogateescape");
}

static PyObject *str_list_to_tuple(const struct str_list *l)
{
	PyObject *t = PyTuple_New((Py_ssize_t)l->n);

	if (t == NULL) {
		return NULL;
	}
	for (size_t i = 0; i < l->n; i++) {
		PyObject *s = decode(l->v[i], -1);

		if (s == NULL) {
			Py_DECREF(t);
			return NULL;
		}
		PyTuple_SET_ITEM(t, (Py_ssize_t)i, s);
	}
	return t;
}

/* A tuple copy of a sequence argument; a str/bytes is not a sequence here. */
static PyObject *sequence_arg(PyObject *obj, const char *what)
{
	if (PyUnicode_Check(obj) || PyBytes_Check(obj) ||
	    PyByteArray_Check(obj)) {
		PyErr_Format(PyExc_TypeError,
			     "%s must be a list or tuple of %s, not %.100s", what,
			     strcmp(what, "tests") == 0 ? "TestCase" : "str",
			     Py_TYPE(obj)->tp_name);
		return NULL;
	}
	/* A private tuple: other threads cannot change it while PAM runs. */
	PyObject *t = PySequence_Tuple(obj);
	if (t == NULL && PyErr_ExceptionMatches(PyExc_TypeError)) {
		PyErr_Clear();
		PyErr_Format(PyExc_TypeError,
			     "%s must be a list or tuple, not %.100s", what,
			     Py_TYPE(obj)->tp_name);
	}
	return t;
}

/*
 * Copies the answers of echo_off/echo_on (None, or a sequence of str) into
 * *out, a NULL-terminated list as struct pamtest_conv_data takes (None: no
 * list).  The caller frees it with answers_free(), also after a failure.
 */
static int copy_answers(PyObject *obj, const char *what, char ***out)
{
	PyObject *t = NULL;
	Py_ssize_t n;
	int rc = -1;

	if (obj == NULL || obj == Py_None) {
		return 0;
	}
	t = sequence_arg(obj, what);
	if (t == NULL) {
		goto out;
	}
	n = PyTuple_GET_SIZE(t);
	/* calloc: the list stays NULL-terminated whatever is filled in. */
	*out = calloc((size_t)n + 1, sizeof(**out));
	if (*out == NULL) {
		PyErr_NoMemory();
		goto out;
	}
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *item = PyTuple_GET_ITEM(t, i);
		PyObject *b = NULL;

		if (!PyUnicode_Check(item)) {
			PyErr_Format(PyExc_TypeError,
				     "%s[%zd] must be str, not %.100s", what, i,
				     Py_TYPE(item)->tp_name);
			goto out;
		}
		b = PyUnicode_AsEncodedString(item, "utf-8", "surrogateescape");
		if (b == NULL) {
			goto out;
		}
		if (strlen(PyBytes_AS_STRING(b)) !=
		    (size_t)PyBytes_GET_SIZE(b)) {
			Py_DECREF(b);
			PyErr_Format(PyExc_ValueError,
				     "%s[%zd] contains a NUL character", what,
				     i);
			goto out;
		}
		(*out)[i] = strdup(PyBytes_AS_STRING(b));
		Py_DECREF(b);
		if ((*out)[i] == NULL) {
			PyErr_NoMemory();
			goto out;
		}
	}
	rc = 0;
out:
	Py_XDECREF(t);
	return rc;
}

/* NAME=value strings to a dict, split at the first '='. */
static PyObject *envlist_to_dict(char **envlist)
{
	PyObject *d = PyDict_New();

	if (d == NULL) {
		return NULL;
	}
	for (size_t i = 0; envlist != NULL && envlist[i] != NULL; i++) {
		const char *e = envlist[i];
		const char *eq = strchr(e, '=');
		PyObject *k = decode(e, eq != NULL ? eq - e : -1);
		PyObject *v = decode(eq != NULL ? eq + 1 : "", -1);
		int r = -1;

		if (k != NULL && v != NULL) {
			r = PyDict_SetItem(d, k, v);
		}
		Py_XDECREF(k);
		Py_XDECREF(v);
		if (r != 0) {
			Py_DECREF(d);
			return NULL;
		}
	}
	return d;
}

static void handle_capsule_destructor(PyObject *cap)
{
	PyObject *et, *ev, *tb;
	pam_handle_t *ph;

	PyErr_Fetch(&et, &ev, &tb);
	ph = PyCapsule_GetPointer(cap, HANDLE_CAPSULE_NAME);
	if (ph != NULL && PyCapsule_GetContext(cap) == &handle_owned) {
		PyCapsule_SetContext(cap, NULL);
		pam_end(ph, PAM_SUCCESS);
	}
	PyErr_Clear();
	PyErr_Restore(et, ev, tb);
}

/* An owning capsule for a kept handle; on failure the handle is ended. */
static PyObject *handle_capsule_new(pam_handle_t *ph)
{
	PyObject *cap = PyCapsule_New(ph, HANDLE_CAPSULE_NAME,
				      handle_capsule_destructor);

	if (cap == NULL) {
		pam_end(ph, PAM_SUCCESS);
		return NULL;
	}
	if (PyCapsule_SetContext(cap, &handle_owned) != 0) {
		/* Cannot happen on a fresh capsule; do not leak the handle. */
		Py_DECREF(cap);
		pam_end(ph, PAM_SUCCESS);
		return NULL;
	}
	return cap;
}

/* ------------------------------------------------------------------ */
/* run_pamtest                                                         */

/*
 * Takes what the run left in cases[]: dicts for GETENVLIST, capsules for
 * KEEPHANDLE.  Every envlist is freed and every kept handle gets exactly one
 * owner even when a conversion fails; returns -1 with an exception set then.
 * A run uses one handle, so several KEEPHANDLE cases share one capsule, and
 * a handle that came in as in_cap re-arms that capsule.
 */
static int collect_case_outputs(PyObject *tests, struct pam_testcase *cases,
				size_t n, PyObject *in_cap, pam_handle_t *in_ph)
{
	PyObject *kept_cap = NULL; /* owned reference */
	pam_handle_t *kept_ph = NULL;
	int rc = 0;

	for (size_t i = 0; i < n; i++) {
		TestCaseObject *tc =
			(TestCaseObject *)PyTuple_GET_ITEM(tests, (Py_ssize_t)i);
		struct pam_testcase *c = &cases[i];

		if (c->pam_operation == PAMTEST_GETENVLIST &&
		    c->case_out.envlist != NULL) {
			PyObject *d = NULL;

			if (rc == 0) {
				d = envlist_to_dict(c->case_out.envlist);
			}
			pamtest_free_env(c->case_out.envlist);
			c->case_out.envlist = NULL;
			if (d == NULL) {
				rc = -1;
				continue;
			}
			Py_XSETREF(tc->pam_env, d);
		} else if (c->pam_operation == PAMTEST_KEEPHANDLE &&
			   c->case_out.ph != NULL) {
			pam_handle_t *ph = c->case_out.ph;

			c->case_out.ph = NULL;
			if (ph != kept_ph) {
				/* The run's conversation state dies with
				 * this call: park the handle on
				 * libpamtest's stateless conversation
				 * (prompts fail, messages are dropped). */
				pam_set_item(ph, PAM_CONV,
					     &pamtest_detached_conv);
				Py_CLEAR(kept_cap);
				kept_ph = ph;
				if (in_cap != NULL && ph == in_ph) {
					PyCapsule_SetContext(in_cap,
							     &handle_owned);
					kept_cap = Py_NewRef(in_cap);
				} else {
					kept_cap = handle_capsule_new(ph);
				}
				if (kept_cap == NULL) {
					rc = -1;
				}
			}
			if (kept_cap != NULL) {
				Py_XSETREF(tc->pam_handle, Py_NewRef(kept_cap));
			}
		}
	}
	Py_XDECREF(kept_cap);
	return rc;
}

/* Named integer constants, exported by the module. */
struct int_const {
	const char *name;
	long value;
};

#define C(x) {#x, (long)(x)}
/* PAM return codes (security/_pam_types.h): constants and error texts. */
static const struct int_const pam_codes[] = {
	C(PAM_SUCCESS),
	C(PAM_OPEN_ERR),
	C(PAM_SYMBOL_ERR),
	C(PAM_SERVICE_ERR),
	C(PAM_SYSTEM_ERR),
	C(PAM_BUF_ERR),
	C(PAM_PERM_DENIED),
	C(PAM_AUTH_ERR),
	C(PAM_CRED_INSUFFICIENT),
	C(PAM_AUTHINFO_UNAVAIL),
	C(PAM_USER_UNKNOWN),
	C(PAM_MAXTRIES),
	C(PAM_NEW_AUTHTOK_REQD),
	C(PAM_ACCT_EXPIRED),
	C(PAM_SESSION_ERR),
	C(PAM_CRED_UNAVAIL),
	C(PAM_CRED_EXPIRED),
	C(PAM_CRED_ERR),
	C(PAM_NO_MODULE_DATA),
	C(PAM_CONV_ERR),
	C(PAM_AUTHTOK_ERR),
	C(PAM_AUTHTOK_RECOVERY_ERR),
	C(PAM_AUTHTOK_LOCK_BUSY),
	C(PAM_AUTHTOK_DISABLE_AGING),
	C(PAM_TRY_AGAIN),
	C(PAM_IGNORE),
	C(PAM_ABORT),
	C(PAM_AUTHTOK_EXPIRED),
	C(PAM_MODULE_UNKNOWN),
	C(PAM_BAD_ITEM),
#if !defined(PWRAP_OPENPAM)	/* Linux-PAM's */
	C(PAM_CONV_AGAIN),
	C(PAM_INCOMPLETE),
#endif
};

/* The other integer constants of the module. */
static const struct int_const int_consts[] = {
	C(PAMTEST_AUTHENTICATE),
	C(PAMTEST_SETCRED),
	C(PAMTEST_ACCOUNT),
	C(PAMTEST_OPEN_SESSION),
	C(PAMTEST_CLOSE_SESSION),
	C(PAMTEST_CHAUTHTOK),
	C(PAMTEST_GETENVLIST),
	C(PAMTEST_KEEPHANDLE),
	{"PAMTEST_FLAG_ESTABLISH_CRED", PAM_ESTABLISH_CRED},
	{"PAMTEST_FLAG_DELETE_CRED", PAM_DELETE_CRED},
	{"PAMTEST_FLAG_REINITIALIZE_CRED", PAM_REINITIALIZE_CRED},
	{"PAMTEST_FLAG_REFRESH_CRED", PAM_REFRESH_CRED},
	C(PAMTEST_ERR_OK),
	C(PAMTEST_ERR_START),
	C(PAMTEST_ERR_CASE),
	C(PAMTEST_ERR_OP),
	C(PAMTEST_ERR_END),
	C(PAMTEST_ERR_KEEPHANDLE),
	C(PAMTEST_ERR_INTERNAL),
	C(PAMTEST_CONV_EVERY_CALL),
	C(PAMTEST_CONV_LONG_ANSWER_LEN),
	/* flags an application passes to the PAM calls */
	C(PAM_SILENT),
	C(PAM_DISALLOW_NULL_AUTHTOK),
	C(PAM_ESTABLISH_CRED),
	C(PAM_DELETE_CRED),
	C(PAM_REINITIALIZE_CRED),
	C(PAM_REFRESH_CRED),
	C(PAM_CHANGE_EXPIRED_AUTHTOK),
};
#undef C

/* "PAM_AUTH_ERR" for 7; NULL for a value that is no PAM return code. */
static const char *pam_code_name(int rv)
{
	for (size_t i = 0; i < sizeof(pam_codes) / sizeof(pam_codes[0]); i++) {
		if (pam_codes[i].value == rv) {
			return pam_codes[i].name;
		}
	}
	return NULL;
}

static void raise_pamtest_error(enum pamtest_err perr,
				struct pam_testcase *cases, size_t n)
{
	const struct pam_testcase *failed = NULL;
	PyObject *args = NULL;

	if (perr == PAMTEST_ERR_CASE) {
		failed = _pamtest_failed_case(cases, n);
	}
	if (failed != NULL) {
		/* Upstream's text, which tests match, then the code's name. */
		const char *name = pam_code_name(failed->op_rv);

		PyErr_Format(PamTestError,
			     "Error [%d]: Test case { pam_operation [%d] "
			     "expected_rv [%d] flags [%d] } returned [%d]%s%s%s",
			     (int)perr, (int)failed->pam_operation,
			     failed->expected_rv, failed->flags,
			     failed->op_rv, name != NULL ? " (" : "",
			     name != NULL ? name : "", name != NULL ? ")" : "");
		return;
	}
	args = Py_BuildValue("(is)", (int)perr, pamtest_strerror(perr));
	if (args != NULL) {
		PyErr_SetObject(PamTestError, args);
		Py_DECREF(args);
	}
}

/*
 * The test asked for the wrapper (PAM_WRAPPER=1 and a service directory)
 * but this python was started without it: PamTestError(PAMTEST_ERR_START,
 * text naming LD_PRELOAD and libpam_wrapper.so).
 */
static void raise_preload_missing(void)
{
	PyObject *args = Py_BuildValue("(is)", (int)PAMTEST_ERR_START,
				       PAMTEST_PRELOAD_MISSING_MSG);

	if (args != NULL) {
		PyErr_SetObject(PamTestError, args);
		Py_DECREF(args);
	}
}

/*
 * A conversation call number argument (conv_..._at): None or an int from 0
 * (never) to PAMTEST_CONV_EVERY_CALL.  bool is refused: True would mean
 * "call 1", which is never what it looks like.
 */
static int call_number_arg(PyObject *obj, const char *name, unsigned int *out)
{
	unsigned long v;

	if (obj == NULL || obj == Py_None) {
		return 0;
	}
	if (PyBool_Check(obj) || !PyLong_Check(obj)) {
		PyErr_Format(PyExc_TypeError,
			     "%s must be an int (a conversation call number, "
			     "1 for the first), not %.100s",
			     name, Py_TYPE(obj)->tp_name);
		return -1;
	}
	v = PyLong_AsUnsignedLong(obj);
	if (v == (unsigned long)-1 && PyErr_Occurred()) {
		if (PyErr_ExceptionMatches(PyExc_OverflowError)) {
			PyErr_Clear();
			PyErr_Format(PyExc_ValueError,
				     "%s must be between 0 (never) and "
				     "PAMTEST_CONV_EVERY_CALL (%u)",
				     name, PAMTEST_CONV_EVERY_CALL);
		}
		return -1;
	}
	if (v > UINT_MAX) {
		PyErr_Format(PyExc_ValueError,
			     "%s must be between 0 (never) and "
			     "PAMTEST_CONV_EVERY_CALL (%u)",
			     name, PAMTEST_CONV_EVERY_CALL);
		return -1;
	}
	*out = (unsigned int)v;
	return 0;
}

/*
 * The conv_* keyword arguments of run_pamtest() as libpamtest's faults.
 * *any is set when one of them asks for a fault.
 */
static int faults_from_args(PyObject *fail_at, PyObject *fail_code,
			    PyObject *null_resp_at, PyObject *null_entry_at,
			    int long_answer, PyObject *long_answer_at,
			    PyObject *long_answer_len,
			    struct pamtest_conv_faults *f, bool *any)
{
	memset(f, 0, sizeof(*f));
	if (call_number_arg(fail_at, "conv_fail_at", &f->fail_at) != 0 ||
	    call_number_arg(null_resp_at, "conv_null_resp_at",
			    &f->null_resp_at) != 0 ||
	    call_number_arg(null_entry_at, "conv_null_entry_at",
			    &f->null_entry_at) != 0 ||
	    call_number_arg(long_answer_at, "conv_long_answer_at",
			    &f->long_answer_at) != 0) {
		return -1;
	}
	if (long_answer) {
		if (f->long_answer_at != 0) {
			PyErr_SetString(PyExc_TypeError,
					"give conv_long_answer=True (every "
					"call) or conv_long_answer_at=N, not "
					"both");
			return -1;
		}
		f->long_answer_at = PAMTEST_CONV_EVERY_CALL;
	}
	f->fail_code = PAM_CONV_ERR;
	if (fail_code != NULL && fail_code != Py_None) {
		long code;

		if (PyBool_Check(fail_code) || !PyLong_Check(fail_code)) {
			PyErr_Format(PyExc_TypeError,
				     "conv_fail_code must be an int (a PAM "
				     "return code), not %.100s",
				     Py_TYPE(fail_code)->tp_name);
			return -1;
		}
		code = PyLong_AsLong(fail_code);
		if (code == -1 && PyErr_Occurred()) {
			return -1;
		}
		if (code == PAM_SUCCESS || code < INT_MIN || code > INT_MAX) {
			PyErr_SetString(PyExc_ValueError,
					"conv_fail_code must be a PAM error "
					"code (not PAM_SUCCESS: that is "
					"conv_null_resp_at)");
			return -1;
		}
		f->fail_code = (int)code;
	}
	if (long_answer_len != NULL && long_answer_len != Py_None) {
		Py_ssize_t len;

		if (PyBool_Check(long_answer_len) ||
		    !PyLong_Check(long_answer_len)) {
			PyErr_Format(PyExc_TypeError,
				     "conv_long_answer_len must be an int, "
				     "not %.100s",
				     Py_TYPE(long_answer_len)->tp_name);
			return -1;
		}
		len = PyLong_AsSsize_t(long_answer_len);
		if (len == -1 && PyErr_Occurred()) {
			return -1;
		}
		/* 16 MiB: a long answer, not a memory exhaustion test. */
		if (len < 1 || len > (Py_ssize_t)1 << 24) {
			PyErr_SetString(PyExc_ValueError,
					"conv_long_answer_len must be between "
					"1 and 16777216");
			return -1;
		}
		f->long_answer_len = (size_t)len;
	}
	*any = f->fail_at != 0 || f->null_resp_at != 0 ||
	       f->null_entry_at != 0 || f->long_answer_at != 0;
	return 0;
}

PyDoc_STRVAR(run_pamtest_doc,
	     "run_pamtest(username, service, tests, echo_off=None, "
	     "echo_on=None, handle=None, *, conv_fail_at=0, "
	     "conv_fail_code=None, conv_null_resp_at=0, "
	     "conv_null_entry_at=0, conv_long_answer=False, "
	     "conv_long_answer_at=0, conv_long_answer_len=None, "
	     "trace=False)\n--\n\n"
	     "Runs the TestCase list as one PAM transaction of service for "
	     "username.\nPrompts are answered in order from echo_off "
	     "(PAM_PROMPT_ECHO_OFF) and echo_on\n(PAM_PROMPT_ECHO_ON); when "
	     "the answers run out a prompt gets a NULL answer.\nhandle is a "
	     "pam_handle capsule from a PAMTEST_KEEPHANDLE case; the run "
	     "takes it over.\nRaises PamTestError when a case returns other "
	     "than its expected_rv or the\ntransaction cannot run.\n\n"
	     "The conv_* arguments make the conversation misbehave; calls "
	     "are numbered from 1\nacross the run (PAMTEST_CONV_EVERY_CALL: "
	     "every call).  conv_fail_at: that call\nreturns conv_fail_code "
	     "(None: PAM_CONV_ERR); conv_null_resp_at: it returns\n"
	     "PAM_SUCCESS with no response array; conv_null_entry_at: with "
	     "NULL answers;\nconv_long_answer (every call) or "
	     "conv_long_answer_at: its prompts are answered\nwith "
	     "conv_long_answer_len characters (default "
	     "PAMTEST_CONV_LONG_ANSWER_LEN).\nA faulted call uses no answer "
	     "and records no message, except that a\nlong-answer call "
	     "records its messages.\n\ntrace=True: the wrapper's module "
	     "trace of the run (PAM_WRAPPER_TRACE) becomes\nthe result's "
	     ".trace (also the PamTestError's), a list of dicts, one per "
	     "record.");

static PyObject *py_run_pamtest(PyObject *Py_UNUSED(module), PyObject *args,
			     PyObject *kwds)
{
	static char *kwlist[] = {"username", "service", "tests", "echo_off",
				 "echo_on", "handle", "conv_fail_at",
				 "conv_fail_code", "conv_null_resp_at",
				 "conv_null_entry_at", "conv_long_answer",
				 "conv_long_answer_at", "conv_long_answer_len",
				 "trace", NULL};
	const char *user = NULL;
	const char *service = NULL;
	PyObject *tests_arg = NULL;
	PyObject *echo_off_arg = Py_None;
	PyObject *echo_on_arg = Py_None;
	PyObject *handle_arg = Py_None;
	PyObject *fail_at = NULL;
	PyObject *fail_code = NULL;
	PyObject *null_resp_at = NULL;
	PyObject *null_entry_at = NULL;
	int long_answer = 0;
	PyObject *long_answer_at = NULL;
	PyObject *long_answer_len = NULL;
	int want_trace = 0;
	struct pyp_trace tr;
	PyObject *records = NULL;
	struct pamtest_conv_faults faults;
	bool any_fault = false;
	PyObject *tests = NULL;
	PyObject *in_cap = NULL;
	pam_handle_t *in_ph = NULL;
	struct pam_testcase *cases = NULL;
	char **echo_off = NULL; /* NULL-terminated copies, wiped when freed */
	char **echo_on = NULL;
	struct messages msgs;
	struct pamtest_conv_data data;
	struct pamtest_conv_state state;
	enum pamtest_err perr;
	size_t n = 0;
	PyObject *result = NULL;
	PyObject *info = NULL;
	PyObject *errors = NULL;
	TestResultObject *res = NULL;
	int out_rc;

	memset(&msgs, 0, sizeof(msgs));
	memset(&tr, 0, sizeof(tr));

	if (!PyArg_ParseTupleAndKeywords(args, kwds,
					 "zsO|OOO$OOOOpOOp:run_pamtest",
					 kwlist, &user, &service, &tests_arg,
					 &echo_off_arg, &echo_on_arg,
					 &handle_arg, &fail_at, &fail_code,
					 &null_resp_at, &null_entry_at,
					 &long_answer, &long_answer_at,
					 &long_answer_len, &want_trace)) {
		return NULL;
	}
	if (faults_from_args(fail_at, fail_code, null_resp_at, null_entry_at,
			     long_answer, long_answer_at, long_answer_len,
			     &faults, &any_fault) != 0) {
		return NULL;
	}

	tests = sequence_arg(tests_arg, "tests");
	if (tests == NULL) {
		goto out;
	}
	n = (size_t)PyTuple_GET_SIZE(tests);
	cases = calloc(n > 0 ? n : 1, sizeof(*cases));
	if (cases == NULL) {
		PyErr_NoMemory();
		goto out;
	}
	for (size_t i = 0; i < n; i++) {
		PyObject *item = PyTuple_GET_ITEM(tests, (Py_ssize_t)i);
		TestCaseObject *tc = (TestCaseObject *)item;

		if (!PyObject_TypeCheck(item, &TestCaseType)) {
			PyErr_Format(PyExc_TypeError,
				     "tests[%zu] must be a TestCase, not %.100s",
				     i, Py_TYPE(item)->tp_name);
			goto out;
		}
		cases[i].pam_operation = (enum pamtest_ops)tc->pam_operation;
		cases[i].expected_rv = tc->expected_rv;
		cases[i].flags = tc->flags;
	}

	if (copy_answers(echo_off_arg, "echo_off", &echo_off) != 0 ||
	    copy_answers(echo_on_arg, "echo_on", &echo_on) != 0) {
		goto out;
	}
	/* Messages go to msgs, so data's buffers stay NULL. */
	data = (struct pamtest_conv_data){
		.in_echo_off = (const char **)echo_off,
		.in_echo_on = (const char **)echo_on,
	};
	state = (struct pamtest_conv_state){
		.data = &data,
		.sink = collect_message,
		.sink_ctx = &msgs,
	};

	if (handle_arg == Py_None && pamtest_preload_missing()) {
		/* Not libpamtest's stderr line: the exception says it. */
		raise_preload_missing();
		goto out;
	}
	if (handle_arg != Py_None) {
		if (!PyCapsule_IsValid(handle_arg, HANDLE_CAPSULE_NAME)) {
			PyErr_Format(PyExc_TypeError,
				     "handle must be the pam_handle of a "
				     "PAMTEST_KEEPHANDLE case, not %.100s",
				     Py_TYPE(handle_arg)->tp_name);
			goto out;
		}
		if (PyCapsule_GetContext(handle_arg) != &handle_owned) {
			PyErr_SetString(PyExc_ValueError,
					"handle was already passed to "
					"run_pamtest and its PAM handle ended");
			goto out;
		}
		in_cap = Py_NewRef(handle_arg);
		in_ph = PyCapsule_GetPointer(in_cap, HANDLE_CAPSULE_NAME);
		/* From here libpamtest owns the handle (see header); it
		 * installs this run's conversation on it. */
		PyCapsule_SetContext(in_cap, NULL);
	}
	if (want_trace && pyp_trace_begin(&tr) != 0) {
		goto out;
	}

	Py_BEGIN_ALLOW_THREADS
	/* No fault asked: the plain call, exactly as before. */
	perr = _pamtest_conv_faults(service, user, pamtest_builtin_conv,
				    &state, any_fault ? &faults : NULL, cases,
				    n, in_ph);
	Py_END_ALLOW_THREADS

	if (want_trace && (records = pyp_trace_end(&tr)) == NULL) {
		goto out;
	}
	out_rc = collect_case_outputs(tests, cases, n, in_cap, in_ph);
	if (out_rc != 0) {
		goto out;
	}
	if (state.oom) {
		PyErr_NoMemory();
		goto out;
	}
	if (perr != PAMTEST_ERR_OK) {
		raise_pamtest_error(perr, cases, n);
		pyp_trace_attach(records);
		goto out;
	}

	info = str_list_to_tuple(&msgs.info);
	errors = str_list_to_tuple(&msgs.errors);
	if (info == NULL || errors == NULL) {
		goto out;
	}
	res = PyObject_New(TestResultObject, &TestResultType);
	if (res == NULL) {
		goto out;
	}
	res->info = info;
	res->errors = errors;
	res->trace = records != NULL ? records : Py_NewRef(Py_None);
	records = NULL;
	info = NULL;
	errors = NULL;
	result = (PyObject *)res;
out:
	pyp_trace_abandon(&tr);
	Py_XDECREF(records);
	Py_XDECREF(info);
	Py_XDECREF(errors);
	answers_free(echo_off);
	answers_free(echo_on);
	str_list_free(&msgs.info);
	str_list_free(&msgs.errors);
	free(cases);
	Py_XDECREF(in_cap);
	Py_XDECREF(tests);
	return result;
}

/* ------------------------------------------------------------------ */
/* Module                                                              */

PyDoc_STRVAR(read_trace_doc,
	     "read_trace(path)\n--\n\n"
	     "The records of a module trace file (PAM_WRAPPER_TRACE in json "
	     "format), a list\nof dicts, one per line (doc/trace-format.md).");

static PyObject *py_read_trace(PyObject *Py_UNUSED(module), PyObject *arg)
{
	PyObject *bytes = NULL;
	PyObject *records;

	if (!PyUnicode_FSConverter(arg, &bytes)) {
		return NULL;
	}
	records = pyp_read_trace_file(PyBytes_AS_STRING(bytes), false);
	Py_DECREF(bytes);
	return records;
}

static PyMethodDef pypamtest_methods[] = {
	{"run_pamtest", (PyCFunction)(void (*)(void))py_run_pamtest,
	 METH_VARARGS | METH_KEYWORDS, run_pamtest_doc},
	{"read_trace", py_read_trace, METH_O, read_trace_doc},
	{"explore", (PyCFunction)(void (*)(void))pwrap_py_explore,
	 METH_VARARGS | METH_KEYWORDS, pwrap_py_explore_doc},
	{"tool_path", pwrap_py_tool_path, METH_O, pwrap_py_tool_path_doc},
	{NULL, NULL, 0, NULL},
};

PyDoc_STRVAR(pypamtest_doc,
	     "Python bindings of libpamtest: run PAM transactions in tests.");

static struct PyModuleDef pypamtest_module = {
	PyModuleDef_HEAD_INIT,
	.m_name = "pypamtest",
	.m_doc = pypamtest_doc,
	.m_size = -1,
	.m_methods = pypamtest_methods,
};


/*
 * Python snapshots the environment into os.environ at start-up, before any
 * pam_start, but tests written for upstream read PAM_WRAPPER_RUNTIME_DIR
 * from os.environ as soon as they import us.  When the preloaded wrapper
 * offers pam_wrapper_runtime_dir(), create the directory now and publish it.
 */
static int publish_runtime_dir(void)
{
	const char *(*rd)(void) = NULL;
	const char *dir;
	PyObject *os = NULL;
	PyObject *env_map = NULL;
	PyObject *key = NULL;
	PyObject *value = NULL;
	int rc = -1;

	*(void **)&rd = dlsym(RTLD_DEFAULT, "pam_wrapper_runtime_dir");
	if (rd == NULL || (dir = rd()) == NULL) {
		return 0;	/* not wrapped, or an upstream wrapper */
	}
	os = PyImport_ImportModule("os");
	env_map = os ? PyObject_GetAttrString(os, "environ") : NULL;
	key = env_map ? PyUnicode_FromString("PAM_WRAPPER_RUNTIME_DIR") : NULL;
	value = key ? PyUnicode_DecodeFSDefault(dir) : NULL;
	if (value != NULL && PyObject_SetItem(env_map, key, value) == 0) {
		rc = 0;
	}
	Py_XDECREF(value);
	Py_XDECREF(key);
	Py_XDECREF(env_map);
	Py_XDECREF(os);
	return rc;
}

PyMODINIT_FUNC PyInit_pypamtest(void)
{
	PyObject *m = NULL;

	if (PyType_Ready(&TestCaseType) < 0 ||
	    PyType_Ready(&TestResultType) < 0) {
		return NULL;
	}
	m = PyModule_Create(&pypamtest_module);
	if (m == NULL) {
		return NULL;
	}
	if (PamTestError == NULL) {
		PamTestError = PyErr_NewExceptionWithDoc(
			"pypamtest.PamTestError",
			"A PAM transaction failed: a test case returned other "
			"than its expected_rv\n(args: one message ending in "
			"\"returned [7] (PAM_AUTH_ERR)\"), or libpamtest\n"
			"could not run the transaction (args: code, text; "
			"e.g. PAM_WRAPPER=1 without\nlibpam_wrapper.so in "
			"LD_PRELOAD).",
			PyExc_OSError, NULL);
		if (PamTestError == NULL) {
			goto fail;
		}
	}
	if (PyModule_AddObjectRef(m, "PamTestError", PamTestError) < 0 ||
	    PyModule_AddObjectRef(m, "TestCase", (PyObject *)&TestCaseType) < 0 ||
	    PyModule_AddObjectRef(m, "TestResult",
				  (PyObject *)&TestResultType) < 0) {
		goto fail;
	}
	for (size_t i = 0; i < sizeof(int_consts) / sizeof(int_consts[0]); i++) {
		if (PyModule_AddIntConstant(m, int_consts[i].name,
					    int_consts[i].value) < 0) {
			goto fail;
		}
	}
	for (size_t i = 0; i < sizeof(pam_codes) / sizeof(pam_codes[0]); i++) {
		if (PyModule_AddIntConstant(m, pam_codes[i].name,
					    pam_codes[i].value) < 0) {
			goto fail;
		}
	}
	if (publish_runtime_dir() < 0) {
		goto fail;
	}
	return m;
fail:
	Py_DECREF(m);
	return NULL;
}
