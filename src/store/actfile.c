/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the actions file's format (see store/actfile.h).
 *
 * The file is read whole, once; the sections are found at the marker
 * lines, which are recognised wherever a line starts with "-- on:" (in
 * a comment or not: the format is line-based, before it is SQL).
 */
#include "config.h"

#include <sys/stat.h>

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "store/actfile.h"

#define MARKER			"-- on:"

/*
 * Read the whole file into a new NUL-terminated buffer of *len bytes:
 * sized by fstat(2) (a CGI request reads it every time, and a 1 MiB
 * buffer is an mmap, an mremap and a munmap more), doubled if the file
 * grows meanwhile or has no size (a pipe), never past ACTIONS_FILE_MAX
 * + 1 bytes: then refused.  A lazy process keeps the buffer for its
 * life: the file's size, or up to twice what it read if it grew.
 */
static char *
slurp(const char *path, size_t *len, char *err, size_t errsz)
{
	struct stat	 st;
	char		*buf = NULL, *p;
	const char	*why = NULL;
	size_t		 cap, sz = 0;
	ssize_t		 r;
	int		 fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1 ||
	    fstat(fd, &st) == -1)
		goto fail;
	if (S_ISREG(st.st_mode) && st.st_size > ACTIONS_FILE_MAX) {
		why = "larger than 1 MiB";
		goto fail;
	}
	cap = st.st_size > 0 ? (size_t)st.st_size + 1 : 4096;
	if ((buf = malloc(cap + 1)) == NULL)
		goto fail;
	while ((r = read(fd, buf + sz, cap - sz)) != 0) {
		if (r == -1) {
			if (errno == EINTR)
				continue;
			goto fail;
		}
		if ((sz += (size_t)r) > ACTIONS_FILE_MAX) {
			why = "larger than 1 MiB";
			goto fail;
		}
		if (sz == cap) {
			cap = cap * 2 > ACTIONS_FILE_MAX + 1 ?
			    ACTIONS_FILE_MAX + 1 : cap * 2;
			if ((p = realloc(buf, cap + 1)) == NULL)
				goto fail;
			buf = p;
		}
	}
	close(fd);
	buf[sz] = '\0';
	*len = sz;
	return buf;
fail:
	if (why == NULL)
		why = errno == ENOMEM ? "out of memory" : strerror(errno);
	snprintf(err, errsz, "%s: %s", path, why);
	if (fd != -1)
		close(fd);
	free(buf);
	return NULL;
}

/* Line number of p within text. */
static int
lineof(const char *text, const char *p)
{
	int	 n = 1;

	for (; text < p; text++)
		n += *text == '\n';
	return n;
}

/* The offsets of af's newlines into af->nl: 0, or -1 (out of memory). */
static int
index_lines(struct actfile *af)
{
	const char	*p = af->text, *end = af->text + af->len;
	size_t		 cap = 0, *v;

	while ((p = memchr(p, '\n', (size_t)(end - p))) != NULL) {
		if (af->nnl == cap) {
			cap = cap == 0 ? 128 : cap * 2;
			if ((v = reallocarray(af->nl, cap, sizeof(*v))) == NULL)
				return -1;
			af->nl = v;
		}
		af->nl[af->nnl++] = (size_t)(p - af->text);
		p++;
	}
	return 0;
}

/* The start of the next marker line at or after p (a line's start), or
 * NULL. */
static const char *
next_marker(const char *p)
{
	for (;;) {
		if (strncmp(p, MARKER, sizeof(MARKER) - 1) == 0)
			return p;
		if ((p = strchr(p, '\n')) == NULL)
			return NULL;
		p++;
	}
}

static void
types_free(char **v)
{
	size_t	 i;

	for (i = 0; v != NULL && v[i] != NULL; i++)
		free(v[i]);
	free(v);
}

/* 1 if c separates the types of a marker line. */
static int
sep(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == ',';
}

/*
 * Split the marker line's types (the len bytes at p, after "-- on:")
 * into *types (set even on error, for the caller to free): separated by
 * white space or commas, each written bare or in double quotes, which
 * may hold spaces and commas ("Push Hook").  Returns 0, or -1 with *why
 * static text (NULL if out of memory).
 */
static int
parse_types(char ***types, const char *p, size_t len, const char **why)
{
	const char	*end = p + len, *q;
	size_t		 n = 0;
	char		**v;

	*why = NULL;
	if ((v = calloc(len / 2 + 2, sizeof(*v))) == NULL)
		return -1;
	*types = v;
	for (;;) {
		while (p < end && sep(*p))
			p++;
		if (p == end)
			break;
		if (*p == '"') {
			if ((q = memchr(p + 1, '"', (size_t)(end - p - 1))) ==
			    NULL) {
				*why = "unterminated quote";
				return -1;
			}
			if (q == p + 1) {
				*why = "an empty quoted type";
				return -1;
			}
			if (q + 1 < end && !sep(q[1])) {
				*why = "text right after a closing quote";
				return -1;
			}
			if ((v[n++] = strndup(p + 1, (size_t)(q - p - 1))) ==
			    NULL)
				return -1;
			p = q + 1;
			continue;
		}
		for (q = p; q < end && !sep(*q); q++)
			if (*q == '"') {
				*why = "a quote inside a type (quote the whole "
				    "type: \"Push Hook\")";
				return -1;
			}
		if ((v[n++] = strndup(p, (size_t)(q - p))) == NULL)
			return -1;
		p = q;
	}
	if (n == 0) {
		*why = "wants one or more event types, or *";
		return -1;
	}
	return 0;
}

/*
 * Each type in one section only; find the catch-all.  Returns 0, or -1
 * with "path:line: reason" in err.
 */
static int
check_types(struct actfile *af, char *err, size_t errsz)
{
	const struct actfile_section	*v = af->v;
	size_t				 i, j, k, l;

	for (i = 0; i < af->n; i++)
		for (j = 0; v[i].types[j] != NULL; j++) {
			if (strcmp(v[i].types[j], "*") == 0) {
				if (af->catchall != NULL) {
					k = i;
					goto twice;
				}
				af->catchall = &v[i];
			}
			for (k = i; k < af->n; k++)
				for (l = k == i ? j + 1 : 0;
				    v[k].types[l] != NULL; l++)
					if (strcmp(v[i].types[j],
					    v[k].types[l]) == 0)
						goto twice;
			continue;
twice:
			snprintf(err, errsz, "%s:%d: event type \"%s\" has "
			    "more than one section", af->path, v[k].line,
			    v[i].types[j]);
			return -1;
		}
	return 0;
}

/* ACTFILE_ONCE's texts, by path: the process's cache (actfile_keep()). */
struct kept {
	struct kept	*next;
	char		*path;
	char		*text;
	size_t		 len;
};
static struct kept	*kept;
static int		 keep;

void
actfile_keep(int on)
{
	keep = on;
}

void
actfile_forget(const char *path)
{
	struct kept	**kp = &kept, *k;

	while ((k = *kp) != NULL) {
		if (path != NULL && strcmp(k->path, path) != 0) {
			kp = &k->next;
			continue;
		}
		*kp = k->next;
		free(k->path);
		free(k->text);
		free(k);
	}
}

/* The kept text of path: found, else read and kept (the cache owns the
 * buffer); NULL with err if it cannot be read, or kept (no memory). */
static const struct kept *
kept_text(const char *path, char *err, size_t errsz)
{
	struct kept	*k;

	for (k = kept; k != NULL; k = k->next)
		if (strcmp(k->path, path) == 0)
			return k;
	if ((k = calloc(1, sizeof(*k))) == NULL ||
	    (k->path = strdup(path)) == NULL) {
		snprintf(err, errsz, "%s: out of memory", path);
		free(k);
		return NULL;
	}
	if ((k->text = slurp(path, &k->len, err, errsz)) == NULL) {
		free(k->path);
		free(k);
		return NULL;
	}
	k->next = kept;
	return kept = k;
}

const char *
actfile_kept(const char *path, size_t *len)
{
	const struct kept	*k;
	char			 err[256];

	if (!keep || (k = kept_text(path, err, sizeof(err))) == NULL)
		return NULL;
	*len = k->len;
	return k->text;
}

char *
actfile_now(const char *path, size_t *len)
{
	char	 err[256];

	return slurp(path, len, err, sizeof(err));
}

void
actfile_preload(const char *path)
{
	size_t	 len;

	(void)actfile_kept(path, &len);
}

/* The text of path into a new buffer (its owner's), as slurp(); with
 * once, a copy of the kept text (kept_text()). */
static char *
read_text(const char *path, int once, size_t *len, char *err, size_t errsz)
{
	const struct kept	*k;
	char			*text;

	if (!once)
		return slurp(path, len, err, errsz);
	if ((k = kept_text(path, err, errsz)) == NULL)
		return NULL;
	if ((text = malloc(k->len + 1)) == NULL) {
		snprintf(err, errsz, "%s: out of memory", path);
		return NULL;
	}
	memcpy(text, k->text, k->len + 1);
	*len = k->len;
	return text;
}

int
actfile_read(const char *path, int flags, struct actfile *af, char *err,
    size_t errsz)
{
	struct actfile_section	*s;
	const char		*m, *eol, *next, *why;

	memset(af, 0, sizeof(*af));
	if ((af->text = read_text(path, keep && (flags & ACTFILE_ONCE),
	    &af->len, err, errsz)) == NULL)
		return -1;
	/* The text ends at a NUL byte, as SQLite reads it. */
	af->len = strlen(af->text);
	if ((af->path = strdup(path)) == NULL || index_lines(af) == -1)
		goto oom;
	m = next_marker(af->text);
	af->setup_end = m != NULL ? (size_t)(m - af->text) : af->len;
	if (flags & ACTFILE_SETUP)
		return 0;

	for (; m != NULL; m = next) {
		eol = m + strcspn(m, "\n");
		next = *eol != '\0' ? next_marker(eol + 1) : NULL;
		if ((s = reallocarray(af->v, af->n + 1, sizeof(*s))) == NULL)
			goto oom;
		af->v = s;
		s = &af->v[af->n++];
		memset(s, 0, sizeof(*s));
		s->line = actfile_line(af, (size_t)(m - af->text));
		if (parse_types(&s->types, m + sizeof(MARKER) - 1,
		    (size_t)(eol - m) - (sizeof(MARKER) - 1), &why) == -1) {
			if (why == NULL)
				goto oom;
			snprintf(err, errsz, "%s:%d: \"-- on:\" %s", path,
			    s->line, why);
			goto err;
		}
		s->sql = (size_t)(eol - af->text);
		s->end = next != NULL ? (size_t)(next - af->text) : af->len;
	}
	if (check_types(af, err, errsz) == -1)
		goto err;
	return 0;
oom:
	snprintf(err, errsz, "%s: out of memory", path);
err:
	actfile_free(af);
	return -1;
}

const struct actfile_section *
actfile_find(const struct actfile *af, const char *type)
{
	size_t	 i, j;

	if (type != NULL)
		for (i = 0; i < af->n; i++)
			for (j = 0; af->v[i].types[j] != NULL; j++)
				if (strcmp(af->v[i].types[j], type) == 0)
					return &af->v[i];
	return af->catchall;
}

int
actfile_line(const struct actfile *af, size_t off)
{
	size_t	 lo = 0, hi = af->nnl, mid;

	/* The newlines before off, plus one. */
	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (af->nl[mid] < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return (int)lo + 1;
}

void
actfile_free(struct actfile *af)
{
	size_t	 i;

	if (af == NULL)
		return;
	for (i = 0; i < af->n; i++)
		types_free(af->v[i].types);
	free(af->v);
	free(af->nl);
	free(af->path);
	free(af->text);
	memset(af, 0, sizeof(*af));
}

int
actions_types(const char *path, void (*fn)(void *arg, const char *type,
    int line), void *arg, char *err, size_t errsz)
{
	struct actfile	 af;
	size_t		 i, j;

	if (actfile_read(path, 0, &af, err, errsz) == -1)
		return -1;
	for (i = 0; i < af.n; i++)
		for (j = 0; af.v[i].types[j] != NULL; j++)
			if (strcmp(af.v[i].types[j], "*") != 0)
				fn(arg, af.v[i].types[j], af.v[i].line);
	actfile_free(&af);
	return 0;
}

/* The first place needle (lower case) is in s, whatever the case. */
static const char *
find_ci(const char *s, const char *needle)
{
	size_t	 n = strlen(needle);

	for (; *s != '\0'; s++)
		if (strncasecmp(s, needle, n) == 0)
			return s;
	return NULL;
}

int
actions_topics(const char *path, void (*fn)(void *arg, const char *topic,
    int line), void *arg, char *err, size_t errsz)
{
	char		*text, topic[132];
	const char	*p, *q, *kw;
	size_t		 n, len;

	if ((text = slurp(path, &len, err, errsz)) == NULL)
		return -1;
	for (p = text; (p = find_ci(p, "into outbox")) != NULL; p += 11) {
		/* The first value of its SELECT or VALUES, if a literal. */
		q = p + 11;
		kw = find_ci(q, "select");
		if ((q = find_ci(q, "values")) == NULL || (kw != NULL &&
		    kw < q))
			q = kw;
		if (q == NULL || q - p > 200)
			continue;
		q += 6;
		q += strspn(q, " \t\r\n(");
		if (*q != '\'' || (n = strcspn(q + 1, "'\n")) == 0 ||
		    q[1 + n] != '\'' || n >= sizeof(topic))
			continue;
		memcpy(topic, q + 1, n);
		topic[n] = '\0';
		fn(arg, topic, lineof(text, p));
	}
	free(text);
	return 0;
}
