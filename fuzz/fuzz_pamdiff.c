/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * libFuzzer target: the service-file rewriter (src/pamconf)
 * against the REAL libpam.  This target does not stub libpam: it links it,
 * and forks a child per transaction so that whatever libpam does (loading
 * modules, looping forever, crashing) stays in the child.
 *
 * Input: up to three files separated by a 0x01 byte: "svc", "inc1", "inc2"
 * (a further 0x01 is part of inc2).  Before they are written, "@A@" becomes
 * the directory A they are written to and "@M@" the system's module
 * directory (found from libpam.so.0's path), so an input can name
 * "@A@/inc1" as an include target and "@M@/pam_permit.so" as a module.
 *
 * Directory A gets the files as they are; directory B (a path of the same
 * length) gets the rewriter's output for svc and for every file it includes
 * (transitively, as the wrapper does it), with include targets "<A>/..."
 * replaced by "<B>/..." and everything else kept.
 *
 * Both directories also hold the same include targets that are not plain
 * files, made once, which an input names like its own files (the wrapper's
 * own answers to them, an empty copy or a refusal, are test_differential's
 * part; here they test the rewriter's lines around such targets):
 *   @A@/dir     a directory (libpam reads it as empty)
 *   @A@/empty   an empty file
 *   /dev/null   (kept as written on both sides)
 *   @A@/secret  a file of mode 0 (libpam cannot open it as nobody, so the
 *               stack including it fails: in B too)
 *   @A@/fifo    a FIFO without a writer: libpam blocks opening it (the
 *               wrapper refuses such an include target at pam_start; as
 *               a module, dlopen() blocks on both sides); a hang on both
 *               sides of an input that names it agrees
 *   @A@/d1      the first of a chain d1 ... d40, each "@include"-ing the
 *               next, the last "@include @A@/inc2": inc2 read 40 levels
 *               deep (more than the wrapper's old limit of 32)  Then one child runs
 * pam_start_confdir("svc", "alice", conv, A) and the next runs the same on B
 * (where libpam has no pam_start_confdir, Linux-PAM 1.3: pam_start with the
 * directory mounted over /etc/pam.d in a private mount namespace,
 * tests/common/pwrap_ns.c),
 * each followed by pam_authenticate, pam_setcred(PAM_ESTABLISH_CRED),
 * pam_acct_mgmt, pam_open_session, pam_close_session, pam_chauthtok(0) and
 * pam_end; each child reports the return codes and every message the modules
 * sent (pam_echo's and pam_debug's arguments come back that way), and is
 * killed by alarm(2) if it takes longer ("hang").
 *
 * Directory C gets the same rewrites with the module trace on (every
 * module line names the trace's stand-in, pwrap_trace_conf.c), and a third
 * child runs them as the wrapper does with PAM_WRAPPER_TRACE set: the trace
 * state of pwrap_trace.c around every call (compiled into this target, the
 * stand-in built next to it in pam_wrapper/), the real modules loaded at
 * pam_start.  B and C must give the same results (the trace changes
 * nothing libpam does), and the start and result records the trace wrote
 * must be C's results.
 *
 * The results of A and B must be identical.  When the rewriter refused a file that
 * the service reads (pwrap_rewrite() returned -1), the wrapper's
 * pam_start() returns PAM_ABORT: that agrees when libpam hung or crashed on
 * the original (the reasons the rewriter refuses a file) or its pam_start()
 * also failed with PAM_ABORT.  A refusal with E2BIG is always a disagreement
 * (with paths of equal length no line grows).  A disagreement is checked
 * once more (a fork under load can be slow), then both files, both
 * rewrites and both results are printed and the target aborts, so libFuzzer
 * keeps the input.
 *
 * Safety: the children run real PAM modules.  Any "pam_<word>" other than
 * pam_permit, pam_deny, pam_debug, pam_echo, pam_warn and pam_nonexistent
 * becomes "pam~<word>" (in the input, before anything else) and an input
 * with an include target outside A (libpam would read /etc/pam.d) is
 * skipped: no module that executes commands or changes the system is
 * loaded.  As root the children
 * run as nobody (the scratch directory is then below /tmp when the given
 * one is not reachable for nobody).
 *
 * Scratch space: a directory made with mkdtemp below $PWRAP_FUZZ_TMPDIR,
 * $TMPDIR or /tmp, removed at exit.  PWRAP_PAMDIFF_VERBOSE=1 prints both
 * results of every input; with PWRAP_PAMDIFF_KEEP set, the files of a
 * disagreement stay (A and B are printed).
 */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <limits.h>
#include <poll.h>
#include <security/pam_appl.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pwrap_private.h"
#include "pwrap_trace.h"
#if defined(PWRAP_FUZZ_NS)
#include "pwrap_ns.h"
#endif

#define NFILES 3
#define SEP '\x01'
#define CHILD_ALARM 2

static const char *const names[NFILES] = { "svc", "inc1", "inc2" };

static char top[PATH_MAX];	/* private scratch directory */
static char dir_a[PATH_MAX];	/* top/A: the files as written */
static char dir_b[PATH_MAX];	/* top/B: their rewrites */
static char dir_c[PATH_MAX];	/* top/C: their rewrites for the trace */
static char trace_file[PATH_MAX];	/* top/trace.json: C's records */
static size_t dir_len;		/* strlen(dir_a) == strlen(dir_b) == ..._c */
static char moddir[PATH_MAX];	/* the system's PAM module directory */
static char fifo_path[PATH_MAX];	/* A's FIFO */
static bool as_nobody;
static bool verbose;		/* PWRAP_PAMDIFF_VERBOSE=1: print results */

/* What happened to the inputs, printed at exit. */
static struct {
	unsigned long inputs, ran, refused, hung, crashed;
	unsigned long neutralised, skip_foreign, skip_cycle, fifo;
} stats;

/* The trace's code (compiled in) finds our module directory, pam_wrapper/
 * next to this program, through this symbol, as the wrapper's through its
 * own: the stand-in is built there. */
bool pwrap_enabled(void)
{
	return true;
}

/* The wrapper's module links (pwrap_libpam.c) ask the runtime directory
 * whether a failed write means a full base; here there is no runtime
 * directory to move, only the answer. */
bool pwrap_rundir_no_space(int err)
{
	return err == ENOSPC || err == EDQUOT;
}

/* The chain of includes below A and B (see the top). */
#define CHAIN 40

/* ---- setup and cleanup ------------------------------------------------- */

static void die(const char *what)
{
	fprintf(stderr, "fuzz_pamdiff: %s: %s\n", what, strerror(errno));
	abort();
}

static void clear_dir(const char *dir)
{
	char p[PATH_MAX];
	size_t i;

	for (i = 0; i < NFILES; i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, names[i]);
		(void)unlink(p);
	}
}

static const char *const specials[] = { "empty", "secret", "fifo" };

static void clear_specials(const char *dir)
{
	char p[PATH_MAX];
	size_t i;

	for (i = 0; i < sizeof(specials) / sizeof(specials[0]); i++) {
		snprintf(p, sizeof(p), "%s/%s", dir, specials[i]);
		(void)unlink(p);
	}
	snprintf(p, sizeof(p), "%s/dir", dir);
	(void)rmdir(p);
	for (i = 1; i <= CHAIN; i++) {
		snprintf(p, sizeof(p), "%s/d%zu", dir, i);
		(void)unlink(p);
	}
}

static void cleanup(void)
{
	if (stats.inputs > 0) {
		fprintf(stderr, "fuzz_pamdiff: %lu inputs: %lu run (libpam hung "
			"on %lu, %lu of them naming the FIFO, crashed on %lu; "
			"the rewriter refused %lu; module names neutralised in "
			"%lu files), skipped: %lu for an include outside A, "
			"%lu for an include cycle\n",
			stats.inputs, stats.ran, stats.hung, stats.fifo,
			stats.crashed, stats.refused, stats.neutralised,
			stats.skip_foreign, stats.skip_cycle);
		stats.inputs = 0;
	}
	if (top[0] == '\0') {
		return;
	}
	clear_dir(dir_a);
	clear_dir(dir_b);
	clear_dir(dir_c);
	{
		char t[PATH_MAX];

		snprintf(t, sizeof(t), "%s/.t", dir_c);
		(void)pwrap_rmtree(t);
	}
	(void)unlink(trace_file);
	clear_specials(dir_a);
	clear_specials(dir_b);
	clear_specials(dir_c);
	(void)rmdir(dir_a);
	(void)rmdir(dir_b);
	(void)rmdir(dir_c);
	(void)rmdir(top);
	top[0] = '\0';
}

/* Whether every directory from path up to / can be searched by others. */
static bool others_can_reach(const char *path)
{
	char p[PATH_MAX];
	struct stat st;
	char *slash;

	snprintf(p, sizeof(p), "%s", path);
	for (;;) {
		if (stat(p[0] ? p : "/", &st) != 0 || !(st.st_mode & S_IXOTH)) {
			return false;
		}
		slash = strrchr(p, '/');
		if (slash == NULL || p[0] == '\0') {
			return true;
		}
		*slash = '\0';
	}
}

static void put(const char *dir, const char *name, const char *text,
		mode_t mode)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 ||
	    write(fd, text, strlen(text)) != (ssize_t)strlen(text) ||
	    fchmod(fd, mode) != 0 || close(fd) != 0) {
		die(path);
	}
}

/* The targets that are not plain files (see the top), in dir (A or B). */
static void make_specials(const char *dir)
{
	char path[PATH_MAX], text[PATH_MAX + 64];
	unsigned i;

	put(dir, "empty", "", 0644);
	put(dir, "secret", "auth optional pam_echo.so secret\n", 0);
	snprintf(path, sizeof(path), "%s/fifo", dir);
	if (mkfifo(path, 0644) != 0) {
		die(path);
	}
	snprintf(path, sizeof(path), "%s/dir", dir);
	if (mkdir(path, 0755) != 0) {
		die(path);
	}
	for (i = 1; i <= CHAIN; i++) {
		snprintf(path, sizeof(path), "d%u", i);
		if (i < CHAIN) {
			snprintf(text, sizeof(text), "@include %s/d%u\n", dir,
				 i + 1);
		} else {
			snprintf(text, sizeof(text), "@include %s/inc2\n", dir);
		}
		put(dir, path, text, 0644);
	}
}

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	const char *base = getenv("PWRAP_FUZZ_TMPDIR");
	Dl_info info;
	char *slash;

	(void)argc;
	(void)argv;
	if (base == NULL || base[0] == '\0') {
		base = getenv("TMPDIR");
	}
	if (base == NULL || base[0] != '/') {
		base = "/tmp";
	}
	if (geteuid() == 0 && !others_can_reach(base)) {
		base = "/tmp";	/* so that the children can run as nobody */
	}
	snprintf(top, sizeof(top), "%s/pwrap-pamdiff.XXXXXX", base);
	if (mkdtemp(top) == NULL) {
		die(top);
	}
	atexit(cleanup);
	snprintf(dir_a, sizeof(dir_a), "%s/A", top);
	snprintf(dir_b, sizeof(dir_b), "%s/B", top);
	snprintf(dir_c, sizeof(dir_c), "%s/C", top);
	snprintf(trace_file, sizeof(trace_file), "%s/trace.json", top);
	dir_len = strlen(dir_a);
	if (mkdir(dir_a, 0755) != 0 || mkdir(dir_b, 0755) != 0 ||
	    mkdir(dir_c, 0755) != 0 || chmod(top, 0755) != 0) {
		die("mkdir");
	}
	as_nobody = geteuid() == 0 && others_can_reach(top);
	verbose = getenv("PWRAP_PAMDIFF_VERBOSE") != NULL &&
		  getenv("PWRAP_PAMDIFF_VERBOSE")[0] == '1';

	/* <directory of libpam.so.0>/security, as libpam looks there */
	if (dladdr((void *)pam_start, &info) == 0 || info.dli_fname == NULL) {
		fprintf(stderr, "fuzz_pamdiff: cannot locate libpam\n");
		abort();
	}
	snprintf(moddir, sizeof(moddir), "%s", info.dli_fname);
	slash = strrchr(moddir, '/');
	if (slash == NULL) {
		fprintf(stderr, "fuzz_pamdiff: libpam at %s?\n", moddir);
		abort();
	}
	snprintf(slash, sizeof(moddir) - (size_t)(slash - moddir), "/security");
	make_specials(dir_a);
	make_specials(dir_b);
	make_specials(dir_c);
	snprintf(fifo_path, sizeof(fifo_path), "%s/fifo", dir_a);
	return 0;
}

/* ---- buffers ------------------------------------------------------------ */

struct buf {
	char *p;
	size_t len, cap;
};

static void buf_add(struct buf *b, const void *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->p = realloc(b->p, b->cap);
		if (b->p == NULL) {
			die("realloc");
		}
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}

static void buf_str(struct buf *b, const char *s)
{
	buf_add(b, s, strlen(s));
}

/* data with "@A@" and "@M@" expanded. */
static struct buf expand(const uint8_t *data, size_t n)
{
	struct buf b = { NULL, 0, 0 };
	size_t i = 0;

	buf_add(&b, "", 0);
	while (i < n) {
		if (n - i >= 3 && memcmp(data + i, "@A@", 3) == 0) {
			buf_str(&b, dir_a);
			i += 3;
		} else if (n - i >= 3 && memcmp(data + i, "@M@", 3) == 0) {
			buf_str(&b, moddir);
			i += 3;
		} else {
			buf_add(&b, data + i, 1);
			i++;
		}
	}
	return b;
}

/*
 * Makes every "pam_<word>" in the file name a harmless module (see the
 * top): any other becomes "pam~<word>", a module that does not exist (the
 * same change on both sides, so the input still tests the rewriter).
 * Returns whether it changed something.
 */
static bool neutralise_modules(struct buf *f)
{
	static const char *const ok[] = { "permit", "deny", "debug", "echo",
					  "warn", "nonexistent" };
	char *p = f->p;
	const char *end = f->p + f->len;
	bool changed = false;

	while ((p = memmem(p, (size_t)(end - p), "pam_", 4)) != NULL) {
		char *w = p + 4;
		size_t n = 0, i;
		bool good = false;

		while (w + n < end &&
		       ((w[n] >= 'a' && w[n] <= 'z') ||
			(w[n] >= 'A' && w[n] <= 'Z') ||
			(w[n] >= '0' && w[n] <= '9') || w[n] == '_')) {
			n++;
		}
		for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
			good |= strlen(ok[i]) == n && memcmp(w, ok[i], n) == 0;
		}
		if (!good) {
			p[3] = '~';
			changed = true;
		}
		p = w;
	}
	return changed;
}

static void write_file(const char *dir, const char *name, const char *p,
		       size_t n)
{
	char path[PATH_MAX];
	int fd;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0 || write(fd, p, n) != (ssize_t)n || close(fd) != 0) {
		die(path);
	}
}

/* ---- rewriting ---------------------------------------------------------- */

struct rw {
	char **targets;		/* include targets seen (A-side paths) */
	size_t n;
	bool foreign;		/* a target outside A: skip the input */
	const char *to;		/* the side written: dir_b or dir_c */
	char gpath[PATH_MAX];	/* the file being written */
};

static char *cb_include(void *ctx, const char *target, enum pamconf_stack stack,
			const char *src, unsigned line)
{
	struct rw *rw = ctx;
	char *r = NULL;

	(void)stack;
	(void)src;
	(void)line;
	if (strcmp(target, "/dev/null") == 0) {
		return NULL;	/* read as empty on both sides */
	}
	if (strncmp(target, dir_a, dir_len) != 0 ||
	    (target[dir_len] != '/' && target[dir_len] != '\0') ||
	    strstr(target, "/..") != NULL) {
		rw->foreign = true;
		return NULL;
	}
	rw->targets = realloc(rw->targets, (rw->n + 1) * sizeof(char *));
	if (rw->targets == NULL || (r = strdup(target)) == NULL ||
	    (rw->targets[rw->n] = strdup(target)) == NULL) {
		die("malloc");
	}
	rw->n++;
	memcpy(r, rw->to, dir_len);	/* same length: the line does not grow */
	return r;
}

/* An include line without a target stays as written: libpam crashes on
 * both sides when it reads the line, and skips it on both when the file is
 * read for another stack.  (The wrapper refuses the service instead when
 * libpam would read it: test_wrapper checks that part.) */
static int cb_bad_include(void *ctx, enum pamconf_stack stack,
			  enum pamconf_bad_include why, const char *target,
			  const char *src, unsigned line)
{
	(void)ctx;
	(void)stack;
	(void)target;
	(void)src;
	(void)line;
	/* too long: refused (E2BIG), which paths of equal length never
	 * cause, so that it shows as a disagreement */
	return why == PAMCONF_INCLUDE_NO_TARGET ? 0 : -1;
}

static char *cb_module(void *ctx, const char *module, bool quiet,
		       const char *src, unsigned line)
{
	(void)ctx;
	(void)module;
	(void)quiet;
	(void)src;
	(void)line;
	return NULL;	/* keep */
}

/* Side C: the module line as the wrapper writes it for the trace. */
static char *cb_trace(void *ctx, const struct pamconf_module_line *ml)
{
	const struct rw *rw = ctx;

	return pwrap_trace_line(dir_c, rw->gpath, ml);
}

/* Which of our files (index) the A-side path names, or -1; a file of
 * the chain leads to inc2. */
static int file_of(const char *path, const struct stat *ours)
{
	struct stat st;
	char *end = NULL;
	int i;

	if (strncmp(path + dir_len, "/d", 2) == 0 &&
	    strtoul(path + dir_len + 2, &end, 10) >= 1 && end != NULL &&
	    *end == '\0' && stat(path, &st) == 0) {
		return ours[2].st_ino != 0 ? 2 : -1;
	}
	if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
		return -1;
	}
	for (i = 0; i < NFILES; i++) {
		if (ours[i].st_ino != 0 && ours[i].st_dev == st.st_dev &&
		    ours[i].st_ino == st.st_ino) {
			return i;
		}
	}
	return -1;
}

struct side {
	struct buf in[NFILES];	/* expanded input files */
	bool present[NFILES];
	char *out[NFILES];	/* rewrites (NULL: not reached or refused) */
	size_t out_len[NFILES];
	char *out_c[NFILES];	/* the same for the trace */
	size_t out_c_len[NFILES];
	int refused;		/* index of a refused file, or -1 */
	int refused_errno;
	bool fifo;		/* a file names the FIFO (as an include target,
				 * or as a module libpam dlopen()s) */
};

/* Whether a cycle of includes is reachable from file f (depth-first). */
static bool has_cycle(bool edge[NFILES][NFILES], int f, int *state)
{
	int t;

	state[f] = 1;	/* on the path */
	for (t = 0; t < NFILES; t++) {
		if (edge[f][t] && (state[t] == 1 ||
				   (state[t] == 0 &&
				    has_cycle(edge, t, state)))) {
			return true;
		}
	}
	state[f] = 2;	/* done */
	return false;
}

/*
 * Rewrites svc and, transitively, every file of ours it includes, as the
 * wrapper does.  Returns false to skip the input: an include target outside
 * A, or a cycle of includes (the wrapper refuses those before the rewriter
 * matters; libpam recurses until it fails, crashes or times out).
 */
static bool rewrite_all(struct side *s, bool traced)
{
	const struct pamconf_ops ops = {
		.include_target = cb_include,
		.module_path = cb_module,
		.bad_include = cb_bad_include,
		.module_line = traced ? cb_trace : NULL,
	};
	char **out = traced ? s->out_c : s->out;
	size_t *out_len = traced ? s->out_c_len : s->out_len;
	struct stat ours[NFILES];
	bool queued[NFILES] = { false };
	int queue[NFILES], qn = 0, qi;
	struct rw rw = { NULL, 0, false, traced ? dir_c : dir_b, "" };
	bool edge[NFILES][NFILES];
	int state[NFILES] = { 0 };
	char path[PATH_MAX];
	size_t k;
	int i;

	memset(edge, 0, sizeof(edge));

	memset(ours, 0, sizeof(ours));
	for (i = 0; i < NFILES; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir_a, names[i]);
		if (s->present[i] && stat(path, &ours[i]) != 0) {
			die(path);
		}
	}
	if (!traced) {
		s->refused = -1;
	}
	queue[qn++] = 0;
	queued[0] = true;
	for (qi = 0; qi < qn; qi++) {
		struct pamconf_ops o = ops;
		int f = queue[qi];

		o.ctx = &rw;
		rw.n = 0;
		snprintf(rw.gpath, sizeof(rw.gpath), "%s/%s", rw.to, names[f]);
		errno = 0;
		/* the rules of the libpam linked, the one that reads */
		if (pwrap_rewrite(pwrap_rules(), s->in[f].p, s->in[f].len,
				  names[f], &o, &out[f], &out_len[f]) != 0) {
			if (traced) {
				/* the trace never refuses what B took */
				if (s->refused != f) {
					fprintf(stderr, "fuzz_pamdiff: %s "
						"refused only when traced\n",
						names[f]);
					abort();
				}
			} else if (s->refused < 0) {
				s->refused = f;
				s->refused_errno = errno;
			}
			out[f] = NULL;
		}
		for (k = 0; k < rw.n; k++) {
			int t = file_of(rw.targets[k], ours);

			if (t >= 0) {
				edge[f][t] = true;
			}
			if (t >= 0 && !queued[t]) {
				queued[t] = true;
				queue[qn++] = t;
			}
			free(rw.targets[k]);
		}
		if (rw.foreign) {
			break;
		}
	}
	free(rw.targets);
	if (rw.foreign) {
		stats.skip_foreign++;
		return false;
	}
	if (has_cycle(edge, 0, state)) {
		stats.skip_cycle++;
		return false;
	}
	return true;
}

/* ---- running libpam ------------------------------------------------------ */

static char msgs[8192];
static size_t msgs_len;

static void res_add(const char *s)
{
	size_t n = strlen(s);

	if (msgs_len + n >= sizeof(msgs)) {
		n = sizeof(msgs) - 1 - msgs_len;
	}
	memcpy(msgs + msgs_len, s, n);
	msgs_len += n;
	msgs[msgs_len] = '\0';
}

static void res_rc(const char *name, int rc)
{
	char b[64];

	snprintf(b, sizeof(b), "%s%s=%d", msgs_len ? " " : "", name, rc);
	res_add(b);
}

static int conv(int n, const struct pam_message **msg,
		struct pam_response **resp, void *data)
{
	struct pam_response *r;
	char b[8];
	int i;

	(void)data;
	if (n <= 0 || (r = calloc((size_t)n, sizeof(*r))) == NULL) {
		return PAM_CONV_ERR;
	}
	for (i = 0; i < n; i++) {
		const unsigned char *p = (const unsigned char *)msg[i]->msg;

		if (msg[i]->msg_style == PAM_PROMPT_ECHO_OFF ||
		    msg[i]->msg_style == PAM_PROMPT_ECHO_ON) {
			r[i].resp = strdup("secret");
			continue;
		}
		snprintf(b, sizeof(b), " {%d:", msg[i]->msg_style);
		res_add(b);
		for (; p != NULL && *p != '\0'; p++) {
			if (*p < 0x20 || *p > 0x7e || *p == '\\' || *p == '}') {
				snprintf(b, sizeof(b), "\\x%02x", *p);
			} else {
				b[0] = (char)*p;
				b[1] = '\0';
			}
			res_add(b);
		}
		res_add("}");
	}
	*resp = r;
	return PAM_SUCCESS;
}

/* The application's call, as the wrapper's pwrap_trace_api.c makes it. */
static int call(bool traced, pam_handle_t *ph, enum pwrap_sm sm, int flags,
		int (*fn)(pam_handle_t *, int))
{
	bool t = traced && pwrap_trace_call_before(ph);
	int rc = fn(ph, flags);

	if (t) {
		pwrap_trace_call_after(ph, sm, flags, rc);
	}
	return rc;
}

/* In the child: one transaction on dir (traced: as the wrapper does with
 * PAM_WRAPPER_TRACE), the result line to fd; _exits. */
static void __attribute__((noreturn)) child(const char *dir, int fd,
					    bool traced)
{
	static const int sigs[] = { SIGALRM, SIGSEGV, SIGBUS, SIGABRT, SIGFPE,
				    SIGILL, SIGPIPE };
	struct pam_conv c = { conv, NULL };
	pam_handle_t *ph = NULL;
	sigset_t all;
	size_t i, off = 0;
	int rc;

	/* libFuzzer's and the sanitizers' handlers are not for libpam's
	 * crashes and timeouts: those are results here */
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		signal(sigs[i], SIG_DFL);
	}
	sigfillset(&all);
	sigprocmask(SIG_UNBLOCK, &all, NULL);
#if defined(PWRAP_FUZZ_NS)
	/* a libpam without pam_start_confdir (Linux-PAM 1.3) reads dir as
	 * its /etc/pam.d, in a private mount namespace */
	{
		char why[256];

		if (pwrap_ns_enter(dir, why, sizeof(why)) != 0) {
			fprintf(stderr, "fuzz_pamdiff: no private mount "
				"namespace: %s\n", why);
			_exit(122);
		}
	}
#endif
	if (as_nobody && (setgroups(0, NULL) != 0 || setgid(65534) != 0 ||
			  setuid(65534) != 0)) {
		_exit(120);
	}
	alarm(CHILD_ALARM);
	msgs_len = 0;
	msgs[0] = '\0';
	if (traced) {
		setenv("PAM_WRAPPER_TRACE", trace_file, 1);
		(void)pwrap_trace_begin();
		/* libpam reads every file of ours: their modules are loaded
		 * after pam_start (more than libpam loads does no harm) */
		pwrap_trace_walk_begin();
		for (i = 0; i < NFILES; i++) {
			char g[PATH_MAX];

			snprintf(g, sizeof(g), "%s/%s", dir_c, names[i]);
			pwrap_trace_walked(g, PAMCONF_STACK_ANY);
		}
	}
#if defined(PWRAP_FUZZ_NS)
	rc = pam_start("svc", "alice", &c, &ph);
#else
	rc = pam_start_confdir("svc", "alice", &c, dir, &ph);
#endif
	if (traced) {
		rc = pwrap_trace_started((void **)&ph, "svc", dir, rc);
	}
	res_rc("start", rc);
	if (rc == PAM_SUCCESS) {
		res_rc("auth", call(traced, ph, PWRAP_SM_AUTHENTICATE, 0,
				    pam_authenticate));
		res_rc("setcred", call(traced, ph, PWRAP_SM_SETCRED,
				       PAM_ESTABLISH_CRED, pam_setcred));
		res_rc("acct", call(traced, ph, PWRAP_SM_ACCT_MGMT, 0,
				    pam_acct_mgmt));
		res_rc("open", call(traced, ph, PWRAP_SM_OPEN_SESSION, 0,
				    pam_open_session));
		res_rc("close", call(traced, ph, PWRAP_SM_CLOSE_SESSION, 0,
				     pam_close_session));
		res_rc("chauthtok", call(traced, ph, PWRAP_SM_CHAUTHTOK, 0,
					 pam_chauthtok));
		res_rc("end", pam_end(ph, PAM_SUCCESS));
		if (traced) {
			pwrap_trace_ended(ph);
		}
	}
	while (off < msgs_len) {
		ssize_t n = write(fd, msgs + off, msgs_len - off);

		if (n <= 0) {
			_exit(121);
		}
		off += (size_t)n;
	}
	_exit(0);
}

struct run {
	pid_t pid;
	int fd;
	struct buf out;
	char *result;	/* malloc'd */
};

static void start_run(struct run *r, const char *dir, bool traced)
{
	int p[2];

	memset(r, 0, sizeof(*r));
	buf_add(&r->out, "", 0);
	if (pipe2(p, O_CLOEXEC) != 0) {
		die("pipe");
	}
	fflush(NULL);
	r->pid = fork();
	if (r->pid < 0) {
		die("fork");
	}
	if (r->pid == 0) {
		close(p[0]);
		child(dir, p[1], traced);
	}
	close(p[1]);
	r->fd = p[0];
}

/* Reads both children's output until both pipes close, then reaps them. */
static void finish_runs(struct run *r, size_t n)
{
	size_t open_fds = n, i;

	while (open_fds > 0) {
		struct pollfd pfd[3];
		size_t idx[3], m = 0;

		for (i = 0; i < n; i++) {
			if (r[i].fd >= 0) {
				pfd[m].fd = r[i].fd;
				pfd[m].events = POLLIN;
				pfd[m].revents = 0;
				idx[m++] = i;
			}
		}
		if (poll(pfd, m, -1) < 0) {
			if (errno == EINTR) {
				continue;
			}
			die("poll");
		}
		for (i = 0; i < m; i++) {
			char chunk[4096];
			ssize_t k;

			if (pfd[i].revents == 0) {
				continue;
			}
			k = read(pfd[i].fd, chunk, sizeof(chunk));
			if (k < 0 && errno == EINTR) {
				continue;
			}
			if (k <= 0) {
				close(pfd[i].fd);
				r[idx[i]].fd = -1;
				open_fds--;
			} else {
				buf_add(&r[idx[i]].out, chunk, (size_t)k);
			}
		}
	}
	for (i = 0; i < n; i++) {
		int st;

		while (waitpid(r[i].pid, &st, 0) < 0) {
			if (errno != EINTR) {
				die("waitpid");
			}
		}
		if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM) {
			r[i].result = strdup("hang");
		} else if (WIFSIGNALED(st)) {
			if (asprintf(&r[i].result, "signal:%d",
				     WTERMSIG(st)) < 0) {
				r[i].result = NULL;
			}
		} else if (WEXITSTATUS(st) != 0) {
			if (asprintf(&r[i].result, "exit:%d",
				     WEXITSTATUS(st)) < 0) {
				r[i].result = NULL;
			}
		} else {
			r[i].result = strdup(r[i].out.p);
		}
		if (r[i].result == NULL) {
			die("malloc");
		}
		free(r[i].out.p);
	}
}

/* ---- comparing ---------------------------------------------------------- */

static void show(const char *title, const char *p, size_t n)
{
	size_t i;

	fprintf(stderr, "---- %s (%zu bytes)\n", title, n);
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)p[i];

		if (c == '\n' || (c >= 0x20 && c < 0x7f && c != '\\')) {
			fputc(c, stderr);
		} else {
			fprintf(stderr, "\\x%02x", c);
		}
	}
	fputs(n > 0 && p[n - 1] == '\n' ? "" : "\n", stderr);
}

/* The value of the JSON member key in a record of ours ("..." or not),
 * into out; false when it has none. */
static bool member(const char *rec, const char *key, char *out, size_t cap)
{
	char k[64];
	const char *p;
	size_t n;

	snprintf(k, sizeof(k), ",\"%s\":", key);
	p = strstr(rec, k);
	if (p == NULL) {
		return false;
	}
	p += strlen(k);
	p += *p == '"';
	n = strcspn(p, "\",}");
	if (n >= cap) {
		return false;
	}
	memcpy(out, p, n);
	out[n] = '\0';
	return true;
}

/* The start and result records of trace_file in the children's words
 * ("start=0 auth=7 ..."), malloc'd. */
static char *trace_results(void)
{
	static const char *const calls[][2] = {
		{ "pam_authenticate", "auth" }, { "pam_setcred", "setcred" },
		{ "pam_acct_mgmt", "acct" },	{ "pam_open_session", "open" },
		{ "pam_close_session", "close" }, { "pam_chauthtok", "chauthtok" },
	};
	struct buf b = { NULL, 0, 0 };
	FILE *f = fopen(trace_file, "r");
	char line[16384];

	buf_add(&b, "", 0);
	while (f != NULL && fgets(line, sizeof(line), f) != NULL) {
		char call[64] = "start", rc[64], num[16];
		int code = -1;

		if (strncmp(line, "{\"kind\":\"module\"", 16) == 0 ||
		    !member(line, "rc", rc, sizeof(rc)) ||
		    (strncmp(line, "{\"kind\":\"start\"", 15) != 0 &&
		     !member(line, "call", call, sizeof(call)))) {
			continue;
		}
		for (size_t k = 0; k < 6; k++) {
			if (strcmp(call, calls[k][0]) == 0) {
				snprintf(call, sizeof(call), "%s", calls[k][1]);
			}
		}
		for (int v = 0; v < 64 && code < 0; v++) {
			const char *n = pwrap_code_name(v);

			code = n != NULL && strcmp(n, rc) == 0 ? v : -1;
		}
		snprintf(num, sizeof(num), "%d", code < 0 ? atoi(rc) : code);
		buf_str(&b, b.len ? " " : "");
		buf_str(&b, call);
		buf_str(&b, "=");
		buf_str(&b, num);
	}
	if (f != NULL) {
		fclose(f);
	}
	return b.p;
}

/* A child's line without its messages and pam_end, or NULL when it did
 * not finish. */
static char *calls_only(const char *res)
{
	char *s = strdup(res), *o = s;
	const char *p = res;

	if (s == NULL) {
		die("malloc");
	}
	if (strncmp(res, "start=", 6) != 0) {
		free(s);
		return NULL;
	}
	while (*p != '\0') {
		if (strncmp(p, " {", 2) == 0 && strchr(p, '}') != NULL) {
			p = strchr(p, '}') + 1;	/* '}' inside is \x7d */
		} else if (strncmp(p, " end=", 5) == 0) {
			p += strcspn(p + 1, " ") + 1;
		} else {
			*o++ = *p++;
		}
	}
	*o = '\0';
	return s;
}

/* An empty trace_file the C child (perhaps nobody) may append to. */
static void fresh_trace(void)
{
	int fd = open(trace_file, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC |
				  O_NOFOLLOW, 0600);

	if (fd < 0 || (as_nobody && fchown(fd, 65534, 65534) != 0) ||
	    close(fd) != 0) {
		die(trace_file);
	}
}

/* Runs the sides; returns a description of the disagreement or NULL. */
static const char *compare_once(const struct side *s, char **ra, char **rb,
				char **rc)
{
	struct run r[3];
	size_t n = s->refused < 0 ? 3 : 1;

	fresh_trace();
	start_run(&r[0], dir_a, false);
	if (n == 3) {
		start_run(&r[1], dir_b, false);
		start_run(&r[2], dir_c, true);
	}
	finish_runs(r, n);
	*ra = r[0].result;
	*rb = n == 3 ? r[1].result : NULL;
	*rc = n == 3 ? r[2].result : NULL;

	if (s->refused >= 0) {
		if (s->refused_errno == E2BIG) {
			return "the rewriter refused a file with E2BIG";
		}
		if (strcmp(*ra, "hang") != 0 && strcmp(*ra, "start=26") != 0 &&
		    strncmp(*ra, "signal:", 7) != 0) {
			return "the rewriter refused a file on which libpam "
			       "neither hangs, crashes nor fails pam_start";
		}
		return NULL;
	}
	if (strcmp(*ra, "hang") == 0 && !(s->fifo && strcmp(*rb, "hang") == 0)) {
		return "libpam hangs on the original, the rewriter did not "
		       "refuse it";
	}
	if (strcmp(*ra, *rb) != 0) {
		return "libpam reads the rewrite differently";
	}
	if (strcmp(*rb, *rc) != 0) {
		return "the module trace changes what libpam does";
	}
	{
		char *want = calls_only(*rc);
		char *got = trace_results();
		bool same = want == NULL || strcmp(want, got) == 0;

		if (!same) {
			fprintf(stderr, "fuzz_pamdiff: C: %s\nfuzz_pamdiff: "
				"its trace: %s\n", want, got);
		}
		free(want);
		free(got);
		if (!same) {
			return "the trace's results are not what libpam "
			       "returned";
		}
	}
	return NULL;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct side s;
	const char *why;
	char *ra = NULL, *rb = NULL, *rc = NULL;
	size_t start = 0, i;
	int f;

	memset(&s, 0, sizeof(s));
	s.refused = -1;
	stats.inputs++;
	for (f = 0; f < NFILES && start <= size; f++) {
		const uint8_t *sep = f < NFILES - 1 ?
			memchr(data + start, SEP, size - start) : NULL;
		size_t end = sep ? (size_t)(sep - data) : size;

		s.in[f] = expand(data + start, end - start);
		s.present[f] = true;
		s.fifo |= memmem(s.in[f].p, s.in[f].len, fifo_path,
				 strlen(fifo_path)) != NULL;
		if (neutralise_modules(&s.in[f])) {
			stats.neutralised++;
		}
		if (sep == NULL) {
			break;
		}
		start = end + 1;
	}

	clear_dir(dir_a);
	clear_dir(dir_b);
	clear_dir(dir_c);
	for (f = 0; f < NFILES; f++) {
		if (s.present[f]) {
			write_file(dir_a, names[f], s.in[f].p, s.in[f].len);
		}
	}
	/* no transaction runs the earlier inputs' lines any more */
	pwrap_trace_forget_all();
	if (!rewrite_all(&s, false) || !rewrite_all(&s, true)) {
		goto out;
	}
	for (f = 0; f < NFILES; f++) {
		if (s.out[f] != NULL) {
			write_file(dir_b, names[f], s.out[f], s.out_len[f]);
		}
		if (s.out_c[f] != NULL) {
			write_file(dir_c, names[f], s.out_c[f],
				   s.out_c_len[f]);
		}
	}

	why = compare_once(&s, &ra, &rb, &rc);
	stats.ran++;
	stats.refused += s.refused >= 0;
	stats.hung += strcmp(ra, "hang") == 0;
	stats.fifo += strcmp(ra, "hang") == 0 && s.fifo;
	stats.crashed += strncmp(ra, "signal:", 7) == 0;
	if (verbose) {
		fprintf(stderr, "fuzz_pamdiff: A: %s\nfuzz_pamdiff: B: %s\n"
			"fuzz_pamdiff: C: %s\n", ra, rb ? rb : "(refused)",
			rc ? rc : "(refused)");
	}
	if (why != NULL) {
		/* once more, to rule out a child slowed down by the machine */
		free(ra);
		free(rb);
		free(rc);
		why = compare_once(&s, &ra, &rb, &rc);
	}
	if (why != NULL) {
		fprintf(stderr, "\nfuzz_pamdiff: DISAGREEMENT: %s\n", why);
		fprintf(stderr, "A = %s, B = %s, C = %s\n", dir_a, dir_b,
			dir_c);
		for (f = 0; f < NFILES; f++) {
			char t[64];

			if (!s.present[f]) {
				continue;
			}
			snprintf(t, sizeof(t), "A/%s (original)", names[f]);
			show(t, s.in[f].p, s.in[f].len);
			snprintf(t, sizeof(t), "B/%s (rewrite)", names[f]);
			if (s.out[f] != NULL) {
				show(t, s.out[f], s.out_len[f]);
			} else {
				fprintf(stderr, "---- %s: %s\n", t,
					s.refused == f ? "refused" :
							 "not included");
			}
			snprintf(t, sizeof(t), "C/%s (traced)", names[f]);
			if (s.out_c[f] != NULL) {
				show(t, s.out_c[f], s.out_c_len[f]);
			}
		}
		if (s.refused >= 0) {
			fprintf(stderr, "rewriter refused %s: %s\n",
				names[s.refused], strerror(s.refused_errno));
		}
		fprintf(stderr, "libpam on A: %s\nlibpam on B: %s\n"
			"libpam on C (traced): %s\n", ra,
			rb ? rb : "(refused: the wrapper's pam_start gives "
				  "PAM_ABORT)", rc ? rc : "(not run)");
		if (getenv("PWRAP_PAMDIFF_KEEP") == NULL) {
			cleanup();
		}
		abort();
	}
out:
	free(ra);
	free(rb);
	free(rc);
	for (i = 0; i < NFILES; i++) {
		free(s.in[i].p);
		free(s.out[i]);
		free(s.out_c[i]);
	}
	return 0;
}
