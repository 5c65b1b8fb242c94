/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Process start-to-exit timer (P1, P3 "once", P5): runs one command under
 * several environments ("variants"), interleaved, and prints the time per
 * process for each.
 *
 *   spawn -r ROUNDS -n PER_ROUND [-e ERRLOG]
 *         -V name [KEY=VAL | -KEY]... [-V name ...]... -- prog [args]
 *
 * Each round runs PER_ROUND sequential samples of prog for every variant,
 * the variants' order rotating from round to round, so a burst of load from
 * another job on the machine hits all variants alike.  A variant's
 * environment is ours minus LD_PRELOAD and PAM_WRAPPER*, plus its KEY=VAL
 * (-KEY removes KEY).
 *
 * One sample is a posix_spawn of prog and the end of its whole process
 * tree: spawn is a child subreaper (PR_SET_CHILD_SUBREAPER, which its
 * children do not inherit), so any helper process prog leaves behind (a
 * double-forked daemon, a cleanup watcher) is reparented to spawn, which
 * reaps it before the next sample starts.  The CPU time of a sample is the
 * growth of getrusage(RUSAGE_CHILDREN) over it: user+system time of prog
 * and of every process it or its helpers created, once all are gone.  A
 * helper still alive 30 s after prog exited is killed and the sample counts
 * as a failure.  Output, one line per variant:
 *   RAW <name> <wall us per process in round 1> <round 2> ...
 *      (wall: posix_spawn until prog itself has exited)
 *   RAWTREE <name> <wall us until the whole process tree was reaped> ...
 *   RAWCPU <name> <user+system CPU us of the whole tree per process> ...
 *   RAWORPHANS <name> <helper processes reaped by spawn per process> ...
 *   RESULT <name> median_us=.. p25_us=.. p75_us=.. min_us=.. max_us=.. fails=..
 * where values are per-process means within a round and the RESULT
 * statistics are over rounds of RAW; the RAW values (in round order) let the
 * caller pair variants round by round.  A sample fails if prog exits
 * non-zero or is killed, or a helper had to be killed (prog's stderr goes to
 * ERRLOG, else /dev/null).  Exit status 0, or 2 on usage or spawn errors.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct variant {
	const char *name;
	char **env;
	double *per;	/* per-process wall seconds to prog's exit, per round */
	double *tree;	/* per-process wall seconds to the tree's end */
	double *cpu;	/* per-process user+system seconds of the tree */
	double *orph;	/* helper processes reaped per process */
	long fails;
};

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static int dropped(const char *kv)
{
	return strncmp(kv, "LD_PRELOAD=", 11) == 0 ||
	       strncmp(kv, "PAM_WRAPPER", 11) == 0;
}

/* Base environment plus the overrides argv[from..to). */
static char **make_env(char **argv, int from, int to)
{
	size_t n = 0, k = 0, i;
	char **env;

	while (environ[n] != NULL) {
		n++;
	}
	env = calloc(n + (size_t)(to - from) + 1, sizeof(*env));
	if (env == NULL) {
		exit(2);
	}
	for (i = 0; i < n; i++) {
		const char *kv = environ[i];
		size_t kl = strcspn(kv, "=");
		int j, over = 0;

		if (dropped(kv)) {
			continue;
		}
		for (j = from; j < to; j++) {
			const char *o = argv[j][0] == '-' ? argv[j] + 1 : argv[j];

			if (strncmp(o, kv, kl) == 0 &&
			    (o[kl] == '=' || o[kl] == '\0')) {
				over = 1;
			}
		}
		if (!over) {
			env[k++] = (char *)kv;
		}
	}
	for (int j = from; j < to; j++) {
		if (argv[j][0] != '-') {
			env[k++] = argv[j];
		}
	}
	env[k] = NULL;
	return env;
}

static double tv(const struct timeval *t)
{
	return (double)t->tv_sec + (double)t->tv_usec / 1e6;
}

static double children_cpu(void)
{
	struct rusage ru;

	getrusage(RUSAGE_CHILDREN, &ru);
	return tv(&ru.ru_utime) + tv(&ru.ru_stime);
}

static void on_alarm(int sig)
{
	(void)sig;	/* only interrupts wait4() */
}

/* SIGKILLs every process whose parent is us (helpers that outlived prog). */
static void kill_children(void)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char path[64], buf[512];

	if (d == NULL) {
		return;
	}
	while ((e = readdir(d)) != NULL) {
		long pid = strtol(e->d_name, NULL, 10), ppid;
		const char *p;
		ssize_t n;
		int fd;

		if (pid <= 0) {
			continue;
		}
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		fd = open(path, O_RDONLY | O_CLOEXEC);
		if (fd < 0) {
			continue;
		}
		n = read(fd, buf, sizeof(buf) - 1);
		close(fd);
		if (n <= 0) {
			continue;
		}
		buf[n] = '\0';
		/* pid (comm) state ppid ...; comm may hold spaces and ')' */
		p = strrchr(buf, ')');
		if (p != NULL && sscanf(p + 1, " %*c %ld", &ppid) == 1 &&
		    ppid == (long)getpid()) {
			kill((pid_t)pid, SIGKILL);
		}
	}
	closedir(d);
}

/*
 * Reaps every remaining process of the sample's tree: as a subreaper we
 * inherit each orphan, so ECHILD means the tree is gone.  Returns the
 * number reaped; *killed is set if some had to be killed.
 */
static long reap_tree(int *killed)
{
	long n = 0;

	*killed = 0;
	alarm(30);
	for (;;) {
		int st;
		pid_t p = wait4(-1, &st, __WALL, NULL);

		if (p > 0) {
			n++;
		} else if (errno == ECHILD) {
			break;
		} else if (errno == EINTR) {
			*killed = 1;
			kill_children();
			alarm(5);
		}
	}
	alarm(0);
	return n;
}

static int cmp(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double q(const double *s, int n, double f)
{
	double pos = f * (n - 1);
	int lo = (int)pos;

	if (lo + 1 >= n) {
		return s[n - 1];
	}
	return s[lo] + (pos - lo) * (s[lo + 1] - s[lo]);
}

int main(int argc, char **argv)
{
	struct variant v[16];
	int nv = 0, rounds = 10, per = 20, i, r;
	const char *errlog = "/dev/null";
	char **prog = NULL;
	posix_spawn_file_actions_t fa;

	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "-r") == 0 && i + 1 < argc) {
			rounds = atoi(argv[++i]);
		} else if (strcmp(argv[i], "-n") == 0 && i + 1 < argc) {
			per = atoi(argv[++i]);
		} else if (strcmp(argv[i], "-e") == 0 && i + 1 < argc) {
			errlog = argv[++i];
		} else if (strcmp(argv[i], "-V") == 0 && i + 1 < argc &&
			   nv < 16) {
			int from = i + 2, to = from;

			while (to < argc && strcmp(argv[to], "-V") != 0 &&
			       strcmp(argv[to], "--") != 0) {
				to++;
			}
			v[nv].name = argv[i + 1];
			v[nv].env = make_env(argv, from, to);
			v[nv].fails = 0;
			nv++;
			i = to - 1;
		} else if (strcmp(argv[i], "--") == 0 && i + 1 < argc) {
			prog = argv + i + 1;
			break;
		} else {
			fprintf(stderr, "spawn: bad argument %s\n", argv[i]);
			return 2;
		}
	}
	if (prog == NULL || nv == 0 || rounds < 1 || per < 1) {
		fprintf(stderr, "usage: spawn -r R -n N -V name [K=V]... -- "
			"prog [args]\n");
		return 2;
	}
	for (i = 0; i < nv; i++) {
		v[i].per = calloc((size_t)rounds, sizeof(double));
		v[i].tree = calloc((size_t)rounds, sizeof(double));
		v[i].cpu = calloc((size_t)rounds, sizeof(double));
		v[i].orph = calloc((size_t)rounds, sizeof(double));
		if (v[i].per == NULL || v[i].tree == NULL ||
		    v[i].cpu == NULL || v[i].orph == NULL) {
			return 2;
		}
	}
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) != 0) {
		perror("spawn: PR_SET_CHILD_SUBREAPER");
		return 2;
	}
	{
		struct sigaction sa;

		memset(&sa, 0, sizeof(sa));
		sa.sa_handler = on_alarm;	/* no SA_RESTART */
		sigemptyset(&sa.sa_mask);
		sigaction(SIGALRM, &sa, NULL);
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, errlog,
					 O_WRONLY | O_APPEND | O_CREAT, 0644);
	for (r = 0; r < rounds; r++) {
		for (int k = 0; k < nv; k++) {
			struct variant *x = &v[(k + r) % nv];
			double wall = 0, tree = 0, cpu = 0, orph = 0;

			for (int j = 0; j < per; j++) {
				double t0, c0 = children_cpu();
				pid_t pid;
				int st, killed;

				t0 = now();
				if (posix_spawn(&pid, prog[0], &fa, NULL, prog,
						x->env) != 0) {
					perror("spawn: posix_spawn");
					return 2;
				}
				while (wait4(pid, &st, 0, NULL) < 0) {
				}
				wall += now() - t0;
				orph += (double)reap_tree(&killed);
				tree += now() - t0;
				cpu += children_cpu() - c0;
				if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 ||
				    killed) {
					x->fails++;
				}
			}
			x->per[r] = wall / per;
			x->tree[r] = tree / per;
			x->cpu[r] = cpu / per;
			x->orph[r] = orph / per;
		}
	}
	for (i = 0; i < nv; i++) {
		printf("RAW %s", v[i].name);
		for (r = 0; r < rounds; r++) {
			printf(" %.1f", v[i].per[r] * 1e6);
		}
		printf("\nRAWTREE %s", v[i].name);
		for (r = 0; r < rounds; r++) {
			printf(" %.1f", v[i].tree[r] * 1e6);
		}
		printf("\nRAWCPU %s", v[i].name);
		for (r = 0; r < rounds; r++) {
			printf(" %.1f", v[i].cpu[r] * 1e6);
		}
		printf("\nRAWORPHANS %s", v[i].name);
		for (r = 0; r < rounds; r++) {
			printf(" %.2f", v[i].orph[r]);
		}
		printf("\n");
	}
	for (i = 0; i < nv; i++) {
		double *s = v[i].per;

		qsort(s, (size_t)rounds, sizeof(double), cmp);
		printf("RESULT %s median_us=%.1f p25_us=%.1f p75_us=%.1f "
		       "min_us=%.1f max_us=%.1f fails=%ld\n", v[i].name,
		       q(s, rounds, .5) * 1e6, q(s, rounds, .25) * 1e6,
		       q(s, rounds, .75) * 1e6, s[0] * 1e6,
		       s[rounds - 1] * 1e6, v[i].fails);
	}
	return 0;
}
