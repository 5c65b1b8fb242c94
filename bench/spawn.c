/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * Process start-to-exit timer (P1, P3 "once"): runs one command under
 * several environments ("variants"), interleaved, and prints the median
 * wall time per process for each.
 *
 *   spawn -r ROUNDS -n PER_ROUND [-e ERRLOG]
 *         -V name [KEY=VAL | -KEY]... [-V name ...]... -- prog [args]
 *
 * Each round runs PER_ROUND sequential posix_spawn+waitpid of prog for every
 * variant, the variants' order rotating from round to round, so a burst of
 * load from another job on the machine hits all variants alike.  A variant's
 * environment is ours minus LD_PRELOAD and PAM_WRAPPER*, plus its KEY=VAL
 * (-KEY removes KEY).  Output, one line per variant:
 *   RAW <name> <wall us per process in round 1> <round 2> ...
 *   RAWCPU <name> <user+system CPU us per process in round 1> ...
 *   RESULT <name> median_us=.. p25_us=.. p75_us=.. min_us=.. max_us=.. fails=..
 * where the statistics are over rounds of (round time / PER_ROUND); the RAW
 * values (in round order) let the caller pair variants round by round.
 * CPU time (from wait4's rusage, so it excludes the spawn in the parent)
 * is less disturbed than wall time by other jobs on a small machine.  A child
 * that exits non-zero counts as a failure (its stderr goes to ERRLOG, else
 * /dev/null).  Exit status 0, or 2 on usage or spawn errors.
 */
#define _GNU_SOURCE
#include <fcntl.h>
#include <spawn.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

extern char **environ;

struct variant {
	const char *name;
	char **env;
	double *per;	/* per-process wall seconds, one per round */
	double *cpu;	/* per-process user+system seconds, one per round */
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
		v[i].cpu = calloc((size_t)rounds, sizeof(double));
	}
	posix_spawn_file_actions_init(&fa);
	posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 1, "/dev/null", O_WRONLY, 0);
	posix_spawn_file_actions_addopen(&fa, 2, errlog,
					 O_WRONLY | O_APPEND | O_CREAT, 0644);
	for (r = 0; r < rounds; r++) {
		for (int k = 0; k < nv; k++) {
			struct variant *x = &v[(k + r) % nv];
			double t0 = now(), cpu = 0;

			for (int j = 0; j < per; j++) {
				pid_t pid;
				struct rusage ru;
				int st;

				if (posix_spawn(&pid, prog[0], &fa, NULL, prog,
						x->env) != 0) {
					perror("spawn: posix_spawn");
					return 2;
				}
				while (wait4(pid, &st, 0, &ru) < 0) {
				}
				cpu += (double)ru.ru_utime.tv_sec +
				       (double)ru.ru_utime.tv_usec / 1e6 +
				       (double)ru.ru_stime.tv_sec +
				       (double)ru.ru_stime.tv_usec / 1e6;
				if (!WIFEXITED(st) || WEXITSTATUS(st) != 0) {
					x->fails++;
				}
			}
			x->per[r] = (now() - t0) / per;
			x->cpu[r] = cpu / per;
		}
	}
	for (i = 0; i < nv; i++) {
		printf("RAW %s", v[i].name);
		for (r = 0; r < rounds; r++) {
			printf(" %.1f", v[i].per[r] * 1e6);
		}
		printf("\nRAWCPU %s", v[i].name);
		for (r = 0; r < rounds; r++) {
			printf(" %.1f", v[i].cpu[r] * 1e6);
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
