/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pypamtest.explore(): `pamtest explore -f json` (pamtest-explore(1)) run
 * as a child process, its json returned as Python objects.  The explorer
 * replays the stack on libpam with libpam_wrapper.so, which a child of a
 * wrapped Python inherits through LD_PRELOAD (and which pamtest preloads
 * itself otherwise).
 *
 * pamtest is $PAM_WRAPPER_PAMTEST, else found relative to this module: the
 * build tree's bin/ or the installed bindir, else on PATH (find_tool(),
 * which also gives pypamtest.tool_path(): the pytest fixture's
 * use_system() runs pam_wrapper(1) --prepare).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>	/* first: it defines _GNU_SOURCE */

#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <spawn.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pypamtest_explore.h"

#ifndef PWRAP_PY_REL_BINDIRS
#define PWRAP_PY_REL_BINDIRS "../bin"
#endif

extern char **environ;

const char pwrap_py_explore_doc[] =
"explore(service, type='all', service_dir=None, system=False, outcomes=None,\n"
"        model=None, must=None, replay=True, replay_all=False)\n"
"\n"
"The decision table of a PAM stack (pamtest-explore(1)): every outcome of\n"
"every module, checked on the real libpam.  service_dir defaults to\n"
"$PAM_WRAPPER_SERVICE_DIR; system=True reads /etc/pam.d instead.\n"
"outcomes: codes every module may return (str 'success,auth_err' or a\n"
"list); model: {module or 'file:line': codes}; must: the modules that\n"
"must decide (str or list).  Returns the explorer's json: a dict with\n"
"'service', 'type', 'table', 'paths' and 'findings' for one type, a list\n"
"of four for type='all'.  Raises RuntimeError when the explorer fails\n"
"(a service it cannot read, a replay that disagrees with its graph).";

/* The tool NAME (pamtest, pam_wrapper) next to this module (build tree or
 * install), else NAME (found on PATH); $ENV when set.  Malloc'd. */
static char *find_tool(const char *name, const char *env_name)
{
	const char *env = getenv(env_name);
	char rels[] = PWRAP_PY_REL_BINDIRS, *save = NULL;
	Dl_info info;
	char *dir = NULL, *slash, *p = NULL;

	if (env != NULL && *env != '\0') {
		return strdup(env);
	}
	if (dladdr((void *)find_tool, &info) != 0 && info.dli_fname != NULL &&
	    (dir = realpath(info.dli_fname, NULL)) != NULL &&
	    (slash = strrchr(dir, '/')) != NULL) {
		*slash = '\0';
		for (char *r = strtok_r(rels, ":", &save); r != NULL;
		     r = strtok_r(NULL, ":", &save)) {
			int n = r[0] == '/' ? asprintf(&p, "%s/%s", r, name)
					    : asprintf(&p, "%s/%s/%s", dir, r, name);

			if (n < 0) {
				p = NULL;
				break;
			}
			if (access(p, X_OK) == 0) {
				break;
			}
			free(p);
			p = NULL;
		}
	}
	free(dir);
	return p != NULL ? p : strdup(name);
}

const char pwrap_py_tool_path_doc[] =
"tool_path(name)\n"
"\n"
"The path of pam_wrapper's command name ('pamtest' or 'pam_wrapper') that\n"
"belongs to this pypamtest: $PAM_WRAPPER_PAMTEST (or $PAM_WRAPPER_LAUNCHER)\n"
"when set, else the one of its build tree or installation, else the bare\n"
"name (looked up on PATH when run).";

PyObject *pwrap_py_tool_path(PyObject *self, PyObject *arg)
{
	const char *name = PyUnicode_Check(arg) ? PyUnicode_AsUTF8(arg) : NULL;
	char *p;
	PyObject *r;

	(void)self;
	if (name == NULL || (strcmp(name, "pamtest") != 0 &&
			     strcmp(name, "pam_wrapper") != 0)) {
		if (!PyErr_Occurred()) {
			PyErr_SetString(PyExc_ValueError, "tool_path: 'pamtest' "
					"or 'pam_wrapper'");
		}
		return NULL;
	}
	p = find_tool(name, strcmp(name, "pamtest") == 0 ? "PAM_WRAPPER_PAMTEST"
							  : "PAM_WRAPPER_LAUNCHER");
	if (p == NULL) {
		return PyErr_NoMemory();
	}
	r = PyUnicode_DecodeFSDefault(p);
	free(p);
	return r;
}

/* Appends the C string s to the list argv.  0 or -1. */
static int append(PyObject *argv, const char *s)
{
	PyObject *o = PyUnicode_DecodeFSDefault(s);
	int rc = o != NULL ? PyList_Append(argv, o) : -1;

	Py_XDECREF(o);
	return rc;
}

/* codes as one str: itself, or its items joined with ','.  New reference. */
static PyObject *codes_str(PyObject *codes)
{
	PyObject *sep, *r;

	if (PyUnicode_Check(codes)) {
		Py_INCREF(codes);
		return codes;
	}
	sep = PyUnicode_FromString(",");
	r = sep != NULL ? PyUnicode_Join(sep, codes) : NULL;
	Py_XDECREF(sep);
	return r;
}

/* Appends opt and str o, or opt and each item of a list, to argv. */
static int add_args(PyObject *argv, const char *opt, PyObject *o)
{
	PyObject *seq;
	int rc = 0;

	if (o == NULL || o == Py_None) {
		return 0;
	}
	if (PyUnicode_Check(o)) {
		return append(argv, opt) != 0 || PyList_Append(argv, o) != 0 ? -1 : 0;
	}
	seq = PySequence_Fast(o, "expected a str or a list of str");
	if (seq == NULL) {
		return -1;
	}
	for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(seq) && rc == 0; i++) {
		PyObject *it = PySequence_Fast_GET_ITEM(seq, i);

		if (!PyUnicode_Check(it)) {
			PyErr_SetString(PyExc_TypeError, "expected a str or a list of str");
			rc = -1;
		} else {
			rc = append(argv, opt) != 0 || PyList_Append(argv, it) != 0 ? -1 : 0;
		}
	}
	Py_DECREF(seq);
	return rc;
}

/* model: {module or "file:line": codes} or a list of "module=codes". */
static int add_model(PyObject *argv, PyObject *model)
{
	PyObject *k, *v;
	Py_ssize_t pos = 0;

	if (model == NULL || model == Py_None || !PyDict_Check(model)) {
		return add_args(argv, "--model", model);
	}
	while (PyDict_Next(model, &pos, &k, &v)) {
		PyObject *codes = codes_str(v);
		PyObject *s = codes != NULL ? PyUnicode_FromFormat("%S=%S", k, codes)
					    : NULL;
		int rc = s != NULL ? add_args(argv, "--model", s) : -1;

		Py_XDECREF(codes);
		Py_XDECREF(s);
		if (rc != 0) {
			return -1;
		}
	}
	return 0;
}

/* Runs argv, gathering stdout and stderr; the exit status, or -1. */
static int run(char **argv, char **out, size_t *outlen, char **err)
{
	posix_spawn_file_actions_t fa;
	int po[2] = { -1, -1 }, pe[2] = { -1, -1 }, st = -1;
	size_t len[2] = { 0, 0 }, cap[2] = { 0, 0 };
	char *buf[2] = { NULL, NULL };
	pid_t pid;

	if (pipe2(po, O_CLOEXEC) != 0 || pipe2(pe, O_CLOEXEC) != 0 ||
	    posix_spawn_file_actions_init(&fa) != 0) {
		goto out;
	}
	posix_spawn_file_actions_adddup2(&fa, po[1], 1);
	posix_spawn_file_actions_adddup2(&fa, pe[1], 2);
	if (posix_spawnp(&pid, argv[0], &fa, NULL, argv, environ) != 0) {
		posix_spawn_file_actions_destroy(&fa);
		goto out;
	}
	posix_spawn_file_actions_destroy(&fa);
	close(po[1]);
	close(pe[1]);
	po[1] = pe[1] = -1;
	for (int open = 2; open > 0;) {
		struct pollfd p[2] = { { po[0], POLLIN, 0 }, { pe[0], POLLIN, 0 } };

		if (poll(p, 2, -1) < 0 && errno != EINTR) {
			break;
		}
		for (int i = 0; i < 2; i++) {
			ssize_t n;

			if (p[i].fd < 0 || p[i].revents == 0) {
				continue;
			}
			if (len[i] + 4096 + 1 > cap[i]) {
				char *nb = realloc(buf[i], cap[i] = (cap[i] + 4096) * 2);

				if (nb == NULL) {
					goto reap;
				}
				buf[i] = nb;
			}
			n = read(p[i].fd, buf[i] + len[i], 4096);
			if (n > 0) {
				len[i] += (size_t)n;
			} else if (n == 0 || errno != EINTR) {
				close(i ? pe[0] : po[0]);
				*(i ? &pe[0] : &po[0]) = -1;
				open--;
			}
		}
	}
reap:
	while (waitpid(pid, &st, 0) < 0 && errno == EINTR) {
		;
	}
	st = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
out:
	for (int i = 0; i < 2; i++) {
		if (buf[i] == NULL) {
			buf[i] = malloc(1);
		}
		if (buf[i] != NULL) {
			buf[i][len[i]] = '\0';
		}
	}
	*out = buf[0];
	*outlen = len[0];
	*err = buf[1];
	for (int i = 0; i < 2; i++) {
		if (po[i] >= 0) {
			close(po[i]);
		}
		if (pe[i] >= 0) {
			close(pe[i]);
		}
	}
	return st;
}

PyObject *pwrap_py_explore(PyObject *self, PyObject *args, PyObject *kwargs)
{
	static char *kwlist[] = { "service", "type", "service_dir", "system",
				  "outcomes", "model", "must", "replay",
				  "replay_all", NULL };
	const char *service, *type = "all", *dir = NULL;
	int system = 0, replay = 1, replay_all = 0, st;
	PyObject *outcomes = NULL, *model = NULL, *must = NULL, *argv = NULL;
	PyObject *result = NULL, *json = NULL;
	char **cargv = NULL, *out = NULL, *err = NULL, *pamtest = NULL;
	size_t outlen = 0;
	Py_ssize_t n;

	(void)self;
	if (!PyArg_ParseTupleAndKeywords(
		    args, kwargs, "s|szpOOOpp", kwlist, &service, &type, &dir,
		    &system, &outcomes, &model, &must, &replay, &replay_all)) {
		return NULL;
	}
	if (dir == NULL && !system) {
		dir = getenv("PAM_WRAPPER_SERVICE_DIR");
	}
	if (dir == NULL && !system) {
		PyErr_SetString(PyExc_ValueError, "explore: give service_dir (or "
				"set PAM_WRAPPER_SERVICE_DIR) or system=True");
		return NULL;
	}
	pamtest = find_tool("pamtest", "PAM_WRAPPER_PAMTEST");
	argv = PyList_New(0);
	if (argv == NULL || pamtest == NULL || append(argv, pamtest) != 0 ||
	    append(argv, "explore") != 0 || append(argv, "-f") != 0 ||
	    append(argv, "json") != 0 || append(argv, "-t") != 0 ||
	    append(argv, type) != 0 ||
	    (system ? append(argv, "--system")
		    : append(argv, "-d") || append(argv, dir)) != 0 ||
	    (!replay && append(argv, "--no-replay") != 0) ||
	    (replay_all && append(argv, "--replay-all") != 0) ||
	    add_model(argv, model) != 0 ||
	    add_args(argv, "--must", must) != 0) {
		goto out;
	}
	if (outcomes != NULL && outcomes != Py_None) {
		PyObject *o = codes_str(outcomes);
		int rc = o != NULL ? add_args(argv, "--outcomes", o) : -1;

		Py_XDECREF(o);
		if (rc != 0) {
			goto out;
		}
	}
	/* the service last, after "--" (a name may begin with '-') */
	if (append(argv, "--") != 0 || append(argv, service) != 0) {
		goto out;
	}
	n = PyList_GET_SIZE(argv);
	cargv = calloc((size_t)n + 1, sizeof(*cargv));
	if (cargv == NULL) {
		PyErr_NoMemory();
		goto out;
	}
	for (Py_ssize_t i = 0; i < n; i++) {
		PyObject *b = PyUnicode_EncodeFSDefault(PyList_GET_ITEM(argv, i));

		if (b == NULL || (cargv[i] = strdup(PyBytes_AS_STRING(b))) == NULL) {
			Py_XDECREF(b);
			PyErr_NoMemory();
			goto out;
		}
		Py_DECREF(b);
	}
	Py_BEGIN_ALLOW_THREADS
	st = run(cargv, &out, &outlen, &err);
	Py_END_ALLOW_THREADS
	if (st < 0 || out == NULL || err == NULL) {
		PyErr_Format(PyExc_RuntimeError, "explore: cannot run %s", cargv[0]);
		goto out;
	}
	if (st != 0 && st != 1) {
		PyErr_Format(PyExc_RuntimeError, "explore: %s exited with %d: %s",
			     cargv[0], st, err);
		goto out;
	}
	json = PyImport_ImportModule("json");
	if (json != NULL) {
		result = PyObject_CallMethod(json, "loads", "s#", out, (Py_ssize_t)outlen);
	}
out:
	for (Py_ssize_t i = 0; cargv != NULL && cargv[i] != NULL; i++) {
		free(cargv[i]);
	}
	free(cargv);
	free(out);
	free(err);
	free(pamtest);
	Py_XDECREF(json);
	Py_XDECREF(argv);
	return result;
}
