/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_wrapper(1): run a command with libpam_wrapper.so set up.
 *
 *   pam_wrapper --service-dir DIR -- ./app
 *   pam_wrapper --user bob:secret[:service[:flags]] --service myapp -- ./app
 *
 * With --user the launcher makes a private directory (mkdtemp below $TMPDIR)
 * holding a pam_matrix passdb and one service file per service, optionally
 * nss_wrapper passwd/group files (--nss), runs the command with LD_PRELOAD,
 * PAM_WRAPPER=1 and PAM_WRAPPER_SERVICE_DIR set, forwards every signal that
 * would end the launcher to it (pwrap_guard.c), removes the directory and
 * exits with the command's status (128+N when it died of signal N; 126/127
 * when it could not run).  Before anything is made, the launcher starts
 * itself again under the LD_PRELOAD the command gets and refuses to run the
 * command when the wrapper is not loaded then (as pamtest does).  Usage
 * errors exit 2.  Passwords only ever go into the passdb file.
 */
#define _GNU_SOURCE
#include "pwrap_guard.h"
#include "pwrap_tool.h"

#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#ifndef PWRAP_VERSION
#define PWRAP_VERSION "unknown"
#endif

#define EXIT_USAGE 2
/* Set while the launcher starts itself again under LD_PRELOAD. */
#define REEXEC_MARK "PWRAP_LAUNCHER_WRAPPED"

struct user {
	char *name;     /* points into the malloc'd copy `spec` */
	char *password; /* idem; wiped when done */
	char *service;  /* idem; NULL when not given */
	char *flags;    /* idem: pam_matrix account flags; NULL when none */
	char *spec;     /* owned */
};

struct opts {
	const char *service_dir;
	const char *lib;
	const char *moddir;
	const char *debug;
	const char *trace;	/* --trace: PAM_WRAPPER_TRACE */
	const char *trace_format;
	int keep;
	int nss;
	int syslog;
	struct user *users;
	size_t nusers;
	const char **services;
	size_t nservices;
};

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pam_wrapper [options] [--] command [arg...]\n"
		"Run command with libpam_wrapper.so preloaded and PAM_WRAPPER=1.\n"
		"\n"
		"  -d, --service-dir DIR    PAM service files are read from DIR\n"
		"  -u, --user U:P[:SVC[:FLAGS]]\n"
		"                           let user U log in with password P (pam_matrix);\n"
		"                           repeatable; SVC limits the user to that service;\n"
		"                           FLAGS: expired, must_change, locked (comma list)\n"
		"  -s, --service NAME       write a pam_matrix service file NAME (repeatable;\n"
		"                           default: the services named by --user)\n"
		"  -n, --nss                also add the users through nss_wrapper\n"
		"  -D, --debug LEVEL        PAM_WRAPPER_DEBUGLEVEL (0-3)\n"
		"  -S, --syslog             PAM_WRAPPER_USE_SYSLOG=1\n"
		"  -t, --trace FILE         record every module call in FILE ('-': stderr)\n"
		"                           (PAM_WRAPPER_TRACE)\n"
		"      --trace-format FMT   json (default) or text\n"
		"  -k, --keep               keep the private directory and print its path\n"
		"  -l, --lib PATH           libpam_wrapper.so to preload\n"
		"  -m, --module-dir DIR     directory of pam_matrix.so and the other modules\n"
		"  -h, --help               this help\n"
		"  -V, --version            print the version\n"
		"\n"
		"Exit status: the command's; 128+N if it was killed by signal N;\n"
		"126/127 if it could not be run; 2 for usage errors.\n");
}

/* A service the launcher writes a file and passdb lines for. */
static void check_service(const char *opt, const char *name)
{
	const char *why;

	if (!pwrap_valid_service_name(name))
		errx(EXIT_USAGE, "%s: invalid service name \"%s\" (no '/', ':' or "
		     "blank, not starting with '.')", opt, name);
	if ((why = pwrap_service_case_problem(name)) != NULL)
		errx(EXIT_USAGE, "%s: invalid service name \"%s\": %s", opt, name, why);
}

static void parse_user(struct opts *o, const char *arg)
{
	struct user u = {0};
	const char *why;
	char *p;

	u.spec = strdup(arg);
	if (u.spec == NULL)
		err(EXIT_USAGE, "out of memory");
	u.name = u.spec;
	p = strchr(u.spec, ':');
	if (p == NULL)
		errx(EXIT_USAGE, "--user %.*s...: expected USER:PASSWORD[:SERVICE[:FLAGS]]",
		     (int)strcspn(arg, ":"), arg);
	*p++ = '\0';
	u.password = p;
	p = strchr(p, ':');
	if (p != NULL) {
		*p++ = '\0';
		u.service = p;
		p = strchr(u.service, ':');
		if (p != NULL) {
			*p++ = '\0';
			u.flags = p;
			if (strchr(u.flags, ':') != NULL)
				errx(EXIT_USAGE, "--user %s: too many ':' (expected "
				     "USER:PASSWORD[:SERVICE[:FLAGS]]; a passdb "
				     "password cannot contain ':')", u.name);
			if (!tool_valid_account_flags(u.flags))
				errx(EXIT_USAGE, "--user %s: unknown account flag in "
				     "\"%s\" (known: expired, must_change, locked, "
				     "separated by ',')", u.name, u.flags);
		}
		check_service("--user", u.service);
	}
	if (u.name[0] == '\0' || strpbrk(u.name, " \t\n/") != NULL)
		errx(EXIT_USAGE, "--user: invalid user name \"%s\"", u.name);
	if ((why = pwrap_user_name_problem(u.name)) != NULL)
		errx(EXIT_USAGE, "--user: invalid user name \"%s\": %s", u.name, why);
	if (strchr(u.password, '\n') != NULL)
		errx(EXIT_USAGE, "--user %s: the password may not contain a newline", u.name);
	struct user *n = realloc(o->users, (o->nusers + 1) * sizeof(*n));
	if (n == NULL)
		err(EXIT_USAGE, "out of memory");
	o->users = n;
	o->users[o->nusers++] = u;
}

static void add_service(struct opts *o, const char *name)
{
	for (size_t i = 0; i < o->nservices; i++)
		if (strcmp(o->services[i], name) == 0)
			return;
	const char **n = realloc(o->services, (o->nservices + 1) * sizeof(*n));
	if (n == NULL)
		err(EXIT_USAGE, "out of memory");
	o->services = n;
	o->services[o->nservices++] = name;
}

static int parse_args(struct opts *o, int argc, char **argv)
{
	static const struct option lopts[] = {
		{"service-dir", required_argument, NULL, 'd'},
		{"user", required_argument, NULL, 'u'},
		{"service", required_argument, NULL, 's'},
		{"nss", no_argument, NULL, 'n'},
		{"debug", required_argument, NULL, 'D'},
		{"syslog", no_argument, NULL, 'S'},
		{"trace", required_argument, NULL, 't'},
		{"trace-format", required_argument, NULL, 'T'},
		{"keep", no_argument, NULL, 'k'},
		{"lib", required_argument, NULL, 'l'},
		{"module-dir", required_argument, NULL, 'm'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	int c;

	/* '+': stop at the command so its own options are left alone. */
	while ((c = getopt_long(argc, argv, "+d:u:s:nD:St:kl:m:hV", lopts, NULL)) != -1) {
		switch (c) {
		case 'd':
			o->service_dir = optarg;
			break;
		case 'u':
			parse_user(o, optarg);
			break;
		case 's':
			check_service("--service", optarg);
			add_service(o, optarg);
			break;
		case 'n':
			o->nss = 1;
			break;
		case 'D':
			if (optarg[0] < '0' || optarg[0] > '3' || optarg[1] != '\0')
				errx(EXIT_USAGE, "--debug: expected a level 0-3, not \"%s\"", optarg);
			o->debug = optarg;
			break;
		case 'S':
			o->syslog = 1;
			break;
		case 't':
			if (optarg[0] == '\0')
				errx(EXIT_USAGE, "--trace: expected a file name or '-'");
			o->trace = optarg;
			break;
		case 'T':
			if (strcmp(optarg, "json") != 0 && strcmp(optarg, "text") != 0)
				errx(EXIT_USAGE, "--trace-format: expected json or text, not \"%s\"",
				     optarg);
			o->trace_format = optarg;
			break;
		case 'k':
			o->keep = 1;
			break;
		case 'l':
			o->lib = optarg;
			break;
		case 'm':
			o->moddir = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			printf("pam_wrapper %s\n", PWRAP_VERSION);
			exit(0);
		default:
			usage(stderr);
			exit(EXIT_USAGE);
		}
	}
	if (optind >= argc)
		errx(EXIT_USAGE, "no command given (see --help)");
	if (o->service_dir == NULL && o->nusers == 0 &&
	    getenv("PAM_WRAPPER_SERVICE_DIR") == NULL)
		errx(EXIT_USAGE, "give --service-dir DIR or --user USER:PASSWORD (see --help)");
	if (o->trace_format != NULL && o->trace == NULL)
		errx(EXIT_USAGE, "--trace-format needs --trace");
	if (o->nss && o->nusers == 0)
		errx(EXIT_USAGE, "--nss needs at least one --user");
	if (o->nservices > 0 && o->nusers == 0)
		errx(EXIT_USAGE, "--service needs at least one --user");
	/* Users without a service may use every --service. */
	for (size_t i = 0; i < o->nusers; i++) {
		if (o->users[i].service == NULL && o->nservices == 0)
			errx(EXIT_USAGE,
			     "--user %s: no service: use %s:PASSWORD:SERVICE or --service NAME",
			     o->users[i].name, o->users[i].name);
	}
	return optind;
}

/* The passdb text: one line per user and allowed service. */
static char *make_passdb(const struct opts *o)
{
	struct pwrap_buf b = {0};

	pwrap_buf_str(&b, "");
	for (size_t i = 0; i < o->nusers; i++) {
		const struct user *u = &o->users[i];
		if (u->service != NULL) {
			pwrap_buf_fmt(&b, "%s:%s:%s%s%s\n", u->name, u->password, u->service,
				u->flags ? ":" : "", u->flags ? u->flags : "");
			continue;
		}
		for (size_t s = 0; s < o->nservices; s++)
			pwrap_buf_fmt(&b, "%s:%s:%s\n", u->name, u->password, o->services[s]);
	}
	if (b.failed) {
		pwrap_buf_free(&b);
		return NULL;
	}
	return b.p;
}

static int uid_taken(const uid_t *uids, size_t n, uid_t uid)
{
	for (size_t i = 0; i < n; i++)
		if (uids[i] == uid)
			return 1;
	return 0;
}

/*
 * nss_wrapper passwd and group files: root, the calling user (so `id` and
 * friends keep working) and every --user with uid=gid from 1000 up.
 */
static int write_nss_files(const struct opts *o, const char *dir)
{
	struct pwrap_buf pw = {0}, gr = {0};
	uid_t *uids = NULL;
	size_t nuids = 0;
	char *pwpath = NULL, *grpath = NULL;
	uid_t me = getuid();
	gid_t mygid = getgid();
	int rc = -1;

	uids = calloc(o->nusers + 2, sizeof(*uids));
	if (uids == NULL)
		goto out;
	pwrap_buf_str(&pw, "root:x:0:0:root:/root:/bin/sh\n");
	pwrap_buf_str(&gr, "root:x:0:\n");
	uids[nuids++] = 0;
	if (me != 0) {
		struct passwd *p = getpwuid(me);
		struct group *g = getgrgid(mygid);
		int clash = 0;
		for (size_t i = 0; p != NULL && i < o->nusers; i++)
			clash |= strcmp(o->users[i].name, p->pw_name) == 0;
		if (p != NULL && !clash) {
			pwrap_buf_fmt(&pw, "%s:x:%u:%u:%s:%s:%s\n", p->pw_name, (unsigned)me,
				(unsigned)mygid, p->pw_gecos, p->pw_dir, p->pw_shell);
			uids[nuids++] = me;
		}
		if (g != NULL && mygid != 0)
			pwrap_buf_fmt(&gr, "%s:x:%u:\n", g->gr_name, (unsigned)mygid);
	}
	uid_t next = 1000;
	for (size_t i = 0; i < o->nusers; i++) {
		const char *name = o->users[i].name;
		int dup = 0;
		for (size_t j = 0; j < i; j++)
			dup |= strcmp(o->users[j].name, name) == 0;
		if (dup)
			continue;
		while (uid_taken(uids, nuids, next) || next == mygid)
			next++;
		pwrap_buf_fmt(&pw, "%s:x:%u:%u:%s:/home/%s:/bin/sh\n", name, (unsigned)next,
			(unsigned)next, name, name);
		pwrap_buf_fmt(&gr, "%s:x:%u:\n", name, (unsigned)next);
		uids[nuids++] = next;
	}
	if (pw.failed || gr.failed)
		goto out;
	if (pwrap_write_file(dir, "passwd", pw.p, &pwpath) != 0 ||
	    pwrap_write_file(dir, "group", gr.p, &grpath) != 0)
		goto out;
	if (setenv("NSS_WRAPPER_PASSWD", pwpath, 1) != 0 ||
	    setenv("NSS_WRAPPER_GROUP", grpath, 1) != 0)
		goto out;
	rc = 0;
out:
	free(uids);
	free(pwpath);
	free(grpath);
	pwrap_buf_free(&pw);
	pwrap_buf_free(&gr);
	return rc;
}

/* Fill the private directory; sets PAM_WRAPPER_SERVICE_DIR/PAM_MATRIX_PASSWD. */
static int setup_private_dir(struct opts *o, const struct pwrap_paths *paths,
			     const char *dir)
{
	char *passdb_text = NULL, *passdb = NULL, *module = NULL, *svc = NULL;
	int rc = -1;

	passdb_text = make_passdb(o);
	if (passdb_text == NULL)
		goto out;
	if (pwrap_write_file(dir, "passdb", passdb_text, &passdb) != 0)
		goto out;
	if (setenv("PAM_MATRIX_PASSWD", passdb, 1) != 0)
		goto out;
	if (o->service_dir == NULL) {
		/* Every service a user names gets its file too. */
		for (size_t i = 0; i < o->nusers; i++)
			if (o->users[i].service != NULL)
				add_service(o, o->users[i].service);
		if (asprintf(&module, "%s/pam_matrix.so", paths->moddir) < 0) {
			module = NULL;
			goto out;
		}
		if (access(module, R_OK) != 0) {
			warnx("%s: module not found (use --module-dir)", module);
			goto out;
		}
		svc = pwrap_matrix_service(module, passdb);
		if (svc == NULL)
			goto out;
		for (size_t i = 0; i < o->nservices; i++)
			if (pwrap_write_file(dir, o->services[i], svc, NULL) != 0)
				goto out;
		if (setenv("PAM_WRAPPER_SERVICE_DIR", dir, 1) != 0)
			goto out;
	}
	if (o->nss && write_nss_files(o, dir) != 0)
		goto out;
	rc = 0;
out:
	if (passdb_text != NULL)
		explicit_bzero(passdb_text, strlen(passdb_text));
	free(passdb_text);
	free(passdb);
	free(module);
	free(svc);
	return rc;
}

/* PAM_WRAPPER_TRACE for --trace: an absolute path (the command may change
 * its directory before it first uses PAM), or '-'.  0 or -1. */
static int trace_env(const struct opts *o)
{
	char *cwd = NULL, *abs = NULL;
	int rc;

	if (o->trace == NULL)
		return 0;
	if (o->trace_format != NULL &&
	    setenv("PAM_WRAPPER_TRACE_FORMAT", o->trace_format, 1) != 0)
		return -1;
	if (strcmp(o->trace, "-") == 0 || o->trace[0] == '/')
		return setenv("PAM_WRAPPER_TRACE", o->trace, 1);
	cwd = getcwd(NULL, 0);
	if (cwd == NULL || asprintf(&abs, "%s/%s", cwd, o->trace) < 0) {
		free(cwd);
		return -1;
	}
	rc = setenv("PAM_WRAPPER_TRACE", abs, 1);
	free(cwd);
	free(abs);
	return rc;
}

/* fork+exec argv; returns the exit status to propagate. */
static int run(char **argv)
{
	pid_t pid = pwrap_guard_fork();

	if (pid < 0)
		return 126;
	if (pid == 0) {
		execvp(argv[0], argv);
		int e = errno;
		warn("cannot run %s", argv[0]);
		_exit(e == ENOENT ? 127 : 126);
	}
	return pwrap_guard_wait(pid);
}

int main(int argc, char **argv)
{
	struct opts o = {0};
	struct pwrap_paths paths = {0};
	struct pwrap_buf preload = {0};
	char *dir = NULL;
	char *nsslib = NULL;
	int status = EXIT_USAGE;
	int cmd, again;

	cmd = parse_args(&o, argc, argv);

	if (o.nss) {
		nsslib = pwrap_find_nss_wrapper();
		if (nsslib == NULL)
			errx(EXIT_USAGE, "--nss: libnss_wrapper.so is not installed "
					 "(Debian: apt-get install libnss-wrapper; or set "
					 "PAM_WRAPPER_NSS_LIB)");
	}
	if (pwrap_locate(o.lib, o.moddir, &paths) != 0)
		goto out;
	if (nsslib != NULL && strpbrk(nsslib, " \t\n:") != NULL) {
		warnx("--nss: %s: LD_PRELOAD cannot hold a path with a blank or ':'",
		      nsslib);
		goto out;
	}
	if (nsslib != NULL)
		pwrap_buf_fmt(&preload, "%s:", nsslib);
	pwrap_buf_str(&preload, paths.lib);
	if (preload.failed)
		goto out;
	/* Never run the command unwrapped: start again under LD_PRELOAD
	 * first (before anything is made) and check the wrapper is there. */
	again = pwrap_reexec_wrapped(REEXEC_MARK, paths.lib, preload.p, argv);
	if (again < 0 || (!again && pwrap_preload_prepend(preload.p) != 0))
		goto out;
	pwrap_guard_start();

	if (o.service_dir != NULL) {
		char *real = realpath(o.service_dir, NULL);
		if (real == NULL) {
			warn("--service-dir %s", o.service_dir);
			goto out;
		}
		int ok = setenv("PAM_WRAPPER_SERVICE_DIR", real, 1) == 0;
		free(real);
		if (!ok)
			goto out;
	}
	if (o.nusers > 0) {
		dir = pwrap_mkdtemp("pwrap_launch");
		if (dir == NULL)
			goto out;
		if (o.keep)
			fprintf(stderr, "pam_wrapper: private directory %s (kept)\n", dir);
		if (setup_private_dir(&o, &paths, dir) != 0)
			goto out;
	}

	if (setenv("PAM_WRAPPER", "1", 1) != 0 ||
	    (o.debug != NULL && setenv("PAM_WRAPPER_DEBUGLEVEL", o.debug, 1) != 0) ||
	    (o.syslog && setenv("PAM_WRAPPER_USE_SYSLOG", "1", 1) != 0) ||
	    (o.keep && setenv("PAM_WRAPPER_KEEP_DIR", "1", 1) != 0) ||
	    trace_env(&o) != 0) {
		warn("setenv");
		goto out;
	}

	status = run(argv + cmd);
out:
	if (dir != NULL && !o.keep && pwrap_rmtree(dir) != 0)
		warnx("could not remove %s", dir);
	for (size_t i = 0; i < o.nusers; i++) {
		explicit_bzero(o.users[i].spec, strlen(o.users[i].name) + 1 +
						strlen(o.users[i].password));
		free(o.users[i].spec);
	}
	free(o.users);
	free(o.services);
	free(dir);
	free(nsslib);
	pwrap_buf_free(&preload);
	pwrap_paths_free(&paths);
	return status;
}
