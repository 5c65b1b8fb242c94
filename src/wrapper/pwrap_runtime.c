/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The per-process runtime directory and the private configuration libpam reads.
 *
 * Layout: $TMPDIR/pam_wrapper.<pid>.XXXXXX/ (created on first use; without
 * TMPDIR, below /dev/shm when it is writable, else /tmp)
 *   services/  exported as PAM_WRAPPER_RUNTIME_DIR: copies of the service dir's
 *              files, which tests written for upstream read and add to;
 *   conf/      what pam_start_confdir() is given: rewritten service files
 *              (see pwrap_conf.c), conf/.inc/ the rewritten included files (a name no service can have).
 *
 * Sources are looked up at each pam_start: a file a test wrote (or changed)
 * in services/ wins; otherwise services/ mirrors PAM_WRAPPER_SERVICE_DIR as
 * it is now.  Rewritten files are cached by the (dev, ino, size, mtime,
 * ctime) of their source, so a full check costs a few stat(2); from the
 * second pam_start on, an inotify watch on the directories lets an unchanged
 * service skip even those (see "the fast path" below).
 *
 * Cleanup: a watcher process (double-forked, in its own session) holds one
 * end of a socket pair whose O_CLOEXEC other end only this process holds;
 * when the process exits, _exits, is killed or execs, the watcher sees EOF
 * and removes the directory.  A normal exit also removes it synchronously in the
 * destructor, so a test that checks TMPDIR right after exit sees it gone.
 * PAM_WRAPPER_KEEP_DIR=1 keeps everything for debugging.
 *
 * All state below is guarded by rt.lock; fork handlers keep it consistent.
 */
#define _GNU_SOURCE
#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <security/_pam_types.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sched.h>
#include <stdint.h>
#include <sys/inotify.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "pwrap_private.h"

#define PWRAP_MAX_SERVICE_FILE (4 * 1024 * 1024)
#define PWRAP_MAX_INCLUDE_DEPTH 32

struct pwrap_sig {
	dev_t dev;
	ino_t ino;
	off_t size;
	struct timespec mtim;
	struct timespec ctim;
	bool indirect;		/* a symlink or a hard link: not cacheable by
				 * the fast path (not in sig_eq) */
};

/* A copy this process made in services/ (to tell it from a test's file). */
struct pwrap_copy {
	struct pwrap_copy *next;
	char *name;
	struct pwrap_sig src;	/* the service dir's file when copied */
	struct pwrap_sig copy;	/* our copy right after writing it */
};

/* A rewritten file in conf/, with what it was made from. */
struct pwrap_gen {
	struct pwrap_gen *next;
	char *gpath;		/* absolute path in conf/ */
	char *src;		/* source path it was rewritten from */
	struct pwrap_sig sig;	/* source signature then */
	char **incs;		/* include targets it names, as written */
	size_t n_incs;
};

static struct {
	pthread_mutex_t lock;
	char *top;		/* $TMPDIR/pam_wrapper.<pid>.XXXXXX */
	char *svc;		/* top/services (PAM_WRAPPER_RUNTIME_DIR) */
	char *conf;		/* top/conf */
	pid_t owner;		/* process that created top */
	int wfd;		/* our end of the watcher socket, -1 if none */
	dev_t wdev;
	ino_t wino;
	bool keep;
	struct pwrap_copy *copies;
	struct pwrap_gen *gens;
	unsigned gen;		/* bumped each time top is (re)created */
	char *moddir;		/* our modules: <dir of libpam_wrapper.so>/pam_wrapper */
	char *sysmoddir;	/* Linux-PAM's: <dir of libpam.so.0>/security */
} rt = {
	.lock = PTHREAD_MUTEX_INITIALIZER,
	.wfd = -1,
};

/*
 * The fast path (see fast_current()): an inotify instance watching the
 * service dir, services/, conf/ and conf/.inc/, and the services whose last
 * full check ran with no event before or after it.  Guarded by rt.lock.
 */
#define PWRAP_FAST_NAMES 8
#define PWRAP_FAST_FD_MIN 256	/* out of the way of closefrom()+reopen */

static struct {
	int fd;			/* inotify, -1 if none */
	dev_t dev;		/* fstat(fd) when made: tells it is still ours */
	ino_t ino;
	char *svcdir;		/* what it watches (NULL: nothing yet) */
	unsigned gen;		/* rt.gen then */
	bool tried;		/* fast_open() ran for this svcdir and gen */
	bool off;		/* no inotify here: do not try again */
	size_t n_names, next;
	char names[PWRAP_FAST_NAMES][NAME_MAX + 1];
} fast = {
	.fd = -1,
};

static void fast_forget(void);

/* Set while this thread holds rt.lock, so our own fork() inside the lock
 * does not deadlock in the prepare handler. */
static __thread bool lock_held;
static bool atfork_locked;
static pthread_once_t atfork_once = PTHREAD_ONCE_INIT;

static void rt_lock(void)
{
	pthread_mutex_lock(&rt.lock);
	lock_held = true;
}

static void rt_unlock(void)
{
	lock_held = false;
	pthread_mutex_unlock(&rt.lock);
}

static void atfork_prepare(void)
{
	if (!lock_held) {
		pthread_mutex_lock(&rt.lock);
		atfork_locked = true;
	}
}

static void atfork_parent(void)
{
	if (atfork_locked) {
		atfork_locked = false;
		pthread_mutex_unlock(&rt.lock);
	}
}

static void atfork_child(void)
{
	/* The child has one thread: start from a fresh, unlocked mutex. */
	pthread_mutex_init(&rt.lock, NULL);
	atfork_locked = false;
	lock_held = false;
	/* The inotify instance is shared with the parent: reading it here
	 * would steal the parent's events.  The child gets its own runtime
	 * directory anyway, and a new instance if it loops. */
	fast_forget();
}

static void atfork_register(void)
{
	pthread_atfork(atfork_prepare, atfork_parent, atfork_child);
}

/* ---- the real libpam ---------------------------------------------------- */

static struct pwrap_real real;
static pthread_once_t real_once = PTHREAD_ONCE_INIT;

static void real_load(void)
{
	void *h = dlopen("libpam.so.0", RTLD_LAZY | RTLD_NOLOAD);
	void *ha;

	if (h == NULL) {
		h = dlopen("libpam.so.0", RTLD_LAZY);
	}
	if (h == NULL) {
		PWRAP_LOG(PWRAP_LOG_ERROR, "cannot load libpam.so.0: %s",
			  dlerror());
		return;
	}
	*(void **)&real.pam_start = dlsym(h, "pam_start");
	*(void **)&real.pam_start_confdir = dlsym(h, "pam_start_confdir");
	*(void **)&real.pam_set_item = dlsym(h, "pam_set_item");
	*(void **)&real.pam_get_item = dlsym(h, "pam_get_item");
	*(void **)&real.pam_vsyslog = dlsym(h, "pam_vsyslog");
	ha = dlopen("libaudit.so.1", RTLD_LAZY | RTLD_NOLOAD);
	if (ha != NULL) {
		*(void **)&real.audit_open = dlsym(ha, "audit_open");
	}
}

const struct pwrap_real *pwrap_real(void)
{
	pthread_once(&real_once, real_load);
	return &real;
}

/* ---- small helpers ------------------------------------------------------ */

/* Path buffers of the hot path live on the stack: pam_start stays free of
 * allocations when nothing changed. */
typedef char pwrap_path[PATH_MAX];

static bool pjoin(pwrap_path out, const char *a, const char *b)
{
	size_t la = strlen(a);
	size_t lb = strlen(b);

	if (la + 1 + lb + 1 > sizeof(pwrap_path)) {
		return false;
	}
	memcpy(out, a, la);
	out[la] = '/';
	memcpy(out + la + 1, b, lb + 1);
	return true;
}

/* pjoin() for paths that are kept: malloc'd, owned by the caller. */
static char *join(const char *a, const char *b)
{
	pwrap_path p;

	return pjoin(p, a, b) ? strdup(p) : NULL;
}

static bool sig_of(const char *path, struct pwrap_sig *sig)
{
	struct stat st;
	bool link = false;

	/* lstat first: one call for a plain file, and a symlink is marked
	 * (inotify on its directory does not see its target change). */
	if (lstat(path, &st) != 0) {
		return false;
	}
	if (S_ISLNK(st.st_mode)) {
		link = true;
		if (stat(path, &st) != 0) {
			return false;
		}
	}
	if (!S_ISREG(st.st_mode)) {
		return false;
	}
	sig->indirect = link || st.st_nlink > 1;
	sig->dev = st.st_dev;
	sig->ino = st.st_ino;
	sig->size = st.st_size;
	sig->mtim = st.st_mtim;
	sig->ctim = st.st_ctim;
	return true;
}

static bool sig_eq(const struct pwrap_sig *a, const struct pwrap_sig *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtim.tv_sec == b->mtim.tv_sec &&
	       a->mtim.tv_nsec == b->mtim.tv_nsec &&
	       a->ctim.tv_sec == b->ctim.tv_sec &&
	       a->ctim.tv_nsec == b->ctim.tv_nsec;
}

/* Reads a whole regular file; *buf is malloc'd and NUL-terminated. */
static int read_file(const char *path, char **buf, size_t *len)
{
	struct stat st;
	char *b = NULL;
	size_t got = 0;
	int fd = -1;
	int rc = -1;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0 || fstat(fd, &st) != 0) {
		goto out;
	}
	if (!S_ISREG(st.st_mode) || st.st_size > PWRAP_MAX_SERVICE_FILE) {
		errno = S_ISREG(st.st_mode) ? EFBIG : EINVAL;
		goto out;
	}
	b = malloc((size_t)st.st_size + 1);
	if (b == NULL) {
		goto out;
	}
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, b + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			goto out;
		}
		if (n == 0) {
			break;	/* shrank while reading */
		}
		got += (size_t)n;
	}
	b[got] = '\0';
	*buf = b;
	b = NULL;
	*len = got;
	rc = 0;
out:
	free(b);
	if (fd >= 0) {
		close(fd);
	}
	return rc;
}

/* Writes buf to path atomically (temp file in the same dir + rename). */
static int write_atomic(const char *path, const char *buf, size_t len)
{
	char *tmp = NULL;
	size_t off = 0;
	int fd = -1;
	int rc = -1;

	if (asprintf(&tmp, "%s.tmpXXXXXX", path) < 0) {
		tmp = NULL;
		goto out;
	}
	fd = mkostemp(tmp, O_CLOEXEC);
	if (fd < 0) {
		goto out;
	}
	while (off < len) {
		ssize_t n = write(fd, buf + off, len - off);

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n < 0) {
			goto out;
		}
		off += (size_t)n;
	}
	if (fchmod(fd, 0644) != 0 || close(fd) != 0) {
		fd = -1;
		goto out;
	}
	fd = -1;
	if (rename(tmp, path) != 0) {
		goto out;
	}
	rc = 0;
out:
	if (fd >= 0) {
		close(fd);
	}
	if (rc != 0 && tmp != NULL) {
		int saved = errno;

		unlink(tmp);
		errno = saved;
	}
	free(tmp);
	return rc;
}

/* getdents64(2)'s record (glibc has no wrapper in Debian 12). */
struct pwrap_dirent64 {
	uint64_t d_ino;
	int64_t d_off;
	unsigned short d_reclen;
	unsigned char d_type;
	char d_name[];
};

#define PWRAP_RMTREE_DEPTH 64

/*
 * Removes everything in the directory dfd, and closes dfd.  No malloc and no
 * stdio: the watcher runs this in a process forked without glibc's fork
 * handlers (see watcher_start()), where a lock another thread held at the
 * fork stays locked.  Entries are removed while the directory is read, so a
 * pass that saw entries is followed by another from the start.
 */
static int rmtree_at(int dfd, int depth)
{
	char buf[2048] __attribute__((aligned(8)));
	int rc = 0;

	for (int pass = 0; pass < 4; pass++) {
		bool seen = false;
		long n;

		while ((n = syscall(SYS_getdents64, dfd, buf, sizeof(buf))) > 0) {
			for (long off = 0; off < n;) {
				const struct pwrap_dirent64 *de =
					(const void *)(buf + off);
				const char *nm = de->d_name;
				int sub;

				off += de->d_reclen;
				if (nm[0] == '.' && (nm[1] == '\0' ||
						     (nm[1] == '.' && nm[2] == '\0'))) {
					continue;
				}
				seen = true;
				if (unlinkat(dfd, nm, 0) == 0 || errno == ENOENT) {
					continue;
				}
				if ((errno != EISDIR && errno != EPERM) ||
				    depth >= PWRAP_RMTREE_DEPTH) {
					rc = -1;
					continue;
				}
				sub = openat(dfd, nm, O_RDONLY | O_DIRECTORY |
					     O_NOFOLLOW | O_CLOEXEC);
				if (sub >= 0) {
					rmtree_at(sub, depth + 1);
				}
				if (unlinkat(dfd, nm, AT_REMOVEDIR) != 0 &&
				    errno != ENOENT) {
					rc = -1;
				}
			}
		}
		if (!seen || lseek(dfd, 0, SEEK_SET) != 0) {
			break;
		}
	}
	close(dfd);
	return rc;
}

int pwrap_rmtree(const char *path)
{
	int dfd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (dfd < 0) {
		return errno == ENOENT ? 0 : -1;
	}
	rmtree_at(dfd, 0);
	if (rmdir(path) != 0 && errno != ENOENT) {
		return -1;
	}
	return 0;
}

/* ---- the watcher -------------------------------------------------------- */

/*
 * The watcher is a process that outlives this one and removes the runtime
 * directory once nobody holds our end of its "lifetime" socket pair: our
 * end is O_CLOEXEC and only this process has it, so EOF comes when it
 * exits, _exits, is killed or execs.
 *
 * Starting it must be cheap (a PAM program pays it once) and must not make
 * it our child (programs reap "any child" and would be confused):
 *   - clone(CLONE_VM|CLONE_VFORK) runs watcher_fork() on a stack of its own
 *     while we wait, without copying our page tables; it has no exit signal,
 *     so the program gets no SIGCHLD and its wait(-1) never sees it (we
 *     reap it with __WCLONE);
 *   - that child forks once more with the raw system call (glibc's fork()
 *     would run every library's fork handlers in our shared memory) and
 *     exits, so the watcher is reparented to init and we reap the child;
 *   - all signals are blocked meanwhile, so no handler of ours runs in the
 *     child; the watcher keeps them blocked: terminal and group signals are
 *     for the wrapped process.
 * The watcher cannot trust locks (another thread may have held malloc's at
 * the fork), so it uses system calls only, and stack buffers.
 *
 * It is told which directory to remove by records on the socket: the path
 * before the directory is created (if we die right after mkdir it is still
 * removed), then the path with the directory's dev/ino once it exists (so a
 * later directory of the same name is never touched).  The last record wins.
 */

struct pwrap_record {
	uint64_t dev;		/* 0 (with ino 0): not created yet */
	uint64_t ino;
	uint32_t len;		/* of the path that follows, with its NUL */
	uint32_t zero;		/* no padding: every byte is written */
};

/* The watcher runs on this stack (its copy): watcher_main() takes about
 * 8 KiB, each level of rmtree_at() about 2.1 KiB, up to
 * PWRAP_RMTREE_DEPTH levels; the lowest page is a guard. */
#define PWRAP_WATCHER_STACK (256 * 1024)
#define PWRAP_GUARD 4096

static bool read_full(int fd, void *buf, size_t n)
{
	size_t got = 0;

	while (got < n) {
		ssize_t r = read(fd, (char *)buf + got, n - got);

		if (r < 0 && errno == EINTR) {
			continue;
		}
		if (r <= 0) {
			return false;
		}
		got += (size_t)r;
	}
	return true;
}

/* Opens the recorded directory if it is still the one that was made. */
static int open_recorded(const struct pwrap_record *r, const char *path)
{
	struct stat st;
	int fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);

	if (fd >= 0 && (fstat(fd, &st) != 0 || st.st_uid != geteuid() ||
			((r->dev != 0 || r->ino != 0) &&
			 ((uint64_t)st.st_dev != r->dev ||
			  (uint64_t)st.st_ino != r->ino)))) {
		close(fd);
		fd = -1;
	}
	return fd;
}

static _Noreturn void watcher_main(int rfd)
{
	struct pwrap_record rec = { 0 };
	struct pwrap_record next;
	char path[PATH_MAX] = "";
	char npath[PATH_MAX];
	int fd;

	setsid();
	if (chdir("/") != 0) {
		/* not fatal: only absolute paths are used */
	}
	/* Keep nothing of the process open but the socket, as fd 0 (first lift
	 * it above 2: a process without stdin may have it as fd 0 already). */
	rfd = fcntl(rfd, F_DUPFD_CLOEXEC, 3);
	if (rfd < 0 || dup2(rfd, 0) < 0) {
		_exit(1);
	}
	if (syscall(SYS_close_range, 1U, ~0U, 0U) != 0) {
		for (int i = 1; i < 65536; i++) {
			close(i);
		}
	}
	while (read_full(0, &next, sizeof(next))) {
		if (next.len == 0 || next.len > sizeof(npath) ||
		    !read_full(0, npath, next.len) || npath[next.len - 1] != '\0') {
			break;
		}
		memcpy(path, npath, next.len);
		rec = next;
	}
	/* EOF: the process is gone (or exec'd, or closed our socket). */
	if (path[0] == '/' && (fd = open_recorded(&rec, path)) >= 0) {
		rmtree_at(fd, 0);
		rmdir(path);
	}
	_exit(0);
}

/* Runs in the CLONE_VM|CLONE_VFORK child, on its own stack, in our memory:
 * a raw fork, the watcher's pid sent back to us through the socket pair
 * (our end is readable when clone() returns), and the return, which exits
 * this child. */
__attribute__((no_sanitize("address", "undefined")))
static int watcher_fork(void *arg)
{
	int fd = *(int *)arg;
	long g = syscall(SYS_clone, (long)SIGCHLD, 0L, 0L, 0L, 0L);
	int32_t pid = (int32_t)g;

	if (g == 0) {
		watcher_main(fd);
	}
	if (g > 0 && write(fd, &pid, sizeof(pid)) != (ssize_t)sizeof(pid)) {
		return 1;
	}
	return g > 0 ? 0 : 1;
}

/* Starts a watcher; returns our end of its lifetime socket, or -1, and
 * the watcher's pid in *gpid. */
static int watcher_start(pid_t *gpid)
{
	sigset_t all, old;
	int p[2] = { -1, -1 };
	void *stack = MAP_FAILED;
	int saved = errno;
	int sub = 0, wfd = -1;
	int32_t pid = 0;
	pid_t c = -1;

	/* A program that is a child subreaper would inherit the watcher as a
	 * child (and wait for it forever in a wait(-1) loop): no watcher. */
	if (prctl(PR_GET_CHILD_SUBREAPER, &sub, 0, 0, 0) == 0 && sub != 0) {
		return -1;
	}
	/* A socket pair rather than a pipe: writing to it after the watcher
	 * died gives EPIPE (MSG_NOSIGNAL), never a SIGPIPE for the program. */
	if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, p) != 0) {
		return -1;
	}
	stack = mmap(NULL, PWRAP_WATCHER_STACK, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS | MAP_STACK | MAP_NORESERVE,
		     -1, 0);
	if (stack == MAP_FAILED || mprotect(stack, PWRAP_GUARD, PROT_NONE) != 0) {
		goto out;
	}
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	c = clone(watcher_fork, (char *)stack + PWRAP_WATCHER_STACK,
		  CLONE_VM | CLONE_VFORK, &p[0]);
	if (c > 0) {
		while (waitpid(c, NULL, __WCLONE) < 0 && errno == EINTR) {
		}
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	/* The pid arrives only if the watcher was made (whatever waitpid
	 * said: another thread's waitpid(__WALL) may have reaped the child). */
	if (c > 0 &&
	    recv(p[1], &pid, sizeof(pid), MSG_DONTWAIT) == (ssize_t)sizeof(pid) &&
	    pid > 0) {
		*gpid = (pid_t)pid;
		wfd = p[1];
		p[1] = -1;
	}
out:
	if (stack != MAP_FAILED) {
		munmap(stack, PWRAP_WATCHER_STACK);
	}
	close(p[0]);
	if (p[1] >= 0) {
		close(p[1]);
	}
	errno = saved;
	return wfd;
}

/* Tells the watcher which directory is ours (see above). */
static bool watcher_record(int wfd, const char *path, const struct stat *st)
{
	char msg[sizeof(struct pwrap_record) + PATH_MAX];
	struct pwrap_record r = {
		.dev = st ? (uint64_t)st->st_dev : 0,
		.ino = st ? (uint64_t)st->st_ino : 0,
		.len = (uint32_t)strlen(path) + 1,
		.zero = 0,
	};
	size_t n = sizeof(r) + r.len;

	/* one small record, sent whole (the watcher reads exact sizes) */
	if (n > PIPE_BUF) {
		return false;
	}
	memcpy(msg, &r, sizeof(r));
	memcpy(msg + sizeof(r), path, r.len);
	return send(wfd, msg, n, MSG_NOSIGNAL) == (ssize_t)n;
}

/* Writes .watcher (the watcher's pid) into the directory, for
 * sweep_stale(): a directory whose process died is still in use while its
 * watcher lives (a forked child holds the socket). */
static void mark_watched(const char *top, pid_t gpid)
{
	char pid[24];
	pwrap_path path;
	int n = snprintf(pid, sizeof(pid), "%ld\n", (long)gpid);
	int fd = pjoin(path, top, ".watcher") ?
		 open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0644) : -1;

	if (fd >= 0) {
		if (write(fd, pid, (size_t)n) != n) {
			/* a sweeper then only trusts the owner's pid */
		}
		close(fd);
	}
}

/*
 * Creates the runtime directory base/<prefix>.<pid>.XXXXXX (0700) and,
 * unless wfd is -1, has the watcher remove it.  Returns the malloc'd path,
 * or NULL with errno set.
 */
static char *make_top(const char *base, const char *prefix, int wfd)
{
	static const char chars[] = "abcdefghijklmnopqrstuvwxyz"
				    "ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
	char *path = NULL;

	for (int attempt = 0; attempt < 100; attempt++) {
		unsigned char rnd[6];
		struct stat st;
		struct timespec ts;
		char *x;

		free(path);
		if (asprintf(&path, "%s/%s.%ld.XXXXXX", base, prefix,
			     (long)getpid()) < 0) {
			return NULL;
		}
		if (getrandom(rnd, sizeof(rnd), GRND_NONBLOCK) !=
		    (ssize_t)sizeof(rnd)) {
			clock_gettime(CLOCK_MONOTONIC, &ts);
			for (size_t i = 0; i < sizeof(rnd); i++) {
				rnd[i] = (unsigned char)((ts.tv_nsec >> (i * 5)) +
							 attempt * 7);
			}
		}
		x = path + strlen(path) - sizeof(rnd);
		for (size_t i = 0; i < sizeof(rnd); i++) {
			x[i] = chars[rnd[i] % (sizeof(chars) - 1)];
		}
		if (wfd >= 0 && !watcher_record(wfd, path, NULL)) {
			errno = ENAMETOOLONG;
			break;
		}
		if (mkdir(path, 0700) != 0) {
			if (errno == EEXIST) {
				continue;	/* a dead process's, same pid */
			}
			break;
		}
		if (wfd >= 0 && (stat(path, &st) != 0 ||
				 !watcher_record(wfd, path, &st))) {
			int saved = errno;

			rmdir(path);
			errno = saved;
			break;
		}
		return path;
	}
	free(path);
	return NULL;
}

/* ---- runtime directory -------------------------------------------------- */

static void copies_free(void)
{
	while (rt.copies != NULL) {
		struct pwrap_copy *c = rt.copies;

		rt.copies = c->next;
		free(c->name);
		free(c);
	}
}

/* Frees a list of n strings and the list. */
static void strv_free(char **v, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		free(v[i]);
	}
	free(v);
}

static void gen_free_one(struct pwrap_gen *g)
{
	strv_free(g->incs, g->n_incs);
	free(g->gpath);
	free(g->src);
	free(g);
}

static void gens_free(void)
{
	while (rt.gens != NULL) {
		struct pwrap_gen *g = rt.gens;

		rt.gens = g->next;
		gen_free_one(g);
	}
}

static void runtime_forget(void)
{
	copies_free();
	gens_free();
	free(rt.top);
	free(rt.svc);
	free(rt.conf);
	rt.top = rt.svc = rt.conf = NULL;
}

static struct pwrap_copy *copy_find(const char *name)
{
	struct pwrap_copy *c;

	for (c = rt.copies; c != NULL; c = c->next) {
		if (strcmp(c->name, name) == 0) {
			return c;
		}
	}
	return NULL;
}

static void copy_drop(const char *name)
{
	struct pwrap_copy **pp;

	for (pp = &rt.copies; *pp != NULL; pp = &(*pp)->next) {
		if (strcmp((*pp)->name, name) == 0) {
			struct pwrap_copy *c = *pp;

			*pp = c->next;
			free(c->name);
			free(c);
			return;
		}
	}
}

/* Copies svcdir/name to services/name and remembers both signatures; the
 * copy's goes to *copy_sig too unless it is NULL. */
static int copy_in(const char *src, const char *name,
		   const struct pwrap_sig *src_sig, struct pwrap_sig *copy_sig)
{
	struct pwrap_copy *c = NULL;
	pwrap_path dst;
	char *buf = NULL;
	size_t len = 0;
	int rc = -1;

	if (!pjoin(dst, rt.svc, name) || read_file(src, &buf, &len) != 0 ||
	    write_atomic(dst, buf, len) != 0) {
		PWRAP_LOG(PWRAP_LOG_ERROR, "cannot copy %s into %s: %s", src,
			  rt.svc, strerror(errno));
		goto out;
	}
	c = copy_find(name);
	if (c == NULL) {
		c = calloc(1, sizeof(*c));
		if (c == NULL || (c->name = strdup(name)) == NULL) {
			free(c);
			goto out;
		}
		c->next = rt.copies;
		rt.copies = c;
	}
	c->src = *src_sig;
	if (!sig_of(dst, &c->copy)) {
		copy_drop(name);
		goto out;
	}
	if (copy_sig != NULL) {
		*copy_sig = c->copy;
	}
	PWRAP_LOG(PWRAP_LOG_TRACE, "copied %s to %s", src, dst);
	rc = 0;
out:
	free(buf);
	return rc;
}

static bool name_is_plain(const char *name)
{
	return name[0] != '\0' && name[0] != '.' && strchr(name, '/') == NULL &&
	       strlen(name) < NAME_MAX - 16;
}

static void copy_all(const char *svcdir)
{
	DIR *d = opendir(svcdir);
	struct dirent *de;

	if (d == NULL) {
		return;
	}
	while ((de = readdir(d)) != NULL) {
		struct pwrap_sig sig;
		pwrap_path src;

		if (name_is_plain(de->d_name) && pjoin(src, svcdir, de->d_name) &&
		    sig_of(src, &sig)) {
			copy_in(src, de->d_name, &sig, NULL);
		}
	}
	closedir(d);
}

static bool usable_dir(const char *d)
{
	struct stat st;

	return stat(d, &st) == 0 && S_ISDIR(st.st_mode) &&
	       access(d, W_OK | X_OK) == 0;
}

/*
 * Where runtime directories go: $TMPDIR when it is set (tests point it at a
 * private directory and check it is left empty); otherwise /dev/shm, a
 * memory file system where making and removing the directory costs a
 * fraction of what it does on a disk-backed /tmp (Debian 12's default); else
 * /tmp.
 */
static const char *tmpdir_base(void)
{
	const char *t = getenv("TMPDIR");
	const char *c;

	if (t == NULL || t[0] != '/' || !usable_dir(t)) {
		return usable_dir("/dev/shm") ? "/dev/shm" : "/tmp";
	}
	/* Paths end up as tokens of service-file lines: no blanks allowed. */
	for (c = t; *c != '\0'; c++) {
		if (*c == ' ' || *c == '\t' || *c == '#' || *c == '\n') {
			return "/tmp";
		}
	}
	return t;
}

static bool runtime_valid(void)
{
	struct stat st;

	if (rt.top == NULL) {
		return false;
	}
	if (rt.wfd >= 0 && (fstat(rt.wfd, &st) != 0 || st.st_dev != rt.wdev ||
			    st.st_ino != rt.wino)) {
		/* Someone closed our socket (closefrom() in a daemon): the
		 * watcher is removing the directory.  The fd is not ours. */
		rt.wfd = -1;
		return false;
	}
	if (stat(rt.conf, &st) != 0 || !S_ISDIR(st.st_mode)) {
		if (rt.wfd >= 0) {
			close(rt.wfd);	/* let the watcher clear the rest */
			rt.wfd = -1;
		}
		return false;
	}
	return true;
}

/* <directory of the object that defines sym>/sub, malloc'd, or NULL. */
static char *dir_of(const void *sym, const char *sub)
{
	Dl_info info;
	char *self, *slash;
	char *dir = NULL;

	if (sym == NULL || dladdr(sym, &info) == 0 || info.dli_fname == NULL) {
		return NULL;
	}
	self = realpath(info.dli_fname, NULL);
	if (self != NULL && (slash = strrchr(self, '/')) != NULL) {
		*slash = '\0';
		dir = join(self, sub);
	}
	free(self);
	return dir;
}

static void module_dirs_init(void)
{
	if (rt.moddir == NULL) {
		rt.moddir = dir_of((const void *)pwrap_enabled, "pam_wrapper");
	}
	if (rt.sysmoddir == NULL) {
		rt.sysmoddir = dir_of((const void *)pwrap_real()->pam_start,
				      "security");
	}
}

static bool pid_alive(long pid)
{
	return pid > 0 && (kill((pid_t)pid, 0) == 0 || errno == EPERM);
}

/*
 * Removes runtime directories of ours whose process and watcher are both
 * gone: left by a process killed before its watcher was running, or by a
 * `kill -9` of every process of the user.  Cheap (one readdir of TMPDIR) and
 * only done when a process creates its own directory.
 */
static void sweep_stale(const char *base)
{
	DIR *d = opendir(base);
	struct dirent *de;
	uid_t me = geteuid();

	if (d == NULL) {
		return;
	}
	while ((de = readdir(d)) != NULL) {
		struct stat st;
		char buf[24] = { 0 };
		char *end = NULL;
		long pid;
		int dfd, fd;

		if (strncmp(de->d_name, "pam_wrapper.", 12) != 0) {
			continue;
		}
		pid = strtol(de->d_name + 12, &end, 10);
		if (end == de->d_name + 12 || *end != '.' || pid_alive(pid)) {
			continue;
		}
		dfd = openat(dirfd(d), de->d_name,
			     O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (dfd < 0) {
			continue;
		}
		if (fstat(dfd, &st) != 0 || st.st_uid != me) {
			close(dfd);
			continue;
		}
		fd = openat(dfd, ".watcher", O_RDONLY | O_CLOEXEC);
		if (fd >= 0) {
			ssize_t n = read(fd, buf, sizeof(buf) - 1);

			close(fd);
			if (n > 0 && pid_alive(strtol(buf, NULL, 10))) {
				close(dfd);
				continue;	/* a forked child still uses it */
			}
		}
		PWRAP_LOG(PWRAP_LOG_DEBUG, "removing stale %s/%s", base,
			  de->d_name);
		rmtree_at(dfd, 0);	/* closes dfd */
		unlinkat(dirfd(d), de->d_name, AT_REMOVEDIR);
	}
	closedir(d);
}

/* The files a test wrote into the parent's services/ (path, contents). */
struct inherited {
	struct inherited *next;
	char *name;
	char *buf;
	size_t len;
};

static void inherited_free(struct inherited *h)
{
	while (h != NULL) {
		struct inherited *n = h->next;

		free(h->name);
		free(h->buf);
		free(h);
		h = n;
	}
}

static struct inherited *inherited_files(void)
{
	struct inherited *list = NULL;
	DIR *d = opendir(rt.svc);
	struct dirent *de;

	while (d != NULL && (de = readdir(d)) != NULL) {
		struct pwrap_copy *c = copy_find(de->d_name);
		struct inherited *h;
		struct pwrap_sig sig;
		pwrap_path path;

		if (!name_is_plain(de->d_name) || !pjoin(path, rt.svc, de->d_name) ||
		    !sig_of(path, &sig) || (c != NULL && sig_eq(&sig, &c->copy))) {
			continue;	/* not a file, or our pristine copy */
		}
		h = calloc(1, sizeof(*h));
		if (h == NULL || (h->name = strdup(de->d_name)) == NULL ||
		    read_file(path, &h->buf, &h->len) != 0) {
			inherited_free(h);
			continue;
		}
		h->next = list;
		list = h;
	}
	if (d != NULL) {
		closedir(d);
	}
	return list;
}

static void inherited_apply(const struct inherited *h)
{
	pwrap_path path;

	for (; h != NULL; h = h->next) {
		if (pjoin(path, rt.svc, h->name)) {
			write_atomic(path, h->buf, h->len);
		}
	}
}

/*
 * Makes sure the runtime directory exists; called with rt.lock held.
 * Without `thorough` an existing directory is trusted (the hot path of
 * pam_start: a stat of every file in it follows anyway, and a failure there
 * brings us back here with `thorough`).
 */
static int runtime_ensure(const char *svcdir, bool thorough)
{
	struct inherited *inherited = NULL;
	const char *keep;
	const char *base;
	const char *prefix;
	char *tmpl = NULL;
	pid_t gpid = -1;
	bool first;
	int wfd = -1;
	char *inc = NULL;
	int rc = -1;

	if (rt.top != NULL && rt.owner == getpid() &&
	    (!thorough || runtime_valid())) {
		return 0;
	}
	pthread_once(&atfork_once, atfork_register);
	keep = getenv("PAM_WRAPPER_KEEP_DIR");
	/* Sweep once per process tree: a forked child's parent already did,
	 * and a re-created directory follows our own. */
	first = rt.top == NULL;
	if (rt.top != NULL && rt.owner != getpid()) {
		/* A forked child gets a directory of its own, so that what it
		 * copies or writes never looks like a test's file to the
		 * parent; it inherits the parent's test-written files. */
		inherited = inherited_files();
		rt.wfd = -1;	/* the parent's: stays open, closes on exec */
	}
	runtime_forget();

	base = tmpdir_base();
	if (first) {
		sweep_stale(base);
	}
	rt.keep = keep != NULL && keep[0] == '1';
	/* Kept directories have a name of their own, which sweep_stale()
	 * never matches (so it leaves them alone, without a system call: a
	 * debugging session may leave many, and every new process sweeps). */
	prefix = rt.keep ? "pam_wrapper_kept" : "pam_wrapper";
	wfd = rt.keep ? -1 : watcher_start(&gpid);
	tmpl = make_top(base, prefix, wfd);
	if (tmpl == NULL && wfd >= 0) {
		/* e.g. a path too long to tell the watcher: do without */
		close(wfd);
		wfd = -1;
		tmpl = make_top(base, prefix, -1);
	}
	if (tmpl == NULL) {
		PWRAP_LOG(PWRAP_LOG_ERROR, "cannot create %s/%s.%ld.XXXXXX: "
			  "%s", base, prefix, (long)getpid(), strerror(errno));
		goto out;
	}
	if (wfd < 0 && !rt.keep) {
		PWRAP_LOG(PWRAP_LOG_WARN, "no watcher for %s: it is removed "
			  "at exit() only", tmpl);
	}
	if (wfd >= 0) {
		struct stat st;

		mark_watched(tmpl, gpid);
		if (fstat(wfd, &st) == 0) {
			rt.wfd = wfd;
			rt.wdev = st.st_dev;
			rt.wino = st.st_ino;
		} else {
			close(wfd);
		}
		wfd = -1;
	}
	rt.top = tmpl;
	tmpl = NULL;
	rt.svc = join(rt.top, "services");
	rt.conf = join(rt.top, "conf");
	inc = rt.conf ? join(rt.conf, ".inc") : NULL;
	if (rt.svc == NULL || inc == NULL || mkdir(rt.svc, 0755) != 0 ||
	    mkdir(rt.conf, 0755) != 0 || mkdir(inc, 0755) != 0) {
		PWRAP_LOG(PWRAP_LOG_ERROR, "cannot set up %s: %s", rt.top,
			  strerror(errno));
		pwrap_rmtree(rt.top);
		if (rt.wfd >= 0) {
			close(rt.wfd);
			rt.wfd = -1;
		}
		runtime_forget();
		goto out;
	}
	rt.owner = getpid();
	rt.gen++;
	if (svcdir != NULL) {
		copy_all(svcdir);
	}
	inherited_apply(inherited);
	setenv("PAM_WRAPPER_RUNTIME_DIR", rt.svc, 1);
	PWRAP_LOG(PWRAP_LOG_DEBUG, "runtime directory %s%s", rt.svc,
		  rt.keep ? " (kept: PAM_WRAPPER_KEEP_DIR=1)" : "");
	rc = 0;
out:
	inherited_free(inherited);
	free(tmpl);
	free(inc);
	return rc;
}

__attribute__((destructor)) static void runtime_destructor(void)
{
	/* Only the creating process removes it; forked children share it. */
	if (rt.top != NULL && !rt.keep && rt.owner == getpid()) {
		pwrap_rmtree(rt.top);
	}
}

static int has_libpam(struct dl_phdr_info *info, size_t size, void *data)
{
	const char *slash;

	(void)size;
	(void)data;
	if (info->dlpi_name == NULL) {
		return 0;
	}
	slash = strrchr(info->dlpi_name, '/');
	return strncmp(slash ? slash + 1 : info->dlpi_name, "libpam.so", 9) == 0;
}

void pwrap_runtime_early(void)
{
	if (!dl_iterate_phdr(has_libpam, NULL)) {
		return;	/* no PAM here (yet): stay out of the way */
	}
	pwrap_runtime_now();
}

void pwrap_runtime_now(void)
{
	/* A missing or unusable service dir only leaves services/ empty
	 * (copy_all() cannot open it); pam_start reports it. */
	const char *svcdir = getenv("PAM_WRAPPER_SERVICE_DIR");

	rt_lock();
	runtime_ensure(svcdir, true);
	rt_unlock();
}

/* ---- source lookup and rewriting ---------------------------------------- */

struct walk {
	const char *svcdir;
	struct pwrap_gen *seen[64];	/* files brought up to date */
	size_t n_seen;
	struct pwrap_gen *stack[PWRAP_MAX_INCLUDE_DEPTH];	/* include chain */
	size_t depth;
	char **incs;		/* include targets of the file being rewritten */
	size_t n_incs;
	int failed;
	int cycle;		/* libpam would recurse until the stack overflows */
	int suspect;		/* a file we made is gone: recheck the directory */
	int unwatched;		/* a source inotify cannot follow (fast path) */
};

/*
 * Finds the file libpam should see for `name` (a file name without '/'):
 * a test's own file in services/ wins; otherwise services/ is synced from
 * svcdir.  Returns true with its path in out and its signature in sig.
 */
static bool source_for(struct walk *w, const char *name, pwrap_path out,
		       struct pwrap_sig *sig)
{
	struct pwrap_copy *c = copy_find(name);
	struct pwrap_sig rsig, ssig;
	pwrap_path spath;
	bool have_r;

	if (!pjoin(out, rt.svc, name) || !pjoin(spath, w->svcdir, name)) {
		return false;
	}
	have_r = sig_of(out, &rsig);
	if (have_r && rsig.indirect) {
		w->unwatched = 1;
	}
	if (have_r && (c == NULL || !sig_eq(&rsig, &c->copy))) {
		*sig = rsig;	/* written or edited by the test */
		return true;
	}
	if (!have_r && c != NULL) {
		w->suspect = 1;	/* our copy vanished */
	}
	if (sig_of(spath, &ssig)) {
		if (ssig.indirect) {
			w->unwatched = 1;
		}
		if (!have_r || c == NULL || !sig_eq(&ssig, &c->src)) {
			if (copy_in(spath, name, &ssig, &rsig) != 0) {
				w->suspect = 1;
				return false;
			}
		}
		*sig = rsig;
		return true;
	}
	if (have_r) {
		unlink(out);	/* our copy of a file that is gone */
	}
	copy_drop(name);
	return false;
}

/* Source of an include target: absolute as written, relative inside the
 * runtime/service dirs (never /etc/pam.d). */
static bool include_source(struct walk *w, const char *target, pwrap_path out,
			   struct pwrap_sig *sig)
{
	if (!name_is_plain(target)) {
		w->unwatched = 1;	/* outside the watched directories */
	}
	if (target[0] == '/') {
		return snprintf(out, sizeof(pwrap_path), "%s", target) <
			       (int)sizeof(pwrap_path) && sig_of(out, sig);
	}
	if (name_is_plain(target)) {
		return source_for(w, target, out, sig);
	}
	return (pjoin(out, rt.svc, target) && sig_of(out, sig)) ||
	       (pjoin(out, w->svcdir, target) && sig_of(out, sig));
}

/* conf/.inc/<target, %-escaped>: a flat name for any target path. */
static bool include_gpath(const char *target, pwrap_path out)
{
	static const char hex[] = "0123456789abcdef";
	size_t j = (size_t)snprintf(out, sizeof(pwrap_path), "%s/.inc/", rt.conf);
	size_t i;

	for (i = 0; target[i] != '\0'; i++) {
		unsigned char c = (unsigned char)target[i];

		if (j + 4 >= sizeof(pwrap_path)) {
			return false;
		}
		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == '-' || c == '_' ||
		    (c == '.' && i > 0)) {
			out[j++] = (char)c;
		} else {
			out[j++] = '%';
			out[j++] = hex[c >> 4];
			out[j++] = hex[c & 15];
		}
	}
	out[j] = '\0';
	return true;
}

static int strv_add(char ***v, size_t *n, const char *s)
{
	char **nv = realloc(*v, (*n + 1) * sizeof(**v));

	if (nv == NULL) {
		return -1;
	}
	*v = nv;
	nv[*n] = strdup(s);
	if (nv[*n] == NULL) {
		return -1;
	}
	(*n)++;
	return 0;
}

static char *cb_include(void *ctx, const char *target, const char *src,
			unsigned line)
{
	struct walk *w = ctx;
	pwrap_path g;

	(void)src;
	(void)line;
	if (strv_add(&w->incs, &w->n_incs, target) != 0 ||
	    !include_gpath(target, g)) {
		w->failed = 1;
		return NULL;
	}
	return strdup(g);
}

static char *cb_module(void *ctx, const char *module, const char *src,
		       unsigned line)
{
	pwrap_path p;

	(void)ctx;
	if (strchr(module, '/') != NULL) {
		return NULL;
	}
	module_dirs_init();	/* first rewrite that needs them */
	if (rt.moddir == NULL) {
		return NULL;
	}
	if (rt.sysmoddir != NULL && pjoin(p, rt.sysmoddir, module) &&
	    access(p, F_OK) == 0) {
		return NULL;	/* the system has it: libpam finds it */
	}
	if (pjoin(p, rt.moddir, module) && access(p, F_OK) == 0) {
		return strdup(p);
	}
	PWRAP_LOG(PWRAP_LOG_WARN, "%s:%u: module %s is neither in %s nor in %s",
		  src, line, module, rt.sysmoddir ? rt.sysmoddir : "?",
		  rt.moddir);
	return NULL;
}

static struct pwrap_gen *gen_find(const char *gpath)
{
	struct pwrap_gen *g;

	for (g = rt.gens; g != NULL; g = g->next) {
		if (strcmp(g->gpath, gpath) == 0) {
			return g;
		}
	}
	return NULL;
}

static void gen_drop(const char *gpath)
{
	struct pwrap_gen **pp;

	for (pp = &rt.gens; *pp != NULL; pp = &(*pp)->next) {
		if (strcmp((*pp)->gpath, gpath) == 0) {
			struct pwrap_gen *g = *pp;

			*pp = g->next;
			gen_free_one(g);
			return;
		}
	}
}

static struct pwrap_gen *gen_new(const char *gpath)
{
	struct pwrap_gen *g = calloc(1, sizeof(*g));

	if (g == NULL || (g->gpath = strdup(gpath)) == NULL ||
	    (g->src = strdup("")) == NULL) {
		if (g != NULL) {
			free(g->gpath);
		}
		free(g);
		return NULL;
	}
	g->next = rt.gens;
	rt.gens = g;
	return g;
}

static int walk_file(struct walk *w, const char *gpath, const char *src,
		     const struct pwrap_sig *sig);

/* Brings conf/.inc/<target> up to date (recursively). */
static void walk_include(struct walk *w, const char *target, const char *from)
{
	struct pwrap_sig sig;
	pwrap_path gpath, src;

	if (!include_gpath(target, gpath)) {
		PWRAP_LOG(PWRAP_LOG_ERROR, "%s: include target too long", from);
		w->failed = 1;
		return;
	}
	if (!include_source(w, target, src, &sig)) {
		PWRAP_LOG(PWRAP_LOG_ERROR, "%s: include target '%s' not found "
			  "in %s or %s; the stack including it fails",
			  from, target, rt.svc, w->svcdir);
		gen_drop(gpath);
		unlink(gpath);
		return;
	}
	walk_file(w, gpath, src, &sig);
}

/* Rewrites src into g->gpath; replaces g's source, signature and includes. */
static int regenerate(struct walk *w, struct pwrap_gen *g, const char *src,
		      const struct pwrap_sig *sig)
{
	struct pwrap_rewrite_ops ops = {
		.include_target = cb_include,
		.module_path = cb_module,
		.ctx = w,
	};
	char *in = NULL;
	char *out = NULL;
	char *nsrc = NULL;
	char **incs = NULL;
	size_t n_incs = 0;
	size_t len = 0, out_len = 0;
	int rc = -1;

	if (read_file(src, &in, &len) != 0) {
		PWRAP_LOG(PWRAP_LOG_ERROR, "cannot read %s: %s", src,
			  strerror(errno));
		goto out;
	}
	rc = pwrap_rewrite_service(in, len, src, &ops, &out, &out_len);
	/* the include targets the callbacks collected are ours now */
	incs = w->incs;
	n_incs = w->n_incs;
	w->incs = NULL;
	w->n_incs = 0;
	if (rc != 0 || w->failed || (nsrc = strdup(src)) == NULL) {
		rc = -1;
		goto out;
	}
	if (out_len > 0 && out[out_len - 1] == '\\') {
		/* libpam would refuse it too (and leak doing so) */
		PWRAP_LOG(PWRAP_LOG_ERROR, "%s: the file ends in a continued "
			  "line (a last line ending in '\\'); refusing it as "
			  "libpam does", src);
		w->failed = 1;
		rc = -1;
		goto out;
	}
	if (write_atomic(g->gpath, out, out_len) != 0) {
		PWRAP_LOG(PWRAP_LOG_ERROR, "cannot write %s: %s", g->gpath,
			  strerror(errno));
		w->suspect = 1;
		rc = -1;
		goto out;
	}
	strv_free(g->incs, g->n_incs);
	free(g->src);
	g->incs = incs;
	g->n_incs = n_incs;
	g->src = nsrc;
	g->sig = *sig;
	incs = NULL;
	n_incs = 0;
	nsrc = NULL;
	PWRAP_LOG(PWRAP_LOG_TRACE, "rewrote %s into %s", g->src, g->gpath);
	rc = 0;
out:
	strv_free(incs, n_incs);
	free(nsrc);
	free(in);
	free(out);
	return rc;
}

/* Brings gpath up to date from src unless the cached copy is current. */
static int walk_file(struct walk *w, const char *gpath, const char *src,
		     const struct pwrap_sig *sig)
{
	struct pwrap_gen *g = gen_find(gpath);
	size_t i;

	for (i = 0; g != NULL && i < w->depth; i++) {
		if (w->stack[i] == g) {
			PWRAP_LOG(PWRAP_LOG_ERROR, "%s: include cycle (it "
				  "includes itself through %zu file(s)); "
				  "refusing it, libpam would crash", src,
				  w->depth - i - 1);
			w->cycle = 1;
			return -1;
		}
	}
	for (i = 0; g != NULL && i < w->n_seen; i++) {
		if (w->seen[i] == g) {
			return 0;	/* already brought up to date */
		}
	}
	if (w->depth == PWRAP_MAX_INCLUDE_DEPTH) {
		PWRAP_LOG(PWRAP_LOG_ERROR, "%s: includes nested deeper than "
			  "%d levels", src, PWRAP_MAX_INCLUDE_DEPTH);
		w->cycle = 1;
		return -1;
	}
	if (g == NULL && (g = gen_new(gpath)) == NULL) {
		return -1;
	}
	if ((strcmp(g->src, src) != 0 || !sig_eq(&g->sig, sig)) &&
	    regenerate(w, g, src, sig) != 0) {
		gen_drop(gpath);
		return -1;
	}
	if (w->n_seen < sizeof(w->seen) / sizeof(w->seen[0])) {
		w->seen[w->n_seen++] = g;
	}
	w->stack[w->depth++] = g;
	for (i = 0; i < g->n_incs; i++) {
		walk_include(w, g->incs[i], g->src);
	}
	w->depth--;
	return 0;
}

/* Puts an empty file at gpath (once), recorded with an empty source. */
static int placeholder(const char *gpath)
{
	static const char text[] = "# not in the service directory\n";
	struct pwrap_gen *g = gen_find(gpath);

	if (g != NULL && g->src[0] == '\0' && g->n_incs == 0 &&
	    g->sig.ino == 0) {
		return 0;
	}
	gen_drop(gpath);
	g = gen_new(gpath);
	if (g == NULL) {
		return -1;
	}
	if (write_atomic(gpath, text, sizeof(text) - 1) != 0) {
		gen_drop(gpath);
		return -1;
	}
	return 0;
}

/*
 * Brings conf/<name> up to date; returns 1 if present, 0 if not, -1 error.
 * With `empty_if_missing`, a missing source gives an empty file: libpam
 * always reads "other" too and logs an error when it is missing, and
 * replacing (not unlinking) keeps concurrent pam_start()s from seeing a gap.
 */
static int walk_service(struct walk *w, const char *name, bool empty_if_missing)
{
	struct pwrap_sig sig;
	pwrap_path gpath, src;

	if (!pjoin(gpath, rt.conf, name)) {
		return -1;
	}
	if (!source_for(w, name, src, &sig)) {
		if (empty_if_missing) {
			return placeholder(gpath) == 0 ? 0 : -1;
		}
		gen_drop(gpath);
		unlink(gpath);
		return 0;
	}
	return walk_file(w, gpath, src, &sig) == 0 ? 1 : -1;
}

/* ---- the fast path ------------------------------------------------------ */

/*
 * A process that calls pam_start again and again (a test suite, libpamtest
 * or pypamtest in a loop, a fuzzer) would pay five stat(2) per call to see
 * edits.  From its second full check on, it gets an inotify instance
 * watching the four directories whose files make up the configuration: while
 * no event is queued, a service whose last full check ran with an empty
 * queue before and after it is still current, and pam_start costs one
 * ioctl(FIONREAD).  Any event sends every service back to the full check.
 * Files the watches cannot see change (symlinks, hard links, includes
 * outside those directories) keep their service on the full check.  A
 * process that calls pam_start once never makes an instance (they are
 * limited per user: 128 by default); when none can be made, every pam_start
 * does the full check, as before.
 */

static bool fast_fd_ours(void);

static void fast_forget(void)
{
	if (fast.fd >= 0 && fast_fd_ours()) {
		close(fast.fd);
	}
	fast.fd = -1;
	free(fast.svcdir);
	fast.svcdir = NULL;
	fast.n_names = 0;
	fast.tried = false;
}

/* The fd is still the instance we made (an application's closefrom() may
 * have closed it, and something else may have its number now). */
static bool fast_fd_ours(void)
{
	struct stat st;

	return fstat(fast.fd, &st) == 0 && (st.st_mode & S_IFMT) == 0 &&
	       st.st_dev == fast.dev && st.st_ino == fast.ino;
}

/* Reads every queued event; returns false if the watches must be made again
 * (a watched directory went away or moved, or the queue overflowed). */
static bool fast_drain(void)
{
	char buf[4096] __attribute__((aligned(__alignof__(struct inotify_event))));
	bool again = true;

	if (!fast_fd_ours()) {
		fast.fd = -1;	/* not ours to close any more */
		fast.off = true;
		PWRAP_LOG(PWRAP_LOG_DEBUG, "inotify descriptor closed by the "
			  "application: every pam_start checks the files");
		return false;
	}
	for (;;) {
		ssize_t n = read(fast.fd, buf, sizeof(buf));
		size_t off = 0;

		if (n < 0 && errno == EINTR) {
			continue;
		}
		if (n <= 0) {
			return again && (n == 0 || errno == EAGAIN);
		}
		fast.n_names = 0;
		while (off + sizeof(struct inotify_event) <= (size_t)n) {
			const struct inotify_event *ev =
				(const struct inotify_event *)(buf + off);

			if (ev->mask & (IN_IGNORED | IN_DELETE_SELF |
					IN_MOVE_SELF | IN_Q_OVERFLOW |
					IN_UNMOUNT)) {
				again = false;
			}
			off += sizeof(*ev) + ev->len;
		}
	}
}

static bool fast_add(int fd, const char *dir, uint32_t extra)
{
	return inotify_add_watch(fd, dir, IN_MODIFY | IN_ATTRIB |
				 IN_CLOSE_WRITE | IN_CREATE | IN_DELETE |
				 IN_MOVED_FROM | IN_MOVED_TO | IN_DELETE_SELF |
				 IN_MOVE_SELF | IN_ONLYDIR | extra) >= 0;
}

/* File systems where every change made on this machine gives an inotify
 * event; on NFS, 9p, FUSE (virtiofs, sshfs) another client or the host can
 * change a file without one. */
static bool fast_local_fs(const char *dir)
{
	struct statfs sf;

	if (statfs(dir, &sf) != 0) {
		return false;
	}
	switch ((unsigned long)sf.f_type) {
	case 0xEF53UL:		/* ext2, ext3, ext4 */
	case 0x01021994UL:	/* tmpfs */
	case 0x858458F6UL:	/* ramfs */
	case 0x58465342UL:	/* xfs */
	case 0x9123683EUL:	/* btrfs */
	case 0xF2F52010UL:	/* f2fs */
	case 0x2FC12FC1UL:	/* zfs */
	case 0x794C7630UL:	/* overlayfs */
		return true;
	default:
		return false;
	}
}

/*
 * Watches the directories above the service dir for being moved or removed
 * (a test that renames a parent and makes a new one at the same path).  The
 * path must be canonical: a symlink or "..", "." in it could be changed with
 * no event on any directory we watch.  Returns false if it cannot be done.
 */
static bool fast_add_parents(int fd, const char *svcdir)
{
	pwrap_path want;
	char *canon = realpath(svcdir, NULL);
	size_t j = 0;
	bool ok;

	/* svcdir with repeated and trailing slashes removed */
	for (size_t i = 0; svcdir[i] != '\0' && j + 1 < sizeof(want); i++) {
		if (svcdir[i] != '/' || j == 0 || want[j - 1] != '/') {
			want[j++] = svcdir[i];
		}
	}
	if (j > 1 && want[j - 1] == '/') {
		j--;
	}
	want[j] = '\0';
	ok = canon != NULL && strcmp(canon, want) == 0;
	for (char *slash; ok && (slash = strrchr(canon, '/')) != NULL &&
			  slash != canon;) {
		*slash = '\0';
		ok = inotify_add_watch(fd, canon, IN_MOVE_SELF | IN_DELETE_SELF |
				       IN_ONLYDIR | IN_DONT_FOLLOW) >= 0;
	}
	free(canon);
	return ok;
}

/* Makes the instance and its watches for fast.svcdir (fast.fd stays -1 if
 * the directories cannot be watched). */
static void fast_open(void)
{
	struct stat st;
	pwrap_path inc;
	int fd, hi;

	fast.tried = true;
	if (!fast_local_fs(fast.svcdir)) {
		PWRAP_LOG(PWRAP_LOG_DEBUG, "%s is not on a local file system: "
			  "every pam_start checks the files", fast.svcdir);
		return;
	}
	fd = inotify_init1(IN_NONBLOCK | IN_CLOEXEC);
	if (fd < 0) {
		PWRAP_LOG(PWRAP_LOG_DEBUG, "no inotify instance (%s): every "
			  "pam_start checks the files", strerror(errno));
		fast.off = true;
		return;
	}
	hi = fcntl(fd, F_DUPFD_CLOEXEC, PWRAP_FAST_FD_MIN);
	if (hi >= 0) {
		close(fd);
		fd = hi;
	}
	/* A symlinked service dir is not watched (IN_DONT_FOLLOW fails on
	 * it): the link could be pointed elsewhere without an event. */
	if (!pjoin(inc, rt.conf, ".inc") ||
	    !fast_add(fd, fast.svcdir, IN_DONT_FOLLOW) ||
	    !fast_add_parents(fd, fast.svcdir) ||
	    !fast_add(fd, rt.svc, 0) || !fast_add(fd, rt.conf, 0) ||
	    !fast_add(fd, inc, 0) || fstat(fd, &st) != 0) {
		PWRAP_LOG(PWRAP_LOG_DEBUG, "cannot watch %s (%s): every "
			  "pam_start checks the files", fast.svcdir,
			  strerror(errno));
		close(fd);
		return;
	}
	fast.fd = fd;
	fast.dev = st.st_dev;
	fast.ino = st.st_ino;
}

/*
 * Called before a full check: empties the queue, so that the check that
 * follows sees everything up to now.  The instance is made at the second
 * full check with the same service dir (and runtime dir): a process that
 * calls pam_start once, or alternates between directories, never makes one.
 */
static void fast_begin(const char *svcdir)
{
	bool same = fast.svcdir != NULL && fast.gen == rt.gen &&
		    strcmp(fast.svcdir, svcdir) == 0;

	if (same && fast.fd >= 0 && fast_drain()) {
		return;
	}
	if (same && fast.fd < 0 && fast.tried) {
		return;		/* cannot be watched: full checks only */
	}
	if (!same) {
		fast_forget();
		fast.svcdir = strdup(svcdir);
		fast.gen = rt.gen;
		return;
	}
	/* the second check, or the watches must be made again */
	if (fast.fd >= 0) {
		close(fast.fd);
		fast.fd = -1;
	}
	fast.n_names = 0;
	if (!fast.off && svcdir[0] == '/') {
		fast_open();
	}
}

/* `name` passed a full check since the last event. */
static bool fast_known(const char *name)
{
	for (size_t i = 0; i < fast.n_names; i++) {
		if (strcmp(fast.names[i], name) == 0) {
			return true;
		}
	}
	return false;
}

static bool fast_queue_empty(void)
{
	int queued = 1;

	return ioctl(fast.fd, FIONREAD, &queued) == 0 && queued == 0;
}

/* Called after a full check that succeeded: if nothing happened since
 * fast_begin() (our own writes included), the service is current until the
 * next event. */
static void fast_end(const struct walk *w, const char *name)
{
	size_t len = strlen(name);
	char *slot;

	if (len > NAME_MAX || fast.fd < 0 || w->unwatched || w->suspect ||
	    !fast_queue_empty()) {
		return;
	}
	if (fast_known(name)) {
		return;
	}
	slot = fast.n_names < PWRAP_FAST_NAMES ? fast.names[fast.n_names++] :
	       fast.names[fast.next++ % PWRAP_FAST_NAMES];
	memcpy(slot, name, len + 1);
}

/* True when `name` in svcdir is known current and no event is queued. */
static bool fast_current(const char *svcdir, const char *name)
{
	return fast.n_names > 0 && fast.gen == rt.gen &&
	       strcmp(fast.svcdir, svcdir) == 0 && fast_known(name) &&
	       fast_queue_empty();
}

/* libpam's view of a service name: the part after the last '/', lowercase. */
static void service_file_name(const char *service, pwrap_path name)
{
	const char *slash = strrchr(service, '/');
	char *c;

	snprintf(name, sizeof(pwrap_path), "%s", slash ? slash + 1 : service);
	for (c = name; *c != '\0'; c++) {
		if (*c >= 'A' && *c <= 'Z') {
			*c = (char)(*c - 'A' + 'a');
		}
	}
}

/* One pass over the service and "other"; returns a PAM code. */
static int prepare_walk(struct walk *w, const char *name)
{
	int found = name_is_plain(name) ? walk_service(w, name, false) : 0;

	if (found >= 0 && strcmp(name, "other") != 0) {
		int other = walk_service(w, "other", found == 1);

		if (found == 0) {
			found = other;
		} else if (other < 0) {
			found = -1;
		}
	}
	if (found < 0 || w->failed || w->cycle) {
		return PAM_ABORT;
	}
	return found == 0 ? PAM_SERVICE_ERR : PAM_SUCCESS;
}

static void walk_reset(struct walk *w)
{
	strv_free(w->incs, w->n_incs);
	memset(w, 0, sizeof(*w));
}

int pwrap_prepare(const char *service, const char *svcdir, char **confdir)
{
	struct walk w = { 0 };
	const char *unchanged = "";
	struct stat st;
	pwrap_path name;
	int rc;

	if (confdir != NULL) {
		*confdir = NULL;
	}
	if (svcdir == NULL) {
		svcdir = getenv("PAM_WRAPPER_SERVICE_DIR");
	}
	if (svcdir == NULL || svcdir[0] == '\0') {
		PWRAP_LOG(PWRAP_LOG_ERROR, "PAM_WRAPPER=1 but "
			  "PAM_WRAPPER_SERVICE_DIR is not set; refusing to "
			  "use the system's PAM configuration");
		return PAM_ABORT;
	}
	rt_lock();
	if (service != NULL) {
		service_file_name(service, name);
		if (fast_current(svcdir, name)) {
			unchanged = " (no change since the last check)";
			goto done;
		}
	}
	rc = PAM_ABORT;
	if (stat(svcdir, &st) != 0) {
		PWRAP_LOG(PWRAP_LOG_ERROR, "service directory %s: %s", svcdir,
			  strerror(errno));
		goto out;
	}
	if (!S_ISDIR(st.st_mode)) {
		PWRAP_LOG(PWRAP_LOG_ERROR, "service directory %s: not a "
			  "directory", svcdir);
		goto out;
	}
	if (service == NULL) {
		rc = PAM_SYSTEM_ERR;
		goto out;
	}
	if (runtime_ensure(svcdir, false) != 0) {
		goto out;
	}
	fast_begin(svcdir);
	w.svcdir = svcdir;
	rc = prepare_walk(&w, name);
	if (w.suspect) {
		/* Something removed files of ours (a tidy-up of TMPDIR, or
		 * a daemon's closefrom() let the watcher clean up): check
		 * the directory, recreate it if needed, and try once more. */
		walk_reset(&w);
		w.svcdir = svcdir;
		if (runtime_ensure(svcdir, true) != 0) {
			rc = PAM_ABORT;
			goto out;
		}
		fast_begin(svcdir);
		rc = prepare_walk(&w, name);
	}
	if (rc == PAM_SERVICE_ERR) {
		PWRAP_LOG(PWRAP_LOG_ERROR, "no service file '%s' and no "
			  "'other' in %s (or %s)%s", name, svcdir, rt.svc,
			  access(svcdir, R_OK | X_OK) != 0 ?
			  ": the directory is not readable" : "");
		rc = PAM_ABORT;	/* what libpam says (and it would leak) */
		goto out;
	}
	if (rc != PAM_SUCCESS) {
		goto out;
	}
	fast_end(&w, name);
done:
	rc = PAM_SUCCESS;
	if (confdir != NULL && (*confdir = strdup(rt.conf)) == NULL) {
		rc = PAM_BUF_ERR;
	}
	PWRAP_LOG(PWRAP_LOG_DEBUG, "service '%s' from %s via %s%s", name,
		  svcdir, rt.conf, unchanged);
out:
	rt_unlock();
	walk_reset(&w);
	return rc;
}
