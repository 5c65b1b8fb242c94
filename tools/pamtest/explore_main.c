/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `pamtest explore`: the command line (pamtest-explore(1)) and
 * xp_explore(), one exploration as the command and the scenario runner
 * use it: read the service, give every line its outcomes, build the graph
 * of each group, analyse it and replay it on libpam.
 *
 * The replay needs libpam_wrapper.so in the process: like pamtest itself,
 * the command preloads it and starts again once (not with --no-replay).
 * Exit status: 0 nothing found, 1 findings, 2 usage, a service that cannot
 * be read, or a replay that could not run or disagreed with the graph.
 */
#define _GNU_SOURCE
#include "explore.h"
#include "pwrap_names.h"
#include "explore_read.h"
#include "pwrap_guard.h"
#include "pwrap_tool.h"

#include <err.h>
#include <getopt.h>
#include <security/pam_appl.h>
#include <stdlib.h>
#include <sys/types.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#define EXIT_USAGE 2
#define REEXEC_MARK "PAMTEST_EXPLORE_WRAPPED"
#define STANDIN "pam_explore_standin.so"


char *xp_standin_path(void)
{
	char *p = NULL;

	if (xp_moddir == NULL || asprintf(&p, "%s/%s", xp_moddir, STANDIN) < 0)
		return NULL;
	return p;
}

int xp_explore(const char *dir, const char *service, const struct xp_opts *o,
	       struct xp_conf *c, struct xp_report *r, char **err)
{
	struct xp_replayer rp = { 0 };
	char *standin = NULL;
	int n = 0, t0 = o->type == XP_ALL_TYPES ? 0 : o->type;
	int t1 = o->type == XP_ALL_TYPES ? XP_NTYPES : o->type + 1;

	*err = NULL;
	if (xp_read(c, dir, service) != 0) {
		*err = strdup(c->error != NULL ? c->error : "cannot read the service");
		return -1;
	}
	if (o->after_read != NULL)
		o->after_read(c, o->ctx);
	if (xp_apply_outcomes(c, o) != 0) {
		*err = strdup("bad --model");
		return -1;
	}
	if (!o->no_replay) {
		standin = xp_standin_path();
		if (standin == NULL) {
			*err = strdup("cannot replay: our module directory is unknown");
			return -1;
		}
		if (xp_replay_begin(&rp, c, standin, err) != 0) {
			xp_replay_end(&rp);
			free(standin);
			return -1;
		}
		rp.keep = o->keep;
	}
	for (int t = t0; t < t1; t++, n++) {
		struct xp_report *x = &r[n];

		memset(x, 0, sizeof(*x));
		x->service = c->service;
		x->type = (enum xp_type)t;
		x->refused = c->refused;
		if (rp.none && (x->not_replayed = strdup(rp.why_none)) == NULL)
			goto oom;
		if (c->refused != NULL) {
			struct xp_path p = { .result = PAM_ABORT };

			x->g.conf = c;
			x->g.type = (enum xp_type)t;
			if (xp_add_lockout(x, c->refused, &p) != 0)
				goto oom;
			if (!o->no_replay && !rp.none) {
				x->disagree = xp_replay_refused(&rp);
				x->replays = 1;
				x->replayed = true;
			}
			continue;
		}
		if (xp_graph_build(&x->g, c, (enum xp_type)t, o->replay_all) != 0 ||
		    xp_analyse(x, o) != 0)
			goto oom;
		if (!o->no_replay)
			xp_replay_run(&rp, x);
	}
	xp_replay_end(&rp);
	free(standin);
	return n;
oom:
	for (int i = 0; i <= n; i++)
		xp_report_free(&r[i]);
	xp_replay_end(&rp);
	free(standin);
	*err = strdup("out of memory");
	return -1;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pamtest explore [-d SERVICE_DIR | --system] SERVICE [options]\n"
		"The decision table of a PAM stack: every outcome of every module,\n"
		"checked on the real libpam (see pamtest-explore(1)).\n"
		"\n"
		"  -d, --service-dir DIR    read SERVICE from DIR (includes resolve there)\n"
		"      --system             read SERVICE from /etc/pam.d (never changed)\n"
		"  -t, --type TYPE          auth, account, password, session or all (default)\n"
		"      --outcomes LIST      outcomes of every module (success,auth_err,...)\n"
		"      --model MODULE=LIST  outcomes of one module (or FILE:LINE)\n"
		"      --must MODULE        MODULE must decide (bypass, ignored findings)\n"
		"  -f, --format FORMAT      human (default), json, dot or mermaid\n"
		"      --no-replay          do not check the graph on libpam\n"
		"      --replay-all         replay every outcome of every edge\n"
		"  -k, --keep               keep the replay's directory\n"
		"  -l, --lib PATH           libpam_wrapper.so to preload\n"
		"  -m, --module-dir DIR     our modules' directory\n"
		"  -h, --help               this help\n"
		"\n"
		"Exit status: 0 no finding, 1 findings (bypass, lockout, dead-line,\n"
		"ignored), 2 usage error, unreadable service, failed replay.\n");
}

static int add_model(struct xp_opts *o, const char *arg)
{
	const char *eq = strrchr(arg, '=');
	struct xp_model *v;
	xp_set s;

	if (eq == NULL || eq == arg || xp_parse_outcomes(eq + 1, &s) != 0)
		return -1;
	v = reallocarray(o->models, o->nmodels + 1, sizeof(*v));
	if (v == NULL)
		return -1;
	o->models = v;
	v[o->nmodels].outcomes = s;
	v[o->nmodels].target = strndup(arg, (size_t)(eq - arg));
	return v[o->nmodels++].target != NULL ? 0 : -1;
}

static int parse_type(const char *s)
{
	if (strcmp(s, "all") == 0)
		return XP_ALL_TYPES;
	for (int t = 0; t < XP_NTYPES; t++)
		if (strcmp(s, pwrap_group_name(t)) == 0)
			return t;
	return -2;
}

int explore_main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{"service-dir", required_argument, NULL, 'd'},
		{"system", no_argument, NULL, 'S'},
		{"type", required_argument, NULL, 't'},
		{"outcomes", required_argument, NULL, 'O'},
		{"model", required_argument, NULL, 'M'},
		{"must", required_argument, NULL, 'U'},
		{"format", required_argument, NULL, 'f'},
		{"no-replay", no_argument, NULL, 'N'},
		{"replay-all", no_argument, NULL, 'A'},
		{"keep", no_argument, NULL, 'k'},
		{"lib", required_argument, NULL, 'l'},
		{"module-dir", required_argument, NULL, 'm'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	struct xp_opts o = { .type = XP_ALL_TYPES };
	struct xp_report r[XP_NTYPES], *rp[XP_NTYPES];
	struct xp_conf c = { 0 };
	struct pwrap_paths paths = { 0 };
	enum xp_format fmt = XP_HUMAN;
	const char *dir = NULL, *lib = NULL, *moddir = NULL;
	char *sysmod = NULL, *e = NULL, *top = NULL, **args = argv + 1;
	int system = 0, ch, n, status = EXIT_USAGE;
	pid_t pid = -1;

	/* getopt sees "explore" as its program name */
	while ((ch = getopt_long(argc - 1, args, "d:t:f:kl:m:h", lopts, NULL)) != -1) {
		switch (ch) {
		case 'd':
			dir = optarg;
			break;
		case 'S':
			system = 1;
			break;
		case 't':
			if ((o.type = parse_type(optarg)) == -2)
				errx(EXIT_USAGE, "--type: auth, account, password, "
				     "session or all, not \"%s\"", optarg);
			break;
		case 'O':
			if (xp_parse_outcomes(optarg, &o.outcomes) != 0)
				errx(EXIT_USAGE, "--outcomes: not a list of PAM "
				     "codes: \"%s\"", optarg);
			break;
		case 'M':
			if (add_model(&o, optarg) != 0)
				errx(EXIT_USAGE, "--model: expected MODULE=CODE,"
				     "CODE... (e.g. pam_unix=success,auth_err), "
				     "not \"%s\"", optarg);
			break;
		case 'U':
			o.must = reallocarray(o.must, o.nmust + 1, sizeof(char *));
			if (o.must == NULL)
				err(EXIT_USAGE, "out of memory");
			o.must[o.nmust++] = optarg;
			break;
		case 'f':
			if (strcmp(optarg, "human") == 0)
				fmt = XP_HUMAN;
			else if (strcmp(optarg, "json") == 0)
				fmt = XP_JSON;
			else if (strcmp(optarg, "dot") == 0)
				fmt = XP_DOT;
			else if (strcmp(optarg, "mermaid") == 0)
				fmt = XP_MERMAID;
			else
				errx(EXIT_USAGE, "--format: human, json, dot or "
				     "mermaid, not \"%s\"", optarg);
			break;
		case 'N':
			o.no_replay = true;
			break;
		case 'A':
			o.replay_all = true;
			break;
		case 'k':
			o.keep = true;
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
		default:
			usage(stderr);
			return EXIT_USAGE;
		}
	}
	if (optind != argc - 2)
		errx(EXIT_USAGE, "expected one SERVICE (see --help)");
	if ((dir != NULL) == system)
		errx(EXIT_USAGE, "give either -d SERVICE_DIR or --system");
	if (dir != NULL && access(dir, X_OK) != 0)
		err(EXIT_USAGE, "%s", dir);
	if (pwrap_locate(lib, moddir, &paths) == 0)
		xp_moddir = paths.moddir;
	else if (!o.no_replay)
		goto out;
	if (!o.no_replay) {
		/* Like pamtest itself: never replay unwrapped, and the replay
		 * runs in a child, so that whatever signal ends us its
		 * directories go (--keep: kept). */
		if (pwrap_reexec_wrapped(REEXEC_MARK, paths.lib, paths.lib, argv) < 0)
			goto out;
		pid = pwrap_guard_run("pamtest-explore", o.keep, &top,
				      &status, NULL);
		if (pid != 0)
			goto out;
	}
	sysmod = system_module_dir();
	xp_sysmoddir = sysmod;
	n = xp_explore(dir, args[optind], &o, &c, r, &e);
	if (n < 0) {
		warnx("%s", e != NULL ? e : "failed");
		goto out;
	}
	status = 0;
	for (int i = 0; i < n; i++) {
		rp[i] = &r[i];
		if (r[i].nf > 0 && status == 0)
			status = 1;
		if (r[i].disagree != NULL)
			status = EXIT_USAGE;
	}
	xp_print(stdout, fmt, rp, (size_t)n, o.type == XP_ALL_TYPES);
	for (int i = 0; i < n; i++) {
		if (r[i].disagree != NULL && fmt != XP_HUMAN)
			warnx("%s", r[i].disagree);
		xp_report_free(&r[i]);
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		warn("stdout");
		status = EXIT_USAGE;
	}
out:
	xp_conf_free(&c);
	for (size_t i = 0; i < o.nmodels; i++)
		free(o.models[i].target);
	free(o.models);
	free(o.must);
	free(e);
	free(sysmod);
	pwrap_paths_free(&paths);
	if (top != NULL && pid != 0 && pwrap_rmtree(top) != 0)
		warnx("could not remove %s", top);
	free(top);
	return status;
}
