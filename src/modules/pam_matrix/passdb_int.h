/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * What passdb_line.c (the line rules) and passdb.c (the streaming reader)
 * lend to each other and to passdb_write.c (the password change): the
 * rules, the reader's window on a file and the search and report over it.
 * Internal to pam_matrix.
 */
#ifndef PM_PASSDB_INT_H
#define PM_PASSDB_INT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>

#include <security/pam_modules.h>

#define PM_STR2(x) #x
#define PM_STR(x) PM_STR2(x)

/* O_NONBLOCK: opening a FIFO must not wait for a writer (it is refused
 * right after, like anything that is not a regular file). */
#define PM_OPEN_FLAGS (O_RDONLY | O_NONBLOCK | O_CLOEXEC | O_NOCTTY)

/*
 * A window on the file: buf[0, len) are the bytes at stream offsets
 * [base, base + len), stream offset 0 being a '\n' put before the file's
 * first byte (so the first line starts after a '\n' like every other one)
 * and stream offset N + 1 the file's byte N.  With fd < 0 the whole file
 * is in buf (base 0, eof set) and nothing is read.  The buffer is the
 * caller's; it holds passwords and is wiped before it is freed.
 */
struct pm_src {
	const char *path; /* for messages */
	int fd;
	char *buf;
	size_t cap;
	size_t len;
	size_t dirty;   /* buf[0, dirty) was ever written: what is wiped (a
			 * small file leaves most of the buffer untouched,
			 * and its pages never mapped in) */
	uint64_t base;
	uint64_t nread; /* file bytes read, bounded by PM_PASSDB_MAX */
	uint64_t size;  /* st_size when opened (0: unknown) */
	bool eof;
};

/* USER's line found by pm_search: buf[at, at + len) until the next read. */
struct pm_hit {
	size_t at;
	size_t len;
	uint64_t off; /* stream offset of the line's start */
};

/* Errors: logged naming the file, returned as PAM codes. */
const char *pm_strerror(int errnum, char *buf, size_t len);
int pm_io_error(pam_handle_t *pamh, const char *path, const char *what,
		int errnum);
/* Opens a passdb: a regular file within PM_PASSDB_MAX (*FD, *ST), or what
 * reads as an empty one, a directory or /dev/null (*FD -1), or an error. */
int pm_open(pam_handle_t *pamh, const char *path, int *fd, struct stat *st);

/* Why a line is skipped; PM_VALID (read) and PM_COMMENT are not
 * logged.  Upstream's pam_matrix crashes on every line skipped here but
 * comments, or (longer lines) cuts it into pieces. */
enum pm_why {
	PM_VALID,
	PM_COMMENT,
	PM_LONG,
	PM_BLANK,
	PM_NUL,
	PM_FEW,
	PM_NWHY
};

/* What a line that is read says (pm_split). */
enum pm_note {
	PM_NOTE_NONE,
	PM_NOTE_FLAG, /* a fourth field that is no list of known flags */
	PM_NOTE_CR,   /* the line ends with CR */
};

/* The rules for the line P[0, LEN) without its '\n' (passdb_line.c). */
enum pm_why pm_classify(const char *p, size_t len);
/* Logs a skipped line (WHY) or the note of one that is read (WHY
 * PM_VALID), numbered LINENO: as an error when it is a line of the user
 * looked up (USERS), else as a warning. */
void pm_log_line(pam_handle_t *pamh, const char *path, unsigned long lineno,
		 enum pm_why why, enum pm_note note, bool users);

/* The fields of a line that is read: pointers into the line. */
struct pm_fields {
	const char *pass; /* after the blanks that follow the first ':' */
	size_t pass_len;
	const char *service; /* after the blanks that follow the second ':' */
	size_t service_len;
	const char *flags; /* NULL: none */
	size_t flags_len;
	unsigned flagbits; /* PM_F_* */
	enum pm_note note;
};

/* Splits the line P[0, LEN), which is read (at least two ':', see
 * pam_matrix(8)) and whose user name is ULEN bytes. */
void pm_split(const char *p, size_t len, size_t ulen, struct pm_fields *f);
/* Whether F[0, LEN) is a list of known flags; *FLAGS gets them. */
bool pm_parse_flags(const char *f, size_t len, unsigned *flags);

/* Whether a line could be USER's at all (passdb_line.c). */
bool pm_user_searchable(const char *user, size_t ulen);

/* The reader (comments at their definitions in passdb.c). */
int pm_src_fill(pam_handle_t *pamh, struct pm_src *s, size_t from);
int pm_src_begin(pam_handle_t *pamh, struct pm_src *s);
int pm_search(pam_handle_t *pamh, struct pm_src *s, const char *user,
	      size_t ulen, size_t from, struct pm_hit *h, bool *found,
	      bool *bad);
int pm_report(pam_handle_t *pamh, struct pm_src *s, const char *user,
	      size_t ulen, uint64_t limit);
/* Logs the note of USER's line H (none: nothing), numbering it. */
int pm_report_hit(pam_handle_t *pamh, struct pm_src *s, const char *user,
		  size_t ulen, const struct pm_hit *h, bool bad);
void pm_src_free(struct pm_src *s);

#endif
