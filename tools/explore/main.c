/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * `pamtest explore`: the command line (pamtest-explore(1)) and
 * xp_explore(), one exploration as the command and the scenario runner
 * use it: read the service, give every line its outcomes, build the graph
 * of each group, analyse it and replay it on libpam.
 *
 * The replay needs libpam_wrapper.so in the process: like pamtest itself,
 * the command preloads it and starts again once (not with --no-replay),
 * and the work runs in a guarded child (pwrap_guard.c).  Exit status: 0
 * nothing found, 1 findings, 2 usage, a service that cannot be read, or a
 * replay that could not run or disagreed with the graph.  With --diff
 * (diff.c) two versions are compared: 1 means a new way in.
 */
#define _GNU_SOURCE
#include "explore.h"
#include "pwrap_buf.h"
#include "pwrap_guard.h"
#include "pwrap_tool.h"

#include <err.h>
#include <getopt.h>
#include <security/pam_appl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define EXIT_USAGE 2
#define REEXEC_MARK "PAMTEST_EXPLORE_WRAPPED"

/* dir as libpam_wrapper names it: absolute (a relative one below the
 * working directory), without trailing slashes.  Malloc'd. */
static char *absolute(const char *dir)
{
	char *cwd = dir[0] == '/' ? NULL : getcwd(NULL, 0);
	char *abs = NULL;
	size_t n;

	if (dir[0] != '/' && cwd == NULL) {
		return NULL;
	}
	if (asprintf(&abs, "%s%s%s", cwd ? cwd : "", cwd ? "/" : "", dir) < 0) {
		abs = NULL;
	}
	for (n = abs != NULL ? strlen(abs) : 0; n > 1 && abs[n - 1] == '/'; n--) {
		abs[n - 1] = '\0';
	}
	free(cwd);
	return abs;
}

/* One group's report: a refused configuration's lockout, or the graph's
 * findings; then its replay.  0 or -1 (no memory). */
static int explore_type(struct xp_conf *c, enum xp_type t,
			const struct xp_opts *o, struct xp_replayer *rp,
			struct xp_report *x)
{
	memset(x, 0, sizeof(*x));
	x->service = c->service;
	x->type = t;
	x->refused = c->refused;
	if (c->refused != NULL) {
		struct xp_path p = { .result = PAM_ABORT };

		x->g.conf = c;
		x->g.type = t;
		if (xp_add_lockout(x, c->refused, &p) != 0) {
			return -1;
		}
	} else if (xp_graph_build(&x->g, c, t, o->replay_all) != 0 ||
		   xp_analyse(x, o) != 0) {
		return -1;
	}
	if (xp_accept(x, o) != 0) {
		return -1;
	}
	if (rp != NULL) {
		xp_replay_run(rp, x, o->stop);
	}
	return 0;
}

int xp_explore(const char *dir, const char *service, const struct xp_opts *o,
	       struct xp_conf *c, struct xp_report *r, char **err)
{
	struct xp_replayer *rp = NULL;
	char *abs = absolute(dir);
	int n = 0, t0 = o->type == XP_ALL_TYPES ? 0 : o->type;
	int t1 = o->type == XP_ALL_TYPES ? XP_NTYPES : o->type + 1;

	*err = NULL;
	memset(c, 0, sizeof(*c));
	if (abs == NULL || xp_read(c, abs, service, o) != 0) {
		*err = strdup(c->error != NULL ? c->error : "out of memory");
		free(abs);
		return -1;
	}
	free(abs);
	if (o->after_read != NULL) {
		o->after_read(c, o->ctx);
	}
	if (xp_apply_outcomes(c, o) != 0) {
		*err = strdup("bad --model");
		return -1;
	}
	if (!o->no_replay && (rp = xp_replay_begin(c, err)) == NULL) {
		return -1;
	}
	for (int t = t0; t < t1; t++, n++) {
		if (explore_type(c, (enum xp_type)t, o, rp, &r[n]) != 0) {
			for (int i = 0; i <= n; i++) {
				xp_report_free(&r[i]);
			}
			xp_replay_end(rp);
			*err = strdup("out of memory");
			return -1;
		}
	}
	xp_replay_end(rp);
	return n;
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: pamtest explore [-d SERVICE_DIR | --system] SERVICE [options]\n"
		"       pamtest explore --diff OLD_DIR NEW_DIR SERVICE [options]\n"
		"The decision table of a PAM stack: every outcome of every module,\n"
		"checked on the real libpam (see pamtest-explore(1)).\n"
		"\n"
		"  -d, --service-dir DIR    read SERVICE from DIR (includes resolve there)\n"
		"      --system             read SERVICE from /etc/pam.d (never changed)\n"
		"      --diff OLD_DIR       compare OLD_DIR's SERVICE with NEW_DIR's (either\n"
		"                           may be --system): exit 1 on a new way in\n"
		"  -t, --type TYPE          auth, account, password, session or all (default)\n"
		"      --outcomes LIST      outcomes of every module (success,auth_err,...)\n"
		"      --model MODULE=LIST  outcomes of one module (or FILE:LINE), present or not\n"
		"      --must MODULE        MODULE must decide (bypass, ignored findings)\n"
		"      --accept KIND:FILE:LINE  accept a known finding (exit 0 for it)\n"
		"      --accept-file FILE   accept the findings FILE lists, one a line\n"
		"  -f, --format FORMAT      human (default), json, dot or mermaid\n"
		"      --no-replay          do not check the graph on libpam\n"
		"      --replay-all         replay every outcome of every edge\n"
		"  -k, --keep               keep the wrapper's directory of the replays\n"
		"  -l, --lib PATH           libpam_wrapper.so to preload\n"
		"  -m, --module-dir DIR     our modules' directory\n"
		"  -h, --help               this help\n"
		"\n"
		"Exit status: 0 no finding (but accepted ones), 1 findings (bypass,\n"
		"lockout, dead-line, ignored), 2 usage error, unreadable service,\n"
		"failed replay.  With --diff: 0 nothing succeeds that did not, 1\n"
		"something does, 2 errors.\n");
}

int xp_add_model(struct xp_model **v, size_t *n, const char *arg)
{
	const char *eq = strrchr(arg, '=');
	struct xp_model *nv;
	xp_set s;

	if (eq == NULL || eq == arg || xp_parse_outcomes(eq + 1, &s) != 0) {
		return -1;
	}
	nv = reallocarray(*v, *n + 1, sizeof(*nv));
	if (nv == NULL) {
		return -1;
	}
	*v = nv;
	nv[*n].outcomes = s;
	nv[*n].target = strndup(arg, (size_t)(eq - arg));
	return nv[(*n)++].target != NULL ? 0 : -1;
}

int xp_parse_type(const char *s)
{
	int g = pwrap_group_parse(s, false);

	return strcmp(s, "all") == 0 ? XP_ALL_TYPES : g >= 0 ? g : -2;
}

/* The command line. */
struct cmd {
	struct xp_opts o;
	enum xp_format fmt;
	const char *dir, *lib, *moddir, *service;
	const char *diff;	/* --diff: the old directory */
	char **args;		/* the operands */
	int nargs;
	bool keep, system;
};

static void parse(int argc, char **argv, struct cmd *c)
{
	static const struct option lopts[] = {
		{"service-dir", required_argument, NULL, 'd'},
		{"system", no_argument, NULL, 'S'},
		{"diff", required_argument, NULL, 'D'},
		{"type", required_argument, NULL, 't'},
		{"outcomes", required_argument, NULL, 'O'},
		{"model", required_argument, NULL, 'M'},
		{"must", required_argument, NULL, 'U'},
		{"accept", required_argument, NULL, 'a'},
		{"accept-file", required_argument, NULL, 'F'},
		{"format", required_argument, NULL, 'f'},
		{"no-replay", no_argument, NULL, 'N'},
		{"replay-all", no_argument, NULL, 'A'},
		{"keep", no_argument, NULL, 'k'},
		{"lib", required_argument, NULL, 'l'},
		{"module-dir", required_argument, NULL, 'm'},
		{"help", no_argument, NULL, 'h'},
		{NULL, 0, NULL, 0},
	};
	static const char *const fmts[] = { "human", "json", "dot", "mermaid" };
	bool system = false;
	int ch, i;

	/* getopt sees "explore" as its program name */
	while ((ch = getopt_long(argc - 1, argv + 1, "d:t:f:kl:m:h", lopts,
				 NULL)) != -1) {
		switch (ch) {
		case 'd':
			c->dir = optarg;
			break;
		case 'S':
			system = true;
			break;
		case 'D':
			c->diff = optarg;
			break;
		case 't':
			if ((c->o.type = xp_parse_type(optarg)) < XP_ALL_TYPES) {
				errx(EXIT_USAGE, "--type: auth, account, password, "
				     "session or all, not \"%s\"", optarg);
			}
			break;
		case 'O':
			if (xp_parse_outcomes(optarg, &c->o.outcomes) != 0) {
				errx(EXIT_USAGE, "--outcomes: not a list of PAM "
				     "codes: \"%s\"", optarg);
			}
			break;
		case 'M':
			if (xp_add_model(&c->o.models, &c->o.nmodels, optarg) != 0) {
				errx(EXIT_USAGE, "--model: expected MODULE=CODE,"
				     "CODE... (e.g. pam_unix=success,auth_err), "
				     "not \"%s\"", optarg);
			}
			break;
		case 'U':
			c->o.must = reallocarray(c->o.must, c->o.nmust + 1,
						 sizeof(char *));
			if (c->o.must == NULL) {
				err(EXIT_USAGE, "out of memory");
			}
			c->o.must[c->o.nmust++] = optarg;
			break;
		case 'a':
			if (xp_add_accept(&c->o.accepts, &c->o.naccepts, optarg,
					  "--accept") != 0) {
				errx(EXIT_USAGE, "--accept: expected KIND:FILE:LINE "
				     "(KIND: bypass, lockout, dead-line or "
				     "ignored), not \"%s\"", optarg);
			}
			break;
		case 'F':
			if (xp_read_accepts(optarg, &c->o.accepts,
					    &c->o.naccepts) != 0) {
				exit(EXIT_USAGE);
			}
			break;
		case 'f':
			for (i = 0; i < 4 && strcmp(optarg, fmts[i]) != 0; i++) {
			}
			if (i == 4) {
				errx(EXIT_USAGE, "--format: human, json, dot or "
				     "mermaid, not \"%s\"", optarg);
			}
			c->fmt = (enum xp_format)i;
			break;
		case 'N':
			c->o.no_replay = true;
			break;
		case 'A':
			c->o.replay_all = true;
			break;
		case 'k':
			c->keep = true;
			break;
		case 'l':
			c->lib = optarg;
			break;
		case 'm':
			c->moddir = optarg;
			break;
		case 'h':
			usage(stdout);
			exit(0);
		default:
			usage(stderr);
			exit(EXIT_USAGE);
		}
	}
	c->args = argv + optind + 1;
	c->nargs = argc - 1 - optind;
	c->service = c->nargs == 1 ? c->args[0] : NULL;
	c->system = system;
}

/* --diff OLD_DIR NEW_DIR SERVICE, NEW_DIR also as -d or --system, either
 * as --system. */
static void check_diff(struct cmd *c)
{
	if (c->nargs == 2 && c->dir == NULL && !c->system) {
		c->dir = c->args[0];
		c->service = c->args[1];
	}
	if (c->service == NULL || (c->dir == NULL && !c->system)) {
		errx(EXIT_USAGE, "expected --diff OLD_DIR NEW_DIR SERVICE (see "
		     "--help)");
	}
	if (strcmp(c->diff, "--system") == 0) {
		c->diff = "/etc/pam.d";
	} else if (access(c->diff, X_OK) != 0) {
		err(EXIT_USAGE, "%s", c->diff);
	}
	if (c->fmt != XP_HUMAN && c->fmt != XP_JSON) {
		errx(EXIT_USAGE, "--diff: the format is human or json");
	}
}

/* What the options say together. */
static void check_args(struct cmd *c)
{
	if (c->diff != NULL) {
		check_diff(c);
	}
	if (c->service == NULL) {
		errx(EXIT_USAGE, "expected one SERVICE (see --help)");
	}
	if ((c->dir != NULL) == c->system) {
		errx(EXIT_USAGE, "give either -d SERVICE_DIR or --system");
	}
	if (c->dir != NULL && access(c->dir, X_OK) != 0) {
		err(EXIT_USAGE, "%s", c->dir);
	}
	if (c->system) {
		c->dir = "/etc/pam.d";
	}
}

/* A message for the user on stderr, its bytes as text (a file name may
 * hold any byte). */
static void say(const char *msg)
{
	struct pwrap_buf b = { 0 };

	pwrap_buf_text(&b, msg);
	warnx("%s", b.failed || b.p == NULL ? "?" : b.p);
	pwrap_buf_free(&b);
}

/* What libpam does with the name given, said once: the name it reads
 * (Linux-PAM: after the last '/', in lower case) and "other" in place of
 * a missing service file. */
static void notes(const struct cmd *cmd, const struct xp_conf *c)
{
	char *m = NULL;

	if (strcmp(cmd->service, c->service) != 0 &&
	    asprintf(&m, "libpam reads service \"%s\" as \"%s\"",
		     cmd->service, c->service) >= 0) {
		say(m);
		free(m);
		m = NULL;
	}
	if (c->s.service_file < 0 && c->s.other_file >= 0 &&
	    strcmp(c->service, "other") != 0 &&
	    asprintf(&m, "no service file %s/%s: libpam uses other", c->dir,
		     c->service) >= 0) {
		say(m);
		free(m);
	}
}

/* Accepts that matched no finding (a finding gone, or a typo). */
static void unused_accepts(const struct xp_opts *o, struct xp_report *r,
			   int n)
{
	for (size_t k = 0; k < o->naccepts; k++) {
		bool used = false;
		char *m = NULL;

		for (int i = 0; i < n && !used; i++) {
			for (size_t j = 0; j < r[i].nacc && !used; j++) {
				used = r[i].acc[j].accept == (int)k;
			}
		}
		if (!used && asprintf(&m, "%s: accepted finding %s:%s did not "
				      "occur", o->accepts[k].from,
				      xp_finding_name(o->accepts[k].kind),
				      o->accepts[k].where) >= 0) {
			say(m);
			free(m);
		}
	}
}

/* The work's parent, and whether it is gone (SIGKILL: then nobody reads
 * our output or removes our directory). */
static pid_t parent;

static bool orphaned(void)
{
	return parent != 0 && getppid() != parent;
}

/* Compares, prints; the exit status. */
static int run_diff(struct cmd *cmd)
{
	struct xp_diff d;
	int status;

	if (xp_diff(&d, cmd->diff, cmd->dir, cmd->service, &cmd->o) != 0) {
		warnx("%s", d.error != NULL ? d.error : "out of memory");
		xp_diff_free(&d);
		return EXIT_USAGE;
	}
	status = xp_diff_status(&d);
	xp_diff_print(stdout, cmd->fmt, &d, cmd->o.type == XP_ALL_TYPES);
	for (int s = 0; s < 2 && cmd->fmt != XP_HUMAN; s++) {
		for (int k = 0; k < d.n[s]; k++) {
			if (d.r[s][k].disagree != NULL) {
				warnx("%s: %s", d.dir[s], d.r[s][k].disagree);
			}
		}
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		warn("stdout");
		status = EXIT_USAGE;
	}
	xp_diff_free(&d);
	return status;
}

/* Explores, prints; the exit status. */
static int run(struct cmd *cmd)
{
	struct xp_report r[XP_NTYPES], *rp[XP_NTYPES];
	struct xp_conf c = { 0 };
	char *e = NULL;
	int n, status = 0;

	n = xp_explore(cmd->dir, cmd->service, &cmd->o, &c, r, &e);
	if (orphaned()) {
		for (int i = 0; i < n; i++) {
			xp_report_free(&r[i]);
		}
		xp_conf_free(&c);
		free(e);
		return EXIT_USAGE;
	}
	if (n < 0) {
		say(e != NULL ? e : "failed");
		status = EXIT_USAGE;
	} else {
		notes(cmd, &c);
		unused_accepts(&cmd->o, r, n);
	}
	for (int i = 0; i < n; i++) {
		rp[i] = &r[i];
		status = r[i].disagree != NULL ? EXIT_USAGE
			 : r[i].nf > 0 && status == 0 ? 1
						       : status;
	}
	if (n > 0) {
		xp_print(stdout, cmd->fmt, rp, (size_t)n,
			 cmd->o.type == XP_ALL_TYPES);
	}
	for (int i = 0; i < n; i++) {
		if (r[i].disagree != NULL && cmd->fmt != XP_HUMAN) {
			say(r[i].disagree);
		}
		xp_report_free(&r[i]);
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		warn("stdout");
		status = EXIT_USAGE;
	}
	xp_conf_free(&c);
	free(e);
	return status;
}

int explore_main(int argc, char **argv)
{
	struct cmd cmd = { .o = { .type = XP_ALL_TYPES }, .fmt = XP_HUMAN };
	struct pwrap_paths paths = { 0 };
	char *sysmod = NULL;
	struct pwrap_tmp *top = NULL;
	int status = EXIT_USAGE;
	pid_t pid = 0, outer;

	parse(argc, argv, &cmd);
	check_args(&cmd);
	/* the process that forks the replaying child (the re-executed one
	 * keeps the pid): the child compares its parent with it, not with
	 * its first getppid(), which is already the reaper if we were
	 * killed before the child got that far */
	outer = getpid();
	if (pwrap_locate(cmd.lib, cmd.moddir, &paths) != 0 && !cmd.o.no_replay) {
		goto out;
	}
	/* Like pamtest itself: never replay unwrapped, and the replays run
	 * in a child, so that whatever signal ends us its directories go */
	if (!cmd.o.no_replay &&
	    (pid = pwrap_guard_wrapped(REEXEC_MARK, paths.lib, paths.lib, argv,
				       "pamtest-explore", cmd.keep, NULL, NULL,
				       &top, &status)) != 0) {
		goto out;
	}
	/* --keep: the wrapper keeps this process's runtime directory */
	if (cmd.keep && setenv("PAM_WRAPPER_KEEP_DIR", "1", 1) != 0) {
		goto out;
	}
	sysmod = system_module_dir();
	cmd.o.sysmoddir = sysmod;
	cmd.o.moddir = paths.moddir;
	/* the replaying child stops when its parent is gone (killed): our
	 * caller then has no one to remove the directory, so we do */
	if (!cmd.o.no_replay) {
		parent = outer;
		cmd.o.stop = orphaned;
	}
	status = cmd.diff != NULL ? run_diff(&cmd) : run(&cmd);
	if (orphaned()) {
		if (top != NULL) {
			(void)pwrap_tmp_remove(top);	/* frees top */
		}
		top = NULL;
		goto out;
	}
	if (cmd.keep && getenv("PAM_WRAPPER_RUNTIME_DIR") != NULL) {
		/* (the variable names its services/) */
		const char *rt = getenv("PAM_WRAPPER_RUNTIME_DIR");
		const char *end = strrchr(rt, '/');

		fprintf(stderr, "pamtest explore: the replays' runtime "
			"directory %.*s (kept)\n",
			end != NULL ? (int)(end - rt) : (int)strlen(rt), rt);
	}
out:
	for (size_t i = 0; i < cmd.o.nmodels; i++) {
		free(cmd.o.models[i].target);
	}
	free(cmd.o.models);
	free(cmd.o.must);
	xp_accepts_free(cmd.o.accepts, cmd.o.naccepts);
	free(sysmod);
	pwrap_paths_free(&paths);
	pwrap_guard_finish(pid, top);
	return status;
}
