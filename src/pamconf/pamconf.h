/* SPDX-License-Identifier: BSD-3-Clause */
/*
 * The one reader of PAM's configuration: how libpam reads a service file,
 * for the wrapper's rewriter (src/wrapper), the module trace, pamtest
 * explore and pamtest --check.  Nothing else in the tree reads the lines,
 * tokens or include targets of a service file.
 *
 * Three layers, each using only the ones before it:
 *   rules     which libpam this is (Linux-PAM of a version, or OpenPAM),
 *             told from the loaded library at run time (pamconf_rules.c)
 *   a file    its text read into logical lines, tokens and what libpam
 *             makes of each line (pamconf_linux.c, pamconf_openpam.c);
 *             pure: text in, a model out, no I/O; and written back with
 *             chosen tokens replaced (pamconf_rewrite.c)
 *   a service its file, what it includes and "other", read for each
 *             management group into stacks as libpam builds them
 *             (pamconf_service.c), with the one classifier of include
 *             targets and the one module resolver (pamconf_files.c)
 *
 * Ownership: a struct pamconf_file owns its lines and their tokens; a
 * struct pamconf_service owns its files and entries.  Nothing here logs or
 * exits: problems come back as codes and static or owned messages.
 */
#ifndef PAMCONF_H
#define PAMCONF_H

#include <stdbool.h>
#include <stddef.h>

#include "pwrap_control.h"
#include "pwrap_names.h"

/* ---- rules ---------------------------------------------------------------- */

enum pamconf_impl { PAMCONF_LINUX_PAM, PAMCONF_OPENPAM };

/* How a PAM library reads its configuration, where its versions differ. */
struct pamconf_rules {
	enum pamconf_impl impl;
	/* Linux-PAM's version as major * 100 + minor (105: 1.5.x), the
	 * oldest one that reads as these rules say; 0 for OpenPAM */
	unsigned version;
	/* Linux-PAM: the fgets() buffer a logical line is assembled in
	 * (1024 up to 1.5); 0: lines of any length (1.6 on) */
	size_t line_buf;
	/* how deep libpam follows includes before it fails the including
	 * line (0: no limit, it recurses until its stack overflows) */
	unsigned include_max;
	/* Linux-PAM: substacks nest at most this deep (its
	 * PAM_SUBSTACK_MAX_LEVEL); a deeper substack line fails */
	unsigned substack_max;
	/* Debian's Linux-PAM reads "@include NAME" lines */
	bool at_include;
	/* OpenPAM: the version its module names carry (libpam.so.N) */
	unsigned lib_maj;
	/* For messages: "Linux-PAM 1.5", "OpenPAM" */
	const char *label;
};

/* The rules of Linux-PAM `version` (major * 100 + minor; 0: the newest we
 * know), with or without Debian's @include. */
void pamconf_rules_linux(struct pamconf_rules *r, unsigned version,
			 bool at_include);
/* The rules of OpenPAM whose modules carry version lib_maj. */
void pamconf_rules_openpam(struct pamconf_rules *r, unsigned lib_maj);
/*
 * The rules of the libpam loaded in this process: `handle` is its dlopen()
 * handle (OpenPAM is told by its exported functions), `addr` the address
 * of one of its functions (the library's own bytes, as mapped, tell
 * Linux-PAM's version and Debian's @include).  Nothing is loaded or
 * opened; the caller binds the library.
 */
void pamconf_rules_detect(struct pamconf_rules *r, void *handle,
			  const void *addr);
/* The same for the libpam this program is linked with (a tool's); when
 * none is loaded, the one the tree was built against. */
void pamconf_rules_linked(struct pamconf_rules *r);

/* ---- a file --------------------------------------------------------------- */

/* A token (Linux-PAM) or word (OpenPAM). */
struct pamconf_tok {
	size_t s, e;	/* its bytes: Linux-PAM in the line's text, OpenPAM
			 * in the file */
	char *text;	/* what libpam passes on: brackets, quotes and
			 * escapes resolved (owned) */
	bool bracket;	/* Linux-PAM: written as "[...]" */
};

enum pamconf_kind {
	PAMCONF_MODULE,		/* GROUP CONTROL MODULE [ARGS] */
	PAMCONF_INCLUDE,	/* GROUP include TARGET */
	PAMCONF_SUBSTACK,	/* GROUP substack TARGET (Linux-PAM) */
	PAMCONF_AT_INCLUDE,	/* @include TARGET (Debian's Linux-PAM) */
	PAMCONF_FAILING,	/* Linux-PAM: a line libpam keeps as one that
				 * always fails (an unknown group, no
				 * control, no module); `why` says which */
	PAMCONF_STOP,		/* libpam stops reading the file at this line
				 * and fails the read (Linux-PAM: a module or
				 * substack named "" or "?"; OpenPAM: any
				 * error, pam_start then fails); `why` */
	PAMCONF_CRASH,		/* an include without a target: libpam
				 * dereferences NULL; `why` */
};

/* A logical line and what libpam makes of it. */
struct pamconf_line {
	unsigned line;		/* the physical line it starts on */
	char *text;		/* Linux-PAM: as libpam assembled it (owned);
				 * OpenPAM: NULL */
	size_t len;		/* of text */
	size_t start, end;	/* OpenPAM: its bytes in the file */
	struct pamconf_tok *tok;
	size_t ntok;
	enum pamconf_kind kind;
	/* enum pwrap_group of the type word; -1: none (an unknown type,
	 * read as the group the file is read for, or "@include") */
	int group;
	bool silent;		/* "-type": libpam does not log a missing
				 * module */
	/* PAMCONF_MODULE: Linux-PAM's action per return code; OpenPAM's
	 * control flag (enum pamconf_flag) */
	int act[PWRAP_CONTROL_CODES];
	int flag;
	int control;		/* token index of the control, or -1 */
	int target;		/* token index of the module or include
				 * target, or -1 */
	const char *why;	/* FAILING, STOP, CRASH: static text */
};

/* OpenPAM's control flags. */
enum pamconf_flag {
	PAMCONF_REQUIRED,
	PAMCONF_REQUISITE,
	PAMCONF_SUFFICIENT,
	PAMCONF_BINDING,
	PAMCONF_OPTIONAL,
};

enum pamconf_end {
	PAMCONF_END_OK,
	PAMCONF_END_BROKEN,	/* libpam gives up on the file after the
				 * lines read (Linux-PAM: a continued line
				 * overflows its buffer or the file ends in
				 * one; OpenPAM: an unterminated quote) */
	PAMCONF_END_HANG,	/* Linux-PAM <= 1.5: a continued line fills
				 * the buffer but for one byte, on which
				 * libpam's fgets() reads nothing, forever */
};

struct pamconf_file {
	struct pamconf_line *v;
	size_t n;
	enum pamconf_end end;
	unsigned end_line;	/* BROKEN, HANG: the physical line */
};

/* Reads text (len bytes, NULs included) as r's libpam reads a file.  0, or
 * -1 when out of memory (*f is then empty). */
int pamconf_parse(const struct pamconf_rules *r, const char *text, size_t len,
		  struct pamconf_file *f);
void pamconf_file_free(struct pamconf_file *f);

/* The text of line l's argument i (0: the first after the module). */
size_t pamconf_argc(const struct pamconf_line *l);
const char *pamconf_arg(const struct pamconf_line *l, size_t i);

/*
 * Which stacks a line is read for.  A service file and "other" are read
 * for every group (ANY); a file included by a line of group G only for G.
 * A line of an unknown type counts as the group read for, "@include" too.
 */
enum pamconf_stack {
	PAMCONF_STACK_ANY,
	PAMCONF_STACK_AUTH = 1 + PWRAP_GROUP_AUTH,
	PAMCONF_STACK_ACCOUNT = 1 + PWRAP_GROUP_ACCOUNT,
	PAMCONF_STACK_PASSWORD = 1 + PWRAP_GROUP_PASSWORD,
	PAMCONF_STACK_SESSION = 1 + PWRAP_GROUP_SESSION,
	PAMCONF_STACK_BAD,	/* an unknown type */
	PAMCONF_STACK_ASKED,	/* "@include" */
};
#define PAMCONF_STACK_OF(group) ((enum pamconf_stack)(1 + (group)))
/* The stack line l belongs to. */
enum pamconf_stack pamconf_line_stack(const struct pamconf_line *l);
/* Whether libpam, reading a file for `asked`, reads a line of `line`. */
bool pamconf_stack_reads(enum pamconf_stack line, enum pamconf_stack asked);
/* What libpam then reads that line's include target for. */
enum pamconf_stack pamconf_stack_included(enum pamconf_stack line,
					  enum pamconf_stack asked);

/* Whether libpam fails a line whose module or substack is `path`: the
 * name it derives (last component, last ".suffix" off) is empty or "?". */
bool pamconf_name_refused(const char *path);
/* Whether libpam may crash on line l (a PAMCONF_STOP): up to Linux-PAM
 * 1.5 the handler it adds before refusing the name is malloc()ed and
 * left with its `next` unset, which the next handler added to that list
 * (or pam_end's freeing) follows.  libpam_wrapper refuses such a line. */
bool pamconf_stop_crashes(const struct pamconf_rules *r,
			  const struct pamconf_line *l);
#define PAMCONF_STOP_CRASHES "libpam up to 1.5 leaves a half-made " \
	"handler behind, with an unset pointer it may follow and crash"

/* ---- writing a file back --------------------------------------------------- */

/* A module line, for the rewrite's module_line callback. */
struct pamconf_module_line {
	const struct pamconf_line *l;	/* tokens and arguments */
	const char *type;	/* as written: "-auth" keeps its '-' */
	const char *control;	/* "[...]" without the brackets */
	bool bracket;		/* the control was "[...]" */
	const char *module;
	enum pamconf_stack stack;
	const char *src;
	unsigned line;
};

/* An include line that cannot work (reported where libpam reads it). */
enum pamconf_bad_include {
	PAMCONF_INCLUDE_NO_TARGET,	/* libpam crashes on it; target NULL */
	PAMCONF_NAME_CRASHES,		/* a module or substack named "" or
					 * "?" up to Linux-PAM 1.5
					 * (pamconf_stop_crashes()); target
					 * the name */
	PAMCONF_INCLUDE_TOO_LONG,	/* resolved, the target would not fit
					 * libpam's line buffer */
};

/*
 * What the rewrite replaces.  Each callback returns a malloc'd replacement
 * for one token, or NULL to keep it as written; a callback left NULL keeps
 * its tokens.  include_target gets an include/substack/@include target
 * with the stack of its line; module_path a module (quiet: a "-type"
 * line); module_line, when set, is asked first for a module line as a
 * whole (the trace's stand-in; the replacement may be "PATH ARGS...", the
 * line's own arguments follow).  bad_include hears of an include line that
 * cannot work (0: keep it as written, the file goes on; else the file is
 * refused).  A replacement that would make the line too long for libpam's
 * buffer is not made (module tokens, with a warning through `warn`) or
 * refused (include targets, through bad_include).
 */
struct pamconf_ops {
	void *ctx;
	char *(*include_target)(void *ctx, const char *target,
				enum pamconf_stack stack, const char *src,
				unsigned line);
	char *(*module_path)(void *ctx, const char *module, bool quiet,
			     const char *src, unsigned line);
	char *(*module_line)(void *ctx, const struct pamconf_module_line *ml);
	int (*bad_include)(void *ctx, enum pamconf_stack stack,
			   enum pamconf_bad_include why, const char *target,
			   const char *src, unsigned line);
	/* module_line's replacement would not fit libpam's buffer: 0 goes
	 * on as told above (the line is not traced), else the file is
	 * refused (E2BIG); NULL: 0 */
	int (*unfit)(void *ctx, const struct pamconf_module_line *ml);
	/* a message for the user (a replacement not made), or NULL */
	void (*warn)(void *ctx, const char *src, unsigned line,
		     const char *msg);
	/* Linux-PAM: each logical line starts on the physical line it
	 * starts on in the original (empty lines fill in for blank,
	 * comment and continuation lines), so libpam's messages and the
	 * trace name the original's line numbers in the copy too */
	bool keep_lines;
};

/*
 * Copies a file (text, len bytes) so that r's libpam reads the copy as it
 * reads the original but for the tokens the callbacks replace.
 *
 * Linux-PAM: each logical line is written as libpam assembled it, on one
 * physical line; a file libpam gives up on ends the copy in a continued
 * line (a trailing backslash), which it gives up on the same way.
 * OpenPAM: the copy is the file byte for byte but for replaced words;
 * include targets (service names) are only told to include_target, whose
 * result is ignored.
 *
 * 0 with *out (malloc'd, NUL-terminated, *out_len bytes), or -1: errno
 * ENOMEM; EINVAL (an include without a target, a file on which libpam
 * would hang) or E2BIG (an include target too long once replaced) when
 * refused, with err->why (static) and err->line saying why and where.
 */
struct pamconf_err {
	const char *why;
	unsigned line;
};
int pamconf_rewrite(const struct pamconf_rules *r, const char *text,
		    size_t len, const char *src, const struct pamconf_ops *ops,
		    char **out, size_t *out_len, struct pamconf_err *err);

/*
 * word as one argument of a service file line, quoted when it holds
 * blanks (Linux-PAM: [word] with ']' as "\]"; OpenPAM: shell-like quotes).
 * Malloc'd; NULL with errno EINVAL when no quoting carries it (a newline,
 * or a '#', which starts a comment), ENOMEM.
 */
char *pamconf_word(const struct pamconf_rules *r, const char *word);

/* ---- files on disk --------------------------------------------------------- */

/*
 * What libpam finds when it opens an include target: a file to read; one it
 * reads as empty (a directory, where fgets fails at once, or /dev/null);
 * none (missing, unreadable, a socket: the including line fails); or one
 * on which it would block or read without end (a FIFO, a terminal, another
 * device), which no reader here opens.  Never blocks.
 */
enum pamconf_target {
	PAMCONF_TARGET_FILE,
	PAMCONF_TARGET_EMPTY,
	PAMCONF_TARGET_NONE,
	PAMCONF_TARGET_BLOCKS,
};
/* The kind of the file at path (dirfd: AT_FDCWD or a directory for a
 * relative path); *why: the errno of TARGET_NONE. */
enum pamconf_target pamconf_target_kind(const struct pamconf_rules *r,
					int dirfd, const char *path, int *why);

/* Reads a whole regular file (at most `max` bytes; larger: EFBIG) without
 * blocking on anything else (a FIFO: EINVAL).  *text is malloc'd and
 * NUL-terminated (caller frees).  0, or -1 with errno. */
int pamconf_read_file(int dirfd, const char *path, size_t max, char **text,
		      size_t *len);

/*
 * The file names libpam tries for a module named without a '/' (Linux-PAM:
 * the name; OpenPAM: "NAME[.so].MAJ" then "NAME[.so]", a name ending in a
 * version number as it is).  Returns how many (1 or 2) of names[] it
 * filled, 0 when the name is too long.
 */
#define PAMCONF_NAME_MAX 255
size_t pamconf_module_names(const struct pamconf_rules *r, const char *module,
			    char names[2][PAMCONF_NAME_MAX + 1]);
/* Whether r's libpam takes `module` as one word of a module name
 * (Linux-PAM: no blank, no '#'; OpenPAM: letters, digits, '.', '_', '-'
 * and '/' only). */
bool pamconf_module_plain(const struct pamconf_rules *r, const char *module);

/*
 * Where a module named in a line is found, in the order libpam and the
 * wrapper look: a path as written; a bare name in each of dirs[] (NULL
 * ends it: the loaded libpam's module directories, then ours).  Returns
 * the index in dirs of the directory it is in (with its path in out, of
 * out_len bytes), PAMCONF_FOUND_PATH for a path that exists, or -1 (*why:
 * the errno of the last try).
 */
#define PAMCONF_FOUND_PATH 1000
int pamconf_module_find(const struct pamconf_rules *r, const char *module,
			const char *const *dirs, char *out, size_t out_len,
			int *why);

/* ---- a service ------------------------------------------------------------- */

/*
 * How deep includes may nest before libpam_wrapper refuses them: Linux-PAM
 * up to 1.5 has no limit of its own and recurses with a 1 KiB buffer per
 * level; deeper than this it needs more than the default 8 MiB of stack.
 */
#define PAMCONF_INCLUDE_DEEPEST 8192

/*
 * How many entries the stacks of a service may hold in all before the
 * walk gives up (s->error): libpam's pam_start takes time quadratic in
 * them (it appends each handler at the end of a list), so a stack that
 * long, or one its includes repeat into that many, is never a working
 * one, and every entry costs the walk's callers memory.
 */
#define PAMCONF_ENTRIES_MAX 262144

/* What libpam does with one entry of a stack. */
enum pamconf_does {
	PAMCONF_CALLS,		/* calls the line's module (or, when it cannot
				 * load it or it lacks the function, gives
				 * the code libpam gives such a line) */
	PAMCONF_FAILS,		/* keeps a line that fails without a call */
	PAMCONF_MARK,		/* Linux-PAM: a substack starts here */
};

/* One entry of a stack, in the order libpam evaluates them. */
struct pamconf_entry {
	enum pamconf_does does;
	int file;		/* index in pamconf_service.files */
	const struct pamconf_line *l;	/* the line (its file's) */
	unsigned seq;		/* the order the walk met the entries in */
	unsigned level;		/* Linux-PAM: substacks entered */
	int act[PWRAP_CONTROL_CODES];	/* Linux-PAM: the action per code */
	int flag;		/* OpenPAM: enum pamconf_flag */
	const char *module;	/* CALLS: as written (the line's) */
	char *path;		/* CALLS: the file it resolves to (owned),
				 * NULL when there is none */
	const char *why;	/* FAILS: static text */
	bool faulty;		/* FAILS: a handler without a function
				 * (PAM_MODULE_UNKNOWN), not a line that must
				 * fail (PAM_PERM_DENIED) */
};

struct pamconf_entries {
	struct pamconf_entry *v;
	size_t n, cap;
};

/*
 * A line libpam never reads for a group, although the service names it:
 * it is in a file an include or substack beyond the version's nesting
 * limit would have read (and what that file includes), or after a line on
 * which libpam stops reading its file.  `at` is the line where libpam
 * stopped, `why` (static) says why.
 */
struct pamconf_unread {
	int file;
	const struct pamconf_line *l;
	int group;		/* enum pwrap_group */
	bool other;		/* read for "other" */
	int at_file;
	unsigned at_line;
	const char *why;
};

/* A file the service reads (once each, however often it is included). */
struct pamconf_sfile {
	char *path;		/* as libpam opens it */
	char *show;		/* relative to the service directory when
				 * below it */
	struct pamconf_file f;	/* its lines (none: read as empty) */
	bool loaded;
};

struct pamconf_service {
	struct pamconf_sfile *files;
	size_t nfiles;
	/* the stacks of the service and of "other", per enum pwrap_group */
	struct pamconf_entries conf[PWRAP_GROUPS], other[PWRAP_GROUPS];
	int service_file, other_file;	/* indexes, or -1: missing */
	/* the service name as libpam reads it (Linux-PAM: what follows the
	 * last '/', in lower case) */
	char *name;
	struct pamconf_unread *unread;	/* in the order met */
	size_t nunread, capunread;
	char *refused;		/* pam_start fails: "FILE[:LINE]: why" */
	int refused_file;	/* the file it names, or -1 */
	char *error;		/* what cannot be told (or no memory) */
};

/* Where the walk reads files and finds modules. */
struct pamconf_walk_ops {
	void *ctx;
	/* where bare module names are looked for (pamconf_module_find) */
	const char *const *moddirs;
	/* instead of the disk (both NULL: pamconf_target_kind(),
	 * pamconf_read_file()): what is at path, and its text */
	enum pamconf_target (*kind)(void *ctx, const char *path, int *why);
	int (*read)(void *ctx, const char *path, char **text, size_t *len);
};

/*
 * Reads service from dir as r's libpam reads it under libpam_wrapper, into
 * stacks: the service file and "other" (a missing service: only "other"),
 * what they include and substack, each file for the groups libpam reads it
 * for, within the version's limits (what they leave unread in s->unread).
 * Linux-PAM takes the service name as its pam_start() does: what follows
 * the last '/', in lower case (s->name).  The service file and "other" count
 * only as regular files, as libpam_wrapper provides them (one it cannot
 * read makes pam_start fail); what libpam_wrapper refuses (an include
 * cycle up to Linux-PAM 1.5, a target that would block, a line on which
 * libpam crashes or loops) ends in s->refused, as what makes libpam's
 * pam_start fail.  Never blocks.  0, or -1 with s->error.
 */
int pamconf_service_read(const struct pamconf_rules *r, const char *dir,
			 const char *service, const struct pamconf_walk_ops *ops,
			 struct pamconf_service *s);
void pamconf_service_free(struct pamconf_service *s);

#endif
