/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * pamtest(1): run PAM transactions described by scenario files
 * (pamtest-scenario(5)) and report them as text, TAP or JUnit XML.
 *
 * All files are parsed first: any malformed one is reported as
 * "file:line: what is wrong" and the run stops with status 2 (--check also
 * reports modules that do not exist, then stops).  Then, unless
 * libpam_wrapper.so is already loaded (e.g. under the pam_wrapper(1)
 * launcher), pamtest preloads it and re-executes itself once; if the
 * wrapper is still not loaded after that, it stops rather than run the
 * system's PAM configuration.  The scenarios then run in a child process,
 * with their private directories (and the child's wrapper runtime
 * directory) below one directory of pamtest's: whatever signal ends
 * pamtest or the child, pamtest removes it and exits with 128+N
 * (pwrap_guard.c).  Exit status: 0 every expectation held, 1 some failed,
 * 2 usage, malformed scenario or a scenario that could not be set up.
 */
#define _GNU_SOURCE
#include "pwrap_guard.h"
#include "explore.h"
#include "pwrap_tool.h"
#include "scenario.h"

#include <dlfcn.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#ifndef PWRAP_VERSION
#define PWRAP_VERSION "unknown"
#endif

#define EXIT_USAGE 2
#define REEXEC_MARK "PAMTEST_WRAPPED"

/* Read by run.c for ${MODULE_DIR}. */
const char *pamtest_moddir;
/* Read by run.c: nss_wrapper's files for `service-dir system`, or NULL. */
const char *pamtest_nss_dir;
static char *nss_dir;	/* (owned) */

/*
 * Before the scenarios' child is forked (nss_wrapper reads its variables
 * in its fork handler, and keeps them): when nss_wrapper is preloaded, its
 * passwd and group are pamtest's own files in top (with --keep: in a
 * directory of their own), which each `service-dir system` scenario
 * replaces with its users (run.c).  Without nss_wrapper, such scenarios
 * fail their setup with the reason.
 */
static int nss_setup(const char *top)
{
	struct pwrap_tmp *t = top == NULL ? pwrap_tmp_make("pamtest-nss") : NULL;
	char *d = top != NULL ? strdup(top) : t != NULL ? strdup(t->path) : NULL;
	char *pw = NULL, *gr = NULL;

	pwrap_tmp_keep(t);	/* --keep: kept, as the scenarios' */
	if (d == NULL || dlsym(RTLD_DEFAULT, "nss_wrapper_enabled") == NULL ||
	    pwrap_nss_files(d, NULL, 0, NULL, 0, &pw, &gr) != 0 ||
	    setenv("NSS_WRAPPER_PASSWD", pw, 1) != 0 ||
	    setenv("NSS_WRAPPER_GROUP", gr, 1) != 0) {
		free(d);
		d = NULL;
	}
	free(pw);
	free(gr);
	free(nss_dir);
	pamtest_nss_dir = nss_dir = d;
	return 0;
}

/* Opens /dev/null on each of descriptors 0, 1 and 2 that is closed;
 * whether 1 was. */
static bool std_fds_opened(void)
{
	bool out_closed = false;

	for (int fd = 0; fd <= 2; fd++) {
		int got;

		if (fcntl(fd, F_GETFD) >= 0 || errno != EBADF) {
			continue;
		}
		got = open("/dev/null", fd == 0 ? O_RDONLY : O_WRONLY);
		if (got != fd) {
			/* cannot happen: the lowest free number is fd */
			_exit(EXIT_USAGE);
		}
		out_closed |= fd == 1;
	}
	return out_closed;
}

/* The secrets of all scenarios (pointing into them), malloc'd; *n gets how
 * many.  NULL when out of memory. */
static const char **all_secrets(const struct scenario *scs, int nfiles,
				size_t *n)
{
	const char **v;
	size_t total = 0;

	for (int i = 0; i < nfiles; i++) {
		total += scs[i].nsecrets;
	}
	v = calloc(total + 1, sizeof(*v));
	*n = 0;
	for (int i = 0; v != NULL && i < nfiles; i++) {
		for (size_t j = 0; j < scs[i].nsecrets; j++) {
			v[(*n)++] = scs[i].secrets[j];
		}
	}
	return v;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pamtest [options] scenario...\n"
		"       pamtest explore ... (the decision table of a stack: --help there)\n"
		"Run the PAM transactions of each scenario file (see pamtest-scenario(5)).\n"
		"\n"
		"  -f, --format FORMAT      human (default), tap or junit\n"
		"  -o, --output FILE        write the report to FILE instead of stdout\n"
		"  -q, --quiet              human format: show only failures and the summary\n"
		"  -c, --check              only check the scenarios (syntax, modules)\n"
		"  -k, --keep               keep each scenario's private directory\n"
		"  -D, --debug LEVEL        PAM_WRAPPER_DEBUGLEVEL (0-3)\n"
		"  -t, --trace FILE         append every module call to FILE ('-': stderr)\n"
		"      --trace-format FMT   json (default) or text\n"
		"  -l, --lib PATH           libpam_wrapper.so to preload\n"
		"  -m, --module-dir DIR     our modules' directory (for ${MODULE_DIR})\n"
		"  -h, --help               this help\n"
		"  -V, --version            print the version\n"
		"\n"
		"Exit status: 0 all passed, 1 some expectation failed, 2 usage error,\n"
		"malformed scenario or a scenario that could not be set up.\n");
}

/* --check: the syntax was fine; are the modules there?  0 or EXIT_USAGE. */
static int check_modules(struct scenario *scs, int nfiles, const char *lib,
			 const char *moddir)
{
	struct pwrap_paths paths = {0};
	char *sysmoddir = system_module_dir();
	int errors = 0;

	/* Without the library our module dir is unknown: bare names of our
	 * modules are then reported as missing, with the reason. */
	if (pwrap_locate(lib, moddir, &paths) != 0) {
		paths.moddir = NULL;
	}
	pamtest_moddir = paths.moddir;	/* ${MODULE_DIR} */
	for (int i = 0; i < nfiles; i++) {
		errors += scenario_check_modules(&scs[i], paths.moddir, sysmoddir);
	}
	free(sysmoddir);
	pwrap_paths_free(&paths);
	return errors > 0 ? EXIT_USAGE : 0;
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{"format", required_argument, NULL, 'f'},
		{"output", required_argument, NULL, 'o'},
		{"quiet", no_argument, NULL, 'q'},
		{"check", no_argument, NULL, 'c'},
		{"keep", no_argument, NULL, 'k'},
		{"debug", required_argument, NULL, 'D'},
		{"trace", required_argument, NULL, 't'},
		{"trace-format", required_argument, NULL, 'T'},
		{"lib", required_argument, NULL, 'l'},
		{"module-dir", required_argument, NULL, 'm'},
		{"help", no_argument, NULL, 'h'},
		{"version", no_argument, NULL, 'V'},
		{NULL, 0, NULL, 0},
	};
	struct reporter rep = {.fmt = FMT_HUMAN, .out = stdout};
	struct pwrap_paths paths = {0};
	struct scenario *scs = NULL;
	struct file_results *frs = NULL;
	const char *output = NULL, *lib = NULL, *moddir = NULL;
	struct pwrap_tmp *top = NULL;
	char *nsslib = NULL, *preload = NULL;
	int any_system = 0;
	struct pwrap_masks masks = {0};
	const char **secrets = NULL;
	int check = 0, keep = 0, bad = 0, setup_failed = 0, status = EXIT_USAGE;
	int nfiles, c;
	bool stdout_closed;
	pid_t pid = -1;

	/* A closed standard descriptor would be taken by the next open(): a
	 * report or a message could land in a passdb or a service file.  They
	 * get /dev/null; a closed stdout is remembered, since the report (or
	 * explore's table) written to /dev/null would look like a pass. */
	stdout_closed = std_fds_opened();
	if (argc > 1 && strcmp(argv[1], "explore") == 0) {
		if (stdout_closed) {
			errx(EXIT_USAGE, "standard output is closed: nowhere to "
			     "write the table");
		}
		return explore_main(argc, argv);
	}
	while ((c = getopt_long(argc, argv, "f:o:qckD:t:l:m:hV", lopts, NULL)) != -1) {
		switch (c) {
		case 'f':
			if (strcmp(optarg, "human") == 0) {
				rep.fmt = FMT_HUMAN;
			} else if (strcmp(optarg, "tap") == 0) {
				rep.fmt = FMT_TAP;
			} else if (strcmp(optarg, "junit") == 0) {
				rep.fmt = FMT_JUNIT;
			} else {
				errx(EXIT_USAGE, "--format: expected human, tap or junit, not \"%s\"", optarg);
			}
			break;
		case 'o':
			output = optarg;
			break;
		case 'q':
			rep.quiet = 1;
			break;
		case 'c':
			check = 1;
			break;
		case 'k':
			keep = 1;
			break;
		case 'D':
			if (optarg[0] < '0' || optarg[0] > '3' ||
			    optarg[1] != '\0') {
				errx(EXIT_USAGE, "--debug: expected a level 0-3, not \"%s\"", optarg);
			}
			if (setenv("PAM_WRAPPER_DEBUGLEVEL", optarg, 1) != 0) {
				err(EXIT_USAGE, "setenv");
			}
			break;
		case 't':
			if (optarg[0] == '\0') {
				errx(EXIT_USAGE, "--trace: expected a file name or '-'");
			}
			pamtest_trace = optarg;
			break;
		case 'T':
			if (strcmp(optarg, "json") != 0 &&
			    strcmp(optarg, "text") != 0) {
				errx(EXIT_USAGE, "--trace-format: expected json or text, not \"%s\"",
				     optarg);
			}
			pamtest_trace_format = optarg;
			break;
		case 'l':
			lib = optarg;
			break;
		case 'm':
			moddir = optarg;
			break;
		case 'h':
			usage(stdout);
			return 0;
		case 'V':
			printf("pamtest %s\n", PWRAP_VERSION);
			return 0;
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	nfiles = argc - optind;
	if (nfiles <= 0) {
		errx(EXIT_USAGE, "no scenario file given (see --help)");
	}
	if (stdout_closed && output == NULL && !check) {
		errx(EXIT_USAGE, "standard output is closed: nowhere to write the "
		     "report (use -o FILE)");
	}

	scs = calloc((size_t)nfiles, sizeof(*scs));
	frs = calloc((size_t)nfiles, sizeof(*frs));
	if (scs == NULL || frs == NULL) {
		err(EXIT_USAGE, "out of memory");
	}
	/* Parse everything first: a malformed file stops the run before any PAM call. */
	for (int i = 0; i < nfiles; i++) {
		if (scenario_parse(argv[optind + i], &scs[i]) != 0) {
			bad = 1;
			continue;
		}
		rep.total += scenario_ntests(&scs[i]);
	}
	if (bad) {
		goto out;
	}
	if (check) {
		status = check_modules(scs, nfiles, lib, moddir);
		goto out;
	}

	if (pwrap_locate(lib, moddir, &paths) == 0) {
		pamtest_moddir = paths.moddir;
	} else if (!pwrap_wrapped()) {
		goto out;
	}
	for (int i = 0; i < nfiles; i++) {
		any_system |= scs[i].system != NULL;
	}
	if (any_system && (nsslib = pwrap_find_nss_wrapper()) != NULL &&
	    strpbrk(nsslib, " \t\n:") == NULL && paths.lib != NULL &&
	    asprintf(&preload, "%s:%s", nsslib, paths.lib) < 0) {
		preload = NULL;
	}
	/* The scenarios run in a child; this process removes their
	 * directories whatever signal comes (--keep: each is kept). */
	/* Every password and answer is masked in whatever the scenarios'
	 * process writes to stderr (modules' log lines included). */
	secrets = all_secrets(scs, nfiles, &masks.n);
	if (secrets == NULL) {
		err(EXIT_USAGE, "out of memory");
	}
	masks.secrets = secrets;
	pid = pwrap_guard_wrapped(REEXEC_MARK, paths.lib,
				  preload != NULL ? preload : paths.lib, argv,
				  "pamtest", keep, &masks,
				  any_system ? nss_setup : NULL, &top, &status);
	if (pid != 0) {
		goto out;
	}

	if (output != NULL) {
		rep.out = fopen(output, "w");
		if (rep.out == NULL) {
			warn("%s", output);
			goto out;
		}
	}
	report_begin(&rep);
	for (int i = 0; i < nfiles; i++) {
		if (scenario_run(&scs[i], &frs[i], keep) != 0) {
			setup_failed = 1;
		}
		report_file(&rep, &frs[i]);
	}
	report_end(&rep, frs, (size_t)nfiles);
	status = setup_failed ? EXIT_USAGE : rep.failed > 0 ? 1 : 0;
	/* A report that did not reach its file fails the run: a CI job must
	 * not take an empty or cut JUnit file for a pass.  ferror() keeps what
	 * an earlier flush lost; fclose() alone would not tell. */
	if (report_close(&rep) != 0) {
		warnx("%s: the report could not be written%s%s", output != NULL ?
		      output : "standard output", errno != 0 ? ": " : "",
		      errno != 0 ? strerror(errno) : "");
		status = EXIT_USAGE;
	}
out:
	for (int i = 0; i < nfiles; i++) {
		file_results_free(&frs[i]);
		scenario_free(&scs[i]);
	}
	free(secrets);
	free(scs);
	free(frs);
	free(nsslib);
	free(preload);
	free(nss_dir);
	pwrap_paths_free(&paths);
	pwrap_guard_finish(pid, top);
	return status;
}
