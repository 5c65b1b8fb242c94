/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pam_wrapper(1): run a command with libpam_wrapper.so set up.
 *
 *   pam_wrapper --service-dir DIR -- ./app
 *   pam_wrapper --user bob:secret[:service[:flags]] --service myapp -- ./app
 *
 * With --user the launcher makes a private directory (mkdtemp below $TMPDIR)
 * holding a pam_matrix passdb and one service file per service, optionally
 * nss_wrapper passwd/group files (--nss); with --system a private copy of
 * the system's stacks with test doubles instead (pwrap_system.c) and the
 * nss_wrapper files always.  It runs the command with LD_PRELOAD,
 * PAM_WRAPPER=1 and PAM_WRAPPER_SERVICE_DIR set, forwards every signal that
 * would end the launcher to it (pwrap_guard.c), removes the directory and
 * exits with the command's status (128+N when it died of signal N; 126/127
 * when it could not run).  Before anything is made, the launcher starts
 * itself again under the LD_PRELOAD the command gets and refuses to run the
 * command when the wrapper is not loaded then (as pamtest does).  Usage
 * errors exit 2.  Passwords only ever go into the passdb file.  --prepare
 * DIR makes the directory and prints the environment instead of running a
 * command (the pytest fixture's use_system() and shell scripts use it).
 */
#define _GNU_SOURCE
#include "pwrap_guard.h"
#include "pwrap_system.h"
#include "pwrap_tool.h"

#include <err.h>
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
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
	char *service;  /* idem; NULL when not given ("" with --system) */
	char *flags;    /* idem: pam_matrix account flags; NULL when none */
	char *spec;     /* owned */
};

/* --group NAME:MEMBER[,MEMBER...] */
struct group_opt {
	char *name;	/* points into the malloc'd copy `spec` */
	char *members;	/* idem: comma-separated, may be empty */
	char *spec;	/* owned */
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
	const char *system;	/* --system[=DIR]: the stacks copied */
	const char *prepare;	/* --prepare DIR */
	struct group_opt *groups;
	size_t ngroups;
	struct pwrap_sys_swap *swaps;
	size_t nswaps;
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
		"  -g, --group NAME:USER[,USER...]\n"
		"                           with --nss: a group and its members\n"
		"      --system[=DIR]       run the system's stacks (/etc/pam.d, or DIR)\n"
		"                           for real, with test doubles where they need\n"
		"                           root or the system (implies --nss)\n"
		"      --swap MODULE=REPLACEMENT\n"
		"                           with --system: what MODULE becomes (real,\n"
		"                           matrix, standin[:CODE] or a module's path)\n"
		"      --prepare DIR        make DIR as for a command, print the variables\n"
		"                           a command would get and run nothing\n"
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

	if (!pwrap_valid_service_name(name)) {
		errx(EXIT_USAGE, "%s: invalid service name \"%s\" (no '/', ':' or "
		     "blank, not starting with '.')", opt, name);
	}
	if ((why = pwrap_service_case_problem(name)) != NULL) {
		errx(EXIT_USAGE, "%s: invalid service name \"%s\": %s", opt, name, why);
	}
}

static void parse_user(struct opts *o, const char *arg)
{
	struct user u = {0};
	const char *why;
	char *p;

	u.spec = strdup(arg);
	if (u.spec == NULL) {
		err(EXIT_USAGE, "out of memory");
	}
	u.name = u.spec;
	p = strchr(u.spec, ':');
	if (p == NULL) {
		errx(EXIT_USAGE, "--user %.*s...: expected USER:PASSWORD[:SERVICE[:FLAGS]]",
		     (int)strcspn(arg, ":"), arg);
	}
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
			if (strchr(u.flags, ':') != NULL) {
				errx(EXIT_USAGE, "--user %s: too many ':' (expected "
				     "USER:PASSWORD[:SERVICE[:FLAGS]]; a passdb "
				     "password cannot contain ':')", u.name);
			}
			if (!tool_valid_account_flags(u.flags)) {
				errx(EXIT_USAGE, "--user %s: unknown account flag in "
				     "\"%s\" (known: expired, must_change, locked, "
				     "separated by ',')", u.name, u.flags);
			}
		}
		/* an empty one (U:P::FLAGS) is every service, with --system */
		if (u.service[0] != '\0') {
			check_service("--user", u.service);
		}
	}
	if (u.name[0] == '\0' || strpbrk(u.name, " \t\n/") != NULL) {
		errx(EXIT_USAGE, "--user: invalid user name \"%s\"", u.name);
	}
	if ((why = pwrap_user_name_problem(u.name)) != NULL) {
		errx(EXIT_USAGE, "--user: invalid user name \"%s\": %s", u.name, why);
	}
	if (strchr(u.password, '\n') != NULL) {
		errx(EXIT_USAGE, "--user %s: the password may not contain a newline", u.name);
	}
	struct user *n = realloc(o->users, (o->nusers + 1) * sizeof(*n));
	if (n == NULL) {
		err(EXIT_USAGE, "out of memory");
	}
	o->users = n;
	o->users[o->nusers++] = u;
}

static void parse_group(struct opts *o, const char *arg)
{
	struct group_opt g = {0};
	const char *why;
	char *p;

	g.spec = strdup(arg);
	if (g.spec == NULL) {
		err(EXIT_USAGE, "out of memory");
	}
	p = strchr(g.spec, ':');
	if (p == NULL || p == g.spec) {
		errx(EXIT_USAGE, "--group %s: expected NAME:USER[,USER...]", arg);
	}
	*p++ = '\0';
	g.name = g.spec;
	g.members = p;
	if (strpbrk(g.name, " \t\n/:,") != NULL ||
	    strpbrk(g.members, " \t\n/:") != NULL) {
		errx(EXIT_USAGE, "--group %s: names hold no blank, '/' or ':'", arg);
	}
	if ((why = pwrap_user_name_problem(g.name)) != NULL) {
		errx(EXIT_USAGE, "--group: invalid group name \"%s\": %s", g.name, why);
	}
	for (size_t i = 0; i < o->ngroups; i++) {
		if (strcmp(o->groups[i].name, g.name) == 0) {
			errx(EXIT_USAGE, "--group %s given twice", g.name);
		}
	}
	struct group_opt *n = realloc(o->groups, (o->ngroups + 1) * sizeof(*n));
	if (n == NULL) {
		err(EXIT_USAGE, "out of memory");
	}
	o->groups = n;
	o->groups[o->ngroups++] = g;
}

static void parse_swap(struct opts *o, const char *arg)
{
	struct pwrap_sys_swap w;
	const char *why = pwrap_sys_swap_parse(arg, &w);

	if (why != NULL) {
		errx(EXIT_USAGE, "--swap %s: %s", arg, why);
	}
	struct pwrap_sys_swap *n = realloc(o->swaps, (o->nswaps + 1) * sizeof(*n));
	if (n == NULL) {
		err(EXIT_USAGE, "out of memory");
	}
	o->swaps = n;
	o->swaps[o->nswaps++] = w;
}

static void add_service(struct opts *o, const char *name)
{
	for (size_t i = 0; i < o->nservices; i++) {
		if (strcmp(o->services[i], name) == 0) {
			return;
		}
	}
	const char **n = realloc(o->services, (o->nservices + 1) * sizeof(*n));
	if (n == NULL) {
		err(EXIT_USAGE, "out of memory");
	}
	o->services = n;
	o->services[o->nservices++] = name;
}

/* --system's combinations: its stacks, users for every service. */
static void check_system(struct opts *o)
{
#if defined(PWRAP_OPENPAM)
	(void)o;
	errx(EXIT_USAGE, "--system: this build is for OpenPAM; --system knows "
	     "Linux-PAM's modules only");
#else
	if (o->service_dir != NULL) {
		errx(EXIT_USAGE, "--system and --service-dir exclude each other "
		     "(--system=DIR copies the stacks of DIR)");
	}
	o->nss = 1;	/* the real modules look the test's users up */
#endif
}

static int parse_args(struct opts *o, int argc, char **argv)
{
	static const struct option lopts[] = {
		{"service-dir", required_argument, NULL, 'd'},
		{"user", required_argument, NULL, 'u'},
		{"service", required_argument, NULL, 's'},
		{"nss", no_argument, NULL, 'n'},
		{"group", required_argument, NULL, 'g'},
		{"system", optional_argument, NULL, 'Y'},
		{"swap", required_argument, NULL, 'W'},
		{"prepare", required_argument, NULL, 'P'},
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
	while ((c = getopt_long(argc, argv, "+d:u:s:ng:D:St:kl:m:hV", lopts, NULL)) != -1) {
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
		case 'g':
			parse_group(o, optarg);
			break;
		case 'Y':
			o->system = optarg != NULL ? optarg : PWRAP_SYSTEM_SRC;
			if (o->system[0] == '\0') {
				errx(EXIT_USAGE, "--system=: expected a directory");
			}
			break;
		case 'W':
			parse_swap(o, optarg);
			break;
		case 'P':
			if (optarg[0] == '\0') {
				errx(EXIT_USAGE, "--prepare: expected a directory");
			}
			o->prepare = optarg;
			break;
		case 'D':
			if (optarg[0] < '0' || optarg[0] > '3' ||
			    optarg[1] != '\0') {
				errx(EXIT_USAGE, "--debug: expected a level 0-3, not \"%s\"", optarg);
			}
			o->debug = optarg;
			break;
		case 'S':
			o->syslog = 1;
			break;
		case 't':
			if (optarg[0] == '\0') {
				errx(EXIT_USAGE, "--trace: expected a file name or '-'");
			}
			o->trace = optarg;
			break;
		case 'T':
			if (strcmp(optarg, "json") != 0 &&
			    strcmp(optarg, "text") != 0) {
				errx(EXIT_USAGE, "--trace-format: expected json or text, not \"%s\"",
				     optarg);
			}
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
	if (o->system != NULL) {
		check_system(o);
	}
	if (o->prepare != NULL && optind < argc) {
		errx(EXIT_USAGE, "--prepare runs no command (%s given)", argv[optind]);
	}
	if (o->prepare == NULL && optind >= argc) {
		errx(EXIT_USAGE, "no command given (see --help)");
	}
	if (o->prepare != NULL && o->system == NULL && o->nusers == 0) {
		errx(EXIT_USAGE, "--prepare needs --system or --user");
	}
	if (o->service_dir == NULL && o->nusers == 0 && o->system == NULL &&
	    getenv("PAM_WRAPPER_SERVICE_DIR") == NULL) {
		errx(EXIT_USAGE, "give --service-dir DIR, --user USER:PASSWORD or "
		     "--system (see --help)");
	}
	if (o->ngroups > 0 && !o->nss) {
		errx(EXIT_USAGE, "--group needs --nss (or --system)");
	}
	if (o->nswaps > 0 && o->system == NULL) {
		errx(EXIT_USAGE, "--swap needs --system");
	}
	if (o->trace_format != NULL && o->trace == NULL) {
		errx(EXIT_USAGE, "--trace-format needs --trace");
	}
	if (o->nss && o->nusers == 0 && o->system == NULL) {
		errx(EXIT_USAGE, "--nss needs at least one --user");
	}
	if (o->nservices > 0 && o->nusers == 0 && o->system == NULL) {
		errx(EXIT_USAGE, "--service needs at least one --user");
	}
	/* Users without a service may use every --service. */
	for (size_t i = 0; i < o->nusers && o->system == NULL; i++) {
		if (o->users[i].service != NULL &&
		    o->users[i].service[0] == '\0') {
			errx(EXIT_USAGE, "--user %s: an empty SERVICE is every "
			     "service, which only --system has", o->users[i].name);
		}
		if (o->users[i].service == NULL && o->nservices == 0) {
			errx(EXIT_USAGE,
			     "--user %s: no service: use %s:PASSWORD:SERVICE or --service NAME",
			     o->users[i].name, o->users[i].name);
		}
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
		if (o->system != NULL) {
			/* as=MODULE doubles read "*" as every service */
			const char *svc = u->service != NULL && u->service[0] ?
					  u->service : "*";
			pwrap_buf_fmt(&b, "%s:%s:%s%s%s\n", u->name, u->password, svc,
				u->flags ? ":" : "", u->flags ? u->flags : "");
			continue;
		}
		if (u->service != NULL) {
			pwrap_buf_fmt(&b, "%s:%s:%s%s%s\n", u->name, u->password, u->service,
				u->flags ? ":" : "", u->flags ? u->flags : "");
			continue;
		}
		for (size_t s = 0; s < o->nservices; s++) {
			pwrap_buf_fmt(&b, "%s:%s:%s\n", u->name, u->password, o->services[s]);
		}
	}
	if (b.failed) {
		pwrap_buf_free(&b);
		return NULL;
	}
	return b.p;
}

/* nss_wrapper passwd and group files in dir (pwrap_nss_files()) for the
 * --user and --group options. */
static int write_nss_files(const struct opts *o, const char *dir)
{
	const char **names = calloc(o->nusers + 1, sizeof(*names));
	struct pwrap_nss_group *groups = calloc(o->ngroups + 1, sizeof(*groups));
	char *pw = NULL, *gr = NULL;
	int rc = -1;

	if (names == NULL || groups == NULL) {
		goto out;
	}
	for (size_t i = 0; i < o->nusers; i++) {
		names[i] = o->users[i].name;
	}
	for (size_t i = 0; i < o->ngroups; i++) {
		groups[i].name = o->groups[i].name;
		groups[i].members = o->groups[i].members;
	}
	if (pwrap_nss_files(dir, names, o->nusers, groups, o->ngroups, &pw,
			    &gr) != 0) {
		goto out;
	}
	if (setenv("NSS_WRAPPER_PASSWD", pw, 1) != 0 ||
	    setenv("NSS_WRAPPER_GROUP", gr, 1) != 0) {
		goto out;
	}
	rc = 0;
out:
	free(names);
	free(groups);
	free(pw);
	free(gr);
	return rc;
}

/*
 * --system: dir/passdb (every user for every service unless it names one),
 * the copy of the stacks (dir/pam.d, dir/state) and the nss_wrapper files
 * in dir/state, where pam_localuser reads passwd.
 */
static int setup_system(struct opts *o, const struct pwrap_paths *paths,
			const char *dir, const char *passdb)
{
	struct pwrap_system sys = {
		.src = o->system, .dir = dir, .moddir = paths->moddir,
		.services = o->services, .nservices = o->nservices,
		.swaps = o->swaps, .nswaps = o->nswaps,
		.prog = "pam_wrapper --system", .passdb = passdb,
	};
	char *svcdir = NULL, *state = NULL, *sysmod = system_module_dir();
	int rc = -1;

	sys.sysmoddir = sysmod;
	for (const char *m = "pam_matrix.so"; m != NULL;
	     m = strcmp(m, "pam_matrix.so") == 0 ? "pam_double.so" : NULL) {
		char *path = NULL;
		if (asprintf(&path, "%s/%s", paths->moddir, m) < 0) {
			goto out;
		}
		int ok = access(path, R_OK) == 0;
		if (!ok) {
			warnx("%s: module not found (use --module-dir)", path);
		}
		free(path);
		if (!ok) {
			goto out;
		}
	}
	if (pwrap_system_copy(&sys) != 0) {
		goto out;
	}
	if (asprintf(&svcdir, "%s/pam.d", dir) < 0 ||
	    asprintf(&state, "%s/state", dir) < 0) {
		goto out;
	}
	if (write_nss_files(o, state) != 0 ||
	    setenv("PAM_WRAPPER_SERVICE_DIR", svcdir, 1) != 0 ||
	    setenv("PAM_WRAPPER_SYSTEM_DIR", state, 1) != 0 ||
	    setenv("PAM_MATRIX_PASSWD", passdb, 1) != 0) {
		goto out;
	}
	rc = 0;
out:
	free(sysmod);
	free(svcdir);
	free(state);
	return rc;
}

/* Fill the private directory; sets PAM_WRAPPER_SERVICE_DIR/PAM_MATRIX_PASSWD. */
static int setup_private_dir(struct opts *o, const struct pwrap_paths *paths,
			     const char *dir)
{
	char *passdb_text = NULL, *passdb = NULL, *module = NULL, *svc = NULL;
	int rc = -1;

	passdb_text = make_passdb(o);
	if (passdb_text == NULL) {
		goto out;
	}
	if (pwrap_tool_write_file(dir, "passdb", passdb_text, &passdb) != 0) {
		goto out;
	}
	if (o->system != NULL) {
		rc = setup_system(o, paths, dir, passdb);
		goto out;
	}
	if (setenv("PAM_MATRIX_PASSWD", passdb, 1) != 0) {
		goto out;
	}
	if (o->service_dir == NULL) {
		/* Every service a user names gets its file too. */
		for (size_t i = 0; i < o->nusers; i++) {
			if (o->users[i].service != NULL) {
				add_service(o, o->users[i].service);
			}
		}
		if (asprintf(&module, "%s/pam_matrix.so", paths->moddir) < 0) {
			module = NULL;
			goto out;
		}
		if (access(module, R_OK) != 0) {
			warnx("%s: module not found (use --module-dir)", module);
			goto out;
		}
		svc = pwrap_matrix_service(module, passdb);
		if (svc == NULL) {
			goto out;
		}
		for (size_t i = 0; i < o->nservices; i++) {
			if (pwrap_tool_write_file(dir, o->services[i], svc,
						  NULL) != 0) {
				goto out;
			}
		}
		if (setenv("PAM_WRAPPER_SERVICE_DIR", dir, 1) != 0) {
			goto out;
		}
	}
	if (o->nss && write_nss_files(o, dir) != 0) {
		goto out;
	}
	rc = 0;
out:
	if (passdb_text != NULL) {
		explicit_bzero(passdb_text, strlen(passdb_text));
	}
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

	if (o->trace == NULL) {
		return 0;
	}
	if (o->trace_format != NULL &&
	    setenv("PAM_WRAPPER_TRACE_FORMAT", o->trace_format, 1) != 0) {
		return -1;
	}
	if (strcmp(o->trace, "-") == 0 || o->trace[0] == '/') {
		return setenv("PAM_WRAPPER_TRACE", o->trace, 1);
	}
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

/* --prepare: the variables a command would get, as shell assignments. */
static void print_env(const char *preload)
{
	static const char *const names[] = {
		"PAM_WRAPPER", "PAM_WRAPPER_SERVICE_DIR", "PAM_WRAPPER_SYSTEM_DIR",
		"PAM_MATRIX_PASSWD", "NSS_WRAPPER_PASSWD", "NSS_WRAPPER_GROUP",
		NULL,
	};

	printf("LD_PRELOAD='%s'\n", preload);
	for (size_t i = 0; names[i] != NULL; i++) {
		const char *v = strcmp(names[i], "PAM_WRAPPER") == 0 ? "1"
			: getenv(names[i]);
		if (v == NULL) {
			continue;
		}
		printf("%s='", names[i]);
		for (const char *p = v; *p; p++) {
			fputs(*p == '\'' ? "'\\''" : (char[]){ *p, 0 }, stdout);
		}
		fputs("'\n", stdout);
	}
}

/* fork+exec argv; returns the exit status to propagate. */
static int run(char **argv)
{
	pid_t pid = pwrap_guard_fork();

	if (pid < 0) {
		return 126;
	}
	if (pid == 0) {
		execvp(argv[0], argv);
		int e = errno;
		warn("cannot run %s", argv[0]);
		_exit(e == ENOENT ? 127 : 126);
	}
	return pwrap_guard_wait(pid);
}

/* --prepare DIR: make it (it must not exist), fill it, print the
 * variables; 0, or EXIT_USAGE after removing what was made. */
static int prepare(struct opts *o, const struct pwrap_paths *paths,
		   const char *preload)
{
	char *dir = NULL;
	int rc = EXIT_USAGE;

	if (mkdir(o->prepare, 0700) != 0) {
		warn("--prepare %s", o->prepare);
		return EXIT_USAGE;
	}
	dir = realpath(o->prepare, NULL);
	if (dir == NULL) {
		warn("--prepare %s", o->prepare);
		rmdir(o->prepare);
		return EXIT_USAGE;
	}
	if ((o->nusers > 0 || o->system != NULL) &&
	    setup_private_dir(o, paths, dir) != 0) {
		pwrap_rmtree(dir);
		goto out;
	}
	print_env(preload);
	rc = fflush(stdout) == 0 && !ferror(stdout) ? 0 : EXIT_USAGE;
out:
	free(dir);
	return rc;
}

int main(int argc, char **argv)
{
	struct opts o = {0};
	struct pwrap_paths paths = {0};
	struct pwrap_buf preload = {0};
	struct pwrap_tmp *dir = NULL;
	char *nsslib = NULL;
	int status = EXIT_USAGE;
	int cmd, again;

	cmd = parse_args(&o, argc, argv);

	if (o.nss) {
		nsslib = pwrap_find_nss_wrapper();
		if (nsslib == NULL) {
			errx(EXIT_USAGE, "--nss: libnss_wrapper.so is not installed "
					 "(Debian: apt-get install libnss-wrapper; or set "
					 "PAM_WRAPPER_NSS_LIB)");
		}
	}
	if (pwrap_locate(o.lib, o.moddir, &paths) != 0) {
		goto out;
	}
	if (nsslib != NULL && strpbrk(nsslib, " \t\n:") != NULL) {
		warnx("--nss: %s: LD_PRELOAD cannot hold a path with a blank or ':'",
		      nsslib);
		goto out;
	}
	if (nsslib != NULL) {
		pwrap_buf_fmt(&preload, "%s:", nsslib);
	}
	pwrap_buf_str(&preload, paths.lib);
	if (preload.failed) {
		goto out;
	}
	if (o.prepare != NULL) {
		status = prepare(&o, &paths, preload.p);
		goto out;
	}
	/* Never run the command unwrapped: start again under LD_PRELOAD
	 * first (before anything is made) and check the wrapper is there. */
	again = pwrap_reexec_wrapped(REEXEC_MARK, paths.lib, preload.p, argv);
	if (again < 0 || (!again && pwrap_preload_prepend(preload.p) != 0)) {
		goto out;
	}
	pwrap_guard_start();

	if (o.service_dir != NULL) {
		char *real = realpath(o.service_dir, NULL);
		if (real == NULL) {
			warn("--service-dir %s", o.service_dir);
			goto out;
		}
		int ok = setenv("PAM_WRAPPER_SERVICE_DIR", real, 1) == 0;
		free(real);
		if (!ok) {
			goto out;
		}
	}
	if (o.nusers > 0 || o.system != NULL) {
		dir = pwrap_tmp_make("pwrap_launch");
		if (dir == NULL) {
			goto out;
		}
		if (o.keep) {
			fprintf(stderr, "pam_wrapper: private directory %s (kept)\n",
				dir->path);
		}
		if (setup_private_dir(&o, &paths, dir->path) != 0) {
			goto out;
		}
	}

	if (setenv("PAM_WRAPPER", "1", 1) != 0 ||
	    (o.debug != NULL && setenv("PAM_WRAPPER_DEBUGLEVEL", o.debug, 1) != 0) ||
	    (o.syslog && setenv("PAM_WRAPPER_USE_SYSLOG", "1", 1) != 0) ||
	    (o.keep && setenv("PAM_WRAPPER_KEEP_DIR", "1", 1) != 0) ||
	    trace_env(&o) != 0) {
		warn("setenv");
		goto out;
	}
	if (o.system != NULL &&
	    pwrap_system_trace(dir->path, getenv("PAM_WRAPPER_TRACE"),
			       getenv("PAM_WRAPPER_TRACE_FORMAT")) != 0) {
		goto out;
	}

	status = run(argv + cmd);
out:
	if (o.keep) {
		pwrap_tmp_keep(dir);
	} else {
		(void)pwrap_tmp_remove(dir);
	}
	for (size_t i = 0; i < o.nusers; i++) {
		explicit_bzero(o.users[i].spec, strlen(o.users[i].name) + 1 +
						strlen(o.users[i].password));
		free(o.users[i].spec);
	}
	free(o.users);
	free(o.services);
	for (size_t i = 0; i < o.ngroups; i++) {
		free(o.groups[i].spec);
	}
	free(o.groups);
	for (size_t i = 0; i < o.nswaps; i++) {
		pwrap_sys_swap_free(&o.swaps[i]);
	}
	free(o.swaps);
	free(nsslib);
	pwrap_buf_free(&preload);
	pwrap_paths_free(&paths);
	return status;
}
