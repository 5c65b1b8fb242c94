/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The runtime directory of a wrapped process: where it is made, how we
 * know it is still ours, and its end without any helper process.
 *
 * Layout: <base>/pam_wrapper.<pid>.XXXXXX/ (mode 0700; 0711 while the
 * process runs as another euid for a while, see pwrap_uid.c) with
 *   .lock      liveness: its owner holds flock(LOCK_SH) on it through a
 *              mapping of it (Linux, see map_probe: a program's
 *              closefrom() cannot drop it) or a descriptor, which forked
 *              children inherit (and exec drops);
 *   services/  exported as PAM_WRAPPER_RUNTIME_DIR;
 *   conf/      what libpam reads; conf/.inc/ holds included files (made
 *              when first needed).
 *
 * <base> is the first of $TMPDIR, /dev/shm (Linux: a memory file system,
 * cheaper than a disk-backed /tmp) and /tmp that is trusted and takes the
 * directory and everything written into it (pwrap_base.c says which are
 * trusted).  When a write fails for lack of space (the directory itself,
 * a copy into services/, a file of conf/), the directory is removed and
 * the next base tried, with the files a test wrote carried along.
 *
 * What libpam reads is named by path (pam_start_confdir takes one), so the
 * path must keep leading to what we made: in a trusted base no other user
 * can rename anything of ours, and at every preparation conf/ is checked
 * against the device, inode and owner it had when made.  A directory
 * renamed or replaced in the meantime (by its owner or root) is left where
 * it is and a new one made.  The legacy path opens conf/ files through a
 * descriptor of conf/ (pwrap_rundir_conf_fd).
 *
 * A directory is live while someone holds its lock.  flock locks belong to
 * the open file, not to a pid, so the test is right across PID namespaces
 * and under uid_wrapper (where getuid() lies), and a lock never outlives
 * the processes that hold it, however they end.  At a normal exit the last
 * holder removes the directory.  A forked child that makes a directory of
 * its own (at its first use of PAM) keeps holding the one it inherited and
 * removes it at exit if nobody else holds it: a program that calls
 * daemon(3) (whose parent ends with _exit) leaves nothing, also when the
 * parent's _exit comes after the child's end (a busy machine): the parent
 * lets go of its holds right after daemon's fork (pwrap_prepare.c).  Before the
 * process switches its effective uid away from the owner for good (it
 * could not remove the directory afterwards), the directories it holds,
 * made or inherited, go unless another process holds them (pwrap_uid.c);
 * through a switch for a while the directory stays in use, and is removed
 * by the owner's uid taken back in the calling thread alone when the
 * process ends so switched (owner_for_removal).  Only a directory the
 * process may read a stack from is used (pwrap_cred.c; checked when made
 * and at each preparation).
 * After _exit, exec or a kill, the next wrapped process of the same user
 * that makes a directory removes every directory whose lock it can take
 * (the sweep, pwrap_sweep.c).  Kept directories (PAM_WRAPPER_KEEP_DIR=1)
 * are named pam_wrapper_kept.* and never removed.  A directory is made
 * before its .lock, so a maker whose directory vanished before it held the
 * lock starts again.
 *
 * Not thread-safe: pwrap_prepare.c serialises every call.
 */
#define _GNU_SOURCE
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "pwrap_private.h"

/* A runtime directory this process holds. */
struct held {
	char *top;		/* malloc'd path; NULL: none */
	int lockfd;		/* holds LOCK_SH on top/.lock; -1 if none */
	void *map;		/* or a mapping of top/.lock holds it (see
				 * map_probe); NULL if none */
	dev_t ldev;		/* identity of top/.lock: tells that lockfd */
	ino_t lino;		/* is still ours (a program may close it),
				 * and at exit that top is our directory */
};

static struct {
	struct held cur;	/* the directory in use */
	struct held prev;	/* the one inherited before this process made
				 * cur: removed at exit when nobody holds it */
	char *svc;
	char *conf;
	struct pwrap_rundir view;
	dev_t cdev;		/* identity of conf/ when made */
	ino_t cino;
	int conffd;		/* conf/, opened for the legacy path; -1 */
	pid_t owner;		/* the process that made cur */
	uid_t fsuid;		/* owner of what we made: our real file
				 * system uid, whatever getuid() says under
				 * uid_wrapper */
	unsigned base;		/* PWRAP_BASE_* of cur's base */
	unsigned full_bases;	/* bases where a write lacked space */
	bool full;		/* cur lacked space: replace it */
	bool keep;
	bool swept;		/* this process tree swept already */
	bool searchable;	/* cur is open for search (mode 0711) */
} rd = {
	.cur.lockfd = -1,
	.prev.lockfd = -1,
	.conffd = -1,
};

const struct pwrap_rundir *pwrap_rundir(void)
{
	rd.view.top = rd.cur.top;
	rd.view.svc = rd.svc;
	rd.view.conf = rd.conf;
	return &rd.view;
}

bool pwrap_rundir_inherited(void)
{
	return rd.cur.top != NULL && rd.owner != getpid();
}

bool pwrap_rundir_full(void)
{
	return rd.full;
}

bool pwrap_rundir_no_space(int err)
{
	if (err != ENOSPC && err != EDQUOT) {
		return false;
	}
	if (rd.cur.top != NULL && rd.owner == getpid()) {
		rd.full = true;
		rd.full_bases |= rd.base;
	}
	return true;
}

/* Moves fd above the standard descriptors: a program started with 0, 1 or
 * 2 closed must never write into our lock file. */
static int fd_high(int fd)
{
	int nfd;

	if (fd < 0 || fd > 2) {
		return fd;
	}
	nfd = fcntl(fd, F_DUPFD_CLOEXEC, 3);
	close(fd);
	return nfd;
}

/*
 * Whether a mapping of the lock file keeps its flock(2) lock once every
 * descriptor of it is closed (Linux: a lock belongs to the open file,
 * which a mapping holds too), found once per process on the first
 * directory it makes, when nobody else can hold that lock: 1 yes, 0 no,
 * -1 not known yet.  Then the lock survives a program's closefrom(), which
 * otherwise lets another wrapped process sweep a live directory.
 */
static int map_holds = -1;

/* Maps the lock file fd (one page, no access: it is never read). */
static void *map_of(int fd)
{
	void *m = mmap(NULL, 1, PROT_NONE, MAP_SHARED, fd, 0);

	return m == MAP_FAILED ? NULL : m;
}

/* With the lock held through fd (on top/.lock, just made), finds out
 * whether a mapping keeps it without the descriptor; when it does, *map
 * holds it and fd is closed (-1 is returned), else fd is returned. */
static int map_probe(const char *top, int fd, void **map)
{
	pwrap_path path;
	void *m;
	int other;

	if (map_holds == 0 || (m = map_of(fd)) == NULL) {
		return fd;
	}
	if (map_holds < 0) {
		/* nobody else knows the new directory: a second open file
		 * is refused the exclusive lock only if the mapping holds
		 * ours */
		if (!pwrap_pjoin(path, top, PWRAP_LOCK_NAME) ||
		    (other = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
				  O_NOCTTY)) < 0) {
			munmap(m, 1);
			return fd;
		}
		close(fd);
		map_holds = flock(other, LOCK_EX | LOCK_NB) != 0;
		if (map_holds == 0) {
			/* (the exclusive lock is ours: take it shared) */
			munmap(m, 1);
			while (flock(other, LOCK_SH) != 0 && errno == EINTR) {
			}
			return fd_high(other);
		}
		close(other);
		*map = m;
		return -1;
	}
	close(fd);
	*map = m;
	return -1;
}

/* Whether h still holds its lock (a mapping stays; a descriptor may have
 * been closed, or another file put on its number, by the program). */
static bool held_live(const struct held *h)
{
	return h->map != NULL || pwrap_fd_is(h->lockfd, h->ldev, h->lino);
}

/* Whether this process may change what it shares with its parent's
 * memory: not in a child of vfork(2) (which runs no fork handlers). */
static bool own_memory(void)
{
	return rd.owner == getpid() || pwrap_fork_child();
}

/*
 * Opens top/.lock (creating it when `create`), takes the shared lock and
 * checks that the locked file is still the one top holds (a sweep may have
 * removed it while we waited).  Returns the descriptor, or -1.
 */
static int lock_take(const char *top, bool create, struct stat *st)
{
	int flags = O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NOCTTY;
	struct stat now;
	pwrap_path path;
	int fd;

	if (!pwrap_pjoin(path, top, PWRAP_LOCK_NAME)) {
		errno = ENAMETOOLONG;
		return -1;
	}
	fd = fd_high(open(path, create ? flags | O_CREAT | O_EXCL : flags,
			  0600));
	if (fd < 0) {
		return -1;
	}
	while (flock(fd, LOCK_SH) != 0) {
		if (errno != EINTR) {
			goto fail;
		}
	}
	if (fstat(fd, st) != 0 || stat(path, &now) != 0 ||
	    now.st_dev != st->st_dev || now.st_ino != st->st_ino) {
		errno = ENOENT;
		goto fail;
	}
	return fd;
fail:
	close(fd);
	return -1;
}

/* Lets go of h's lock: the descriptor (if still ours) and the mapping
 * (not in a child of vfork(2), where it is the parent's too). */
static void held_unlock(const struct held *h)
{
	if (pwrap_fd_is(h->lockfd, h->ldev, h->lino)) {
		close(h->lockfd);
	}
	if (h->map != NULL && own_memory()) {
		munmap(h->map, 1);
	}
}

/* Lets go of h's lock and removes its directory when nobody else holds it
 * (then true).  h itself is not written: in a child of vfork(2) it is its
 * parent's. */
static bool held_reap(const struct held *h)
{
	const char *slash = h->top != NULL ? strrchr(h->top, '/') : NULL;
	bool gone = false;
	pwrap_path base;
	int basefd;

	held_unlock(h);
	if (slash == NULL || (size_t)(slash - h->top) >= sizeof(base)) {
		return false;
	}
	memcpy(base, h->top, (size_t)(slash - h->top));
	base[slash - h->top] = '\0';
	basefd = open(base[0] != '\0' ? base : "/",
		      O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (basefd >= 0) {
		gone = pwrap_reap(basefd, slash + 1, 0, h->ldev, h->lino);
		close(basefd);
	}
	return gone;
}

/* Lets go of h: closes its lock (if the descriptor is still ours) and,
 * with `remove`, removes the directory when nobody else holds it. */
static void held_drop(struct held *h, bool remove)
{
	if (h->top == NULL) {
		return;
	}
	if (remove) {
		(void)held_reap(h);
	} else {
		held_unlock(h);
	}
	h->lockfd = -1;
	h->map = NULL;
	free(h->top);
	h->top = NULL;
}

/* Forgets the current directory (its lock is let go of already). */
static void forget_cur(void)
{
	if (pwrap_fd_is(rd.conffd, rd.cdev, rd.cino)) {
		close(rd.conffd);
	}
	rd.conffd = -1;
	free(rd.cur.top);
	rd.cur.top = NULL;
	rd.cur.lockfd = -1;
	rd.cur.map = NULL;
	rd.searchable = false;
	free(rd.svc);
	free(rd.conf);
	rd.svc = rd.conf = NULL;
	rd.full = false;
}

/*
 * Lets go of the current directory: one this process made is forgotten
 * (with `remove`, removed when nobody else holds it); one it inherited
 * stays held as prev, to be removed at exit (an older prev is let go of,
 * and removed when nobody holds it).
 */
static void retire(bool remove)
{
	if (rd.cur.top != NULL && rd.owner != getpid() && !rd.keep) {
		held_drop(&rd.prev, true);
		rd.prev = rd.cur;
		rd.cur.top = NULL;
	} else {
		held_drop(&rd.cur, remove && !rd.keep);
	}
	forget_cur();
}

/*
 * Whether the directory top, just made, is one this process may read a
 * stack from (pwrap_cred.c): not when its owner, the effective uid, is a
 * user the process is not through and through (root after seteuid(user)).
 * Otherwise top is removed and the error said.
 */
static bool owner_ok(const char *top)
{
	struct pwrap_ids ids;
	struct stat st;

	if (stat(top, &st) != 0 || pwrap_owner_trusted(st.st_uid, &ids)) {
		return true;	/* (a failed stat shows in what follows) */
	}
	(void)rmdir(top);
	PWRAP_LOG(PWRAP_LOG_ERROR, "not making a runtime directory as uid %lu: "
		  "this process can become uid %lu or %lu again (its real and "
		  "saved uids), and so could a module loaded from a directory "
		  "every process of uid %lu can write; switch back first",
		  (unsigned long)st.st_uid, (unsigned long)ids.r,
		  (unsigned long)ids.s, (unsigned long)st.st_uid);
	return false;
}

/*
 * Makes base/<prefix>.<pid>.XXXXXX with its lock and subdirectories.  On
 * success fills rd (after retire()) and returns 0; else -1 with errno set
 * and nothing left behind.  bst is base's stat: a base that is not root's
 * must be ours, which we learn from what we made (*distrust then holds the
 * owner we found ours to be, and errno is EPERM).
 */
static int make_in(const char *base, const struct stat *bst,
		   const char *prefix, uid_t *distrust)
{
	struct held h = { .lockfd = -1 };
	char *svc = NULL;
	char *conf = NULL;
	struct stat st, cst;
	int err = 0;

	for (int attempt = 0; attempt < 8; attempt++) {
		free(h.top);
		if (asprintf(&h.top, "%s/%s.%ld.XXXXXX", base, prefix,
			     (long)getpid()) < 0) {
			h.top = NULL;
			err = ENOMEM;
			goto fail;
		}
		if (mkdtemp(h.top) == NULL) {
			err = errno;
			goto fail;
		}
		/* a base that is not root's must be ours: the owner of what
		 * we just made; else only this empty directory is removed */
		if (bst->st_uid != 0 && stat(h.top, &st) != 0) {
			err = errno;
			(void)rmdir(h.top);
			goto fail;
		}
		if (bst->st_uid != 0 && st.st_uid != bst->st_uid) {
			(void)rmdir(h.top);
			*distrust = st.st_uid;
			err = EPERM;
			goto fail;
		}
		if (!owner_ok(h.top)) {
			err = EACCES;
			goto fail;
		}
		h.lockfd = lock_take(h.top, true, &st);
		if (h.lockfd >= 0) {
			h.lockfd = map_probe(h.top, h.lockfd, &h.map);
			break;
		}
		/* swept before we held the lock: start again */
		err = errno;
		pwrap_rmtree(h.top);
	}
	if (h.lockfd < 0 && h.map == NULL) {
		goto fail;
	}
	svc = pwrap_join(h.top, "services");
	conf = pwrap_join(h.top, "conf");
	if (svc == NULL || conf == NULL) {
		err = ENOMEM;
		goto fail_rm;
	}
	/* (modes as said, whatever the umask: a process that switches its
	 * euid for a while reads conf/ as that uid, see pwrap_uid.c) */
	if (mkdir(svc, 0755) != 0 || chmod(svc, 0755) != 0 ||
	    mkdir(conf, 0755) != 0 || chmod(conf, 0755) != 0 ||
	    stat(conf, &cst) != 0) {
		err = errno;
		goto fail_rm;
	}
	retire(false);
	h.ldev = st.st_dev;
	h.lino = st.st_ino;
	rd.cur = h;
	rd.svc = svc;
	rd.conf = conf;
	rd.cdev = cst.st_dev;
	rd.cino = cst.st_ino;
	rd.fsuid = st.st_uid;
	rd.owner = getpid();
	return 0;
fail_rm:
	pwrap_rmtree(h.top);
fail:
	if (h.lockfd >= 0) {
		close(h.lockfd);
	}
	if (h.map != NULL) {
		munmap(h.map, 1);
	}
	free(h.top);
	free(svc);
	free(conf);
	errno = err;
	return -1;
}

/* Appends "; " (unless first) and a formatted note to buf (n bytes). */
__attribute__((format(printf, 3, 4)))
static void note(char *buf, size_t n, const char *fmt, ...)
{
	size_t used = strlen(buf);
	va_list ap;

	if (used > 0 && used + 2 < n) {
		memcpy(buf + used, "; ", 3);
		used += 2;
	}
	va_start(ap, fmt);
	vsnprintf(buf + used, n - used, fmt, ap);
	va_end(ap);
}

/* Creates a new directory in the first base that is trusted and takes it;
 * says once per process why a base was not trusted. */
static int make_new(void)
{
	static bool said;
	struct pwrap_base bases[PWRAP_MAX_BASES];
	const char *keep = getenv("PAM_WRAPPER_KEEP_DIR");
	const char *prefix;
	char *resolved = NULL;
	char why[2048] = "";
	char untrusted[1024] = "";
	char tmpnote[512];
	size_t n, i;
	int rc = -1;

	rd.keep = keep != NULL && keep[0] == '1';
	prefix = rd.keep ? PWRAP_KEPT_PREFIX : PWRAP_PREFIX;
	n = pwrap_bases(bases, &resolved, PWRAP_BASES_TOKEN, tmpnote,
			sizeof(tmpnote));
	if (tmpnote[0] != '\0') {
		PWRAP_LOG(PWRAP_LOG_DEBUG, "%s", tmpnote);
	}
	for (i = 0; i < n; i++) {
		const struct pwrap_base *b = &bases[i];
		char bad[256];
		struct stat bst;
		uid_t mine = (uid_t)-1;
		bool trusted;

		if ((rd.full_bases & b->bit) != 0) {
			note(why, sizeof(why), "%s%s: %s", b->label, b->path,
			     strerror(ENOSPC));
			continue;
		}
		if (stat(b->path, &bst) != 0) {
			note(why, sizeof(why), "%s%s: %s", b->label, b->path,
			     strerror(errno));
			continue;
		}
		if (!S_ISDIR(bst.st_mode)) {
			note(why, sizeof(why), "%s%s: not a directory",
			     b->label, b->path);
			continue;
		}
		trusted = !pwrap_base_distrust(&bst, mine, bad, sizeof(bad));
		if (trusted && make_in(b->path, &bst, prefix, &mine) == 0) {
			break;
		}
		if (trusted && mine == (uid_t)-1) {
			/* trusted, but it would not take the directory */
			note(why, sizeof(why), "%s%s: %s", b->label, b->path,
			     strerror(errno));
			continue;
		}
		if (trusted) {
			/* not root's, and what we made there is not its
			 * owner's */
			(void)pwrap_base_distrust(&bst, mine, bad, sizeof(bad));
		}
		note(untrusted, sizeof(untrusted), "%s%s (%s)", b->label,
		     b->path, bad);
		note(why, sizeof(why), "%s%s: %s", b->label, b->path, bad);
	}
	if (i < n) {
		const struct pwrap_base *b = &bases[i];

		rd.base = b->bit;
		setenv("PAM_WRAPPER_RUNTIME_DIR", rd.svc, 1);
		PWRAP_LOG(PWRAP_LOG_DEBUG, "runtime directory %s%s", rd.svc,
			  rd.keep ? " (kept: PAM_WRAPPER_KEEP_DIR=1)" : "");
		if (untrusted[0] != '\0' && !said) {
			said = true;
			PWRAP_LOG(PWRAP_LOG_NOTICE, "not using %s: only "
				  PWRAP_BASE_RULE "; runtime directory in %s",
				  untrusted, b->path);
		}
		if (!rd.swept) {
			rd.swept = true;
			pwrap_sweep(b->path, strrchr(rd.cur.top, '/') + 1,
				    rd.fsuid);
		}
		rc = 0;
	} else {
		PWRAP_LOG(PWRAP_LOG_ERROR, "cannot create a runtime directory "
			  "(%s.%ld.XXXXXX): %s", prefix, (long)getpid(), why);
		if (rd.cur.top == NULL) {
			/* never point tests at a directory that is gone */
			unsetenv("PAM_WRAPPER_RUNTIME_DIR");
		}
	}
	free(resolved);
	return rc;
}

/*
 * The program closed our lock descriptor or put another file on its number
 * (closefrom() in a daemon): take the lock again if top still holds the
 * same lock file.  We never close a descriptor that is not ours.
 */
static bool relock(void)
{
	struct stat st;
	int fd;

	rd.cur.lockfd = -1;
	fd = lock_take(rd.cur.top, false, &st);
	if (fd < 0) {
		return false;
	}
	if (st.st_dev != rd.cur.ldev || st.st_ino != rd.cur.lino) {
		close(fd);
		return false;
	}
	rd.cur.lockfd = fd;
	return true;
}

bool pwrap_rundir_trusted(void)
{
	struct pwrap_ids ids;

	if (rd.cur.top == NULL || pwrap_owner_trusted(rd.fsuid, &ids)) {
		return true;
	}
	PWRAP_LOG(PWRAP_LOG_ERROR, "not reading %s: it is uid %lu's, and this "
		  "process (uids %lu, %lu, %lu: real, effective, saved) can "
		  "become another uid, which a module loaded from a directory "
		  "of uid %lu could take", rd.conf, (unsigned long)rd.fsuid,
		  (unsigned long)ids.r, (unsigned long)ids.e,
		  (unsigned long)ids.s, (unsigned long)rd.fsuid);
	return false;
}

void pwrap_rundir_searchable(bool on)
{
	bool own = rd.owner == getpid();

	if (rd.cur.top == NULL || (own && rd.searchable == on)) {
		return;
	}
	/* search only: names in top are not listed (nor is there anything
	 * but .lock, services/ and conf/) */
	if (chmod(rd.cur.top, on ? 0711 : 0700) != 0) {
		PWRAP_LOG(PWRAP_LOG_DEBUG, "chmod %s: %s", rd.cur.top,
			  strerror(errno));
		return;
	}
	if (own) {
		rd.searchable = on;
	}
}

bool pwrap_rundir_searchable_now(void)
{
	return rd.cur.top != NULL && rd.owner == getpid() && rd.searchable;
}

bool pwrap_rundir_intact(void)
{
	struct stat st;

	if (rd.conf == NULL || stat(rd.conf, &st) != 0) {
		return false;
	}
	if (!S_ISDIR(st.st_mode) || st.st_dev != rd.cdev ||
	    st.st_ino != rd.cino || st.st_uid != rd.fsuid) {
		errno = EEXIST;		/* there, but not ours */
		return false;
	}
	return true;
}

int pwrap_rundir_ensure(void)
{
	bool mine = rd.cur.top != NULL && rd.owner == getpid();

	if (mine && rd.full) {
		PWRAP_LOG(PWRAP_LOG_DEBUG, "%s: no space left; trying the "
			  "next location", rd.cur.top);
		retire(true);
	} else if (mine && (held_live(&rd.cur) || relock())) {
		if (pwrap_rundir_intact()) {
			return pwrap_rundir_trusted() ? 0 : -1;
		}
		if (errno == EEXIST) {
			PWRAP_LOG(PWRAP_LOG_NOTICE, "%s is not the directory "
				  "made there any more (renamed or replaced); "
				  "not using it, making a new runtime "
				  "directory", rd.conf);
		} else {
			PWRAP_LOG(PWRAP_LOG_DEBUG, "runtime directory %s: %s; "
				  "making a new one", rd.cur.top,
				  strerror(errno));
		}
		retire(false);
	} else if (mine) {
		/* the program closed our lock descriptor and the directory
		 * went meanwhile (another wrapped process of the user swept
		 * it as unused): what the test wrote there went with it */
		PWRAP_LOG(PWRAP_LOG_NOTICE, "runtime directory %s is gone "
			  "(removed while this process held no lock on it: "
			  "it closed the wrapper's descriptor); files a test "
			  "wrote into it are lost; making a new one",
			  rd.cur.top);
		retire(false);
	}
	/* A forked child makes its own (and keeps holding the parent's
	 * until it exits). */
	return make_new() == 0 ? 1 : -1;
}

/*
 * A process that runs as another euid for a while (its directory's owner
 * still its real or saved uid; the directory is searchable then) cannot
 * remove the directory: for that, at its end or at a switch for good from
 * there, the calling thread alone becomes the owner again, and then what
 * it was (other threads, and exit handlers that run later, see no
 * change).  Returns the euid to go back to ((uid_t)-1: none).
 */
static uid_t owner_for_removal(void)
{
	struct pwrap_ids ids;

	if (rd.cur.top == NULL || rd.owner != getpid() || !rd.searchable) {
		return (uid_t)-1;
	}
	pwrap_ids_real(&ids);
	if (ids.e == rd.fsuid || (ids.r != rd.fsuid && ids.s != rd.fsuid) ||
	    !pwrap_thread_euid(rd.fsuid)) {
		return (uid_t)-1;
	}
	return ids.e;
}

static void owner_no_more(uid_t was)
{
	if (was != (uid_t)-1) {
		(void)pwrap_thread_euid(was);
	}
}

bool pwrap_rundir_drop(void)
{
	uid_t was;

	if (rd.cur.top != NULL && rd.owner == getpid()) {
		PWRAP_LOG(PWRAP_LOG_DEBUG, "removing runtime directory %s "
			  "before the switch of uid", rd.cur.top);
		was = owner_for_removal();
		/* the one inherited before it too: after daemon(3) nobody
		 * else would */
		held_drop(&rd.prev, !rd.keep);
		retire(true);
		owner_no_more(was);
		return true;
	}
	/* Inherited: removed only when the parent holds it no more (after
	 * daemon(3)).  Nothing of rd changes unless it went: a child of
	 * vfork(2) shares its parent's memory (and cannot remove what its
	 * parent holds). */
	if (rd.cur.top == NULL || rd.keep || !held_reap(&rd.cur)) {
		return false;
	}
	PWRAP_LOG(PWRAP_LOG_DEBUG, "removed the inherited runtime directory "
		  "%s before the switch of uid", rd.cur.top);
	forget_cur();
	return true;
}

void pwrap_rundir_parent_leaves(void)
{
	if (rd.cur.top != NULL || rd.prev.top != NULL) {
		PWRAP_LOG(PWRAP_LOG_DEBUG, "daemon(3): %s%s%s left to the child",
			  rd.cur.top != NULL ? rd.cur.top : "",
			  rd.cur.top != NULL && rd.prev.top != NULL ? " and " : "",
			  rd.prev.top != NULL ? rd.prev.top : "");
	}
	/* As at any end: let go, then remove what nobody holds.  The child
	 * does the same at its exit, so whichever of the two lets go last
	 * removes them (the child may have ended already on a busy
	 * machine).  (A child of vfork(2) is no daemon's parent.) */
	held_drop(&rd.prev, !rd.keep);
	held_drop(&rd.cur, !rd.keep);
	forget_cur();
}

uid_t pwrap_rundir_owner(void)
{
	return rd.cur.top != NULL || rd.prev.top != NULL ? rd.fsuid
							 : (uid_t)-1;
}

int pwrap_rundir_conf_fd(void)
{
	int fd;

	if (rd.conf == NULL) {
		errno = ENOENT;
		return -1;
	}
	if (pwrap_fd_is(rd.conffd, rd.cdev, rd.cino)) {
		return rd.conffd;
	}
	/* (a descriptor the program closed or reused is not ours to close) */
	rd.conffd = -1;
	fd = fd_high(open(rd.conf, O_RDONLY | O_DIRECTORY | O_CLOEXEC |
			  O_NOCTTY));
	if (fd >= 0 && !pwrap_fd_is(fd, rd.cdev, rd.cino)) {
		close(fd);
		errno = EEXIST;
		return -1;
	}
	rd.conffd = fd;
	return fd;
}

/*
 * At a normal exit: let go of the locks, then remove the directories
 * (ours, and the one inherited before it) unless another process (a
 * forked child, a parent) still holds them.
 */
__attribute__((destructor)) static void rundir_destructor(void)
{
	uid_t was;

	if (rd.keep) {
		return;
	}
	was = owner_for_removal();
	held_drop(&rd.cur, true);
	held_drop(&rd.prev, true);
	owner_no_more(was);
}
