/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the counters (see observe/counters.h).
 *
 * Every field a request writes is a naturally aligned 64-bit word
 * updated with an atomic operation (relaxed: the counts are statistics,
 * not synchronisation).  The two multi-word records have their own
 * small protocols: a minute's or an hour's mark is taken by the one
 * process whose compare-and-swap set its tick (flagged CTR_BUSY while
 * the totals are copied), and a failure record is written inside a
 * sequence count (odd while written; a writer that finds it odd skips,
 * a reader retries).
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sched.h>
#include <setjmp.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "front/resp.h"
#include "lib/log.h"
#include "observe/counters.h"

#define CTR_MAGIC	"oncehook-ctr"
#define CTR_VERSION	1
#define CTR_RECHECK	60	/* seconds between looks at the path */
#define CTR_CACHE	CTR_SLOTS	/* names remembered per process */

const uint64_t	ctr_lat_us[CTR_LAT] = {
	500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000,
	1000000, 2500000, 5000000, 10000000, UINT64_MAX
};

/*
 * The file is not mapped whole: its header and failure ring, and each
 * slot this process counts in, each in a mapping of its own pages.  The
 * kernel maps a whole page-cache folio, or a read-ahead window, around
 * a first read, within the mapping: a whole-file mapping would put most
 * of the file in every process's RSS for the few pages it uses
 * (docs/design/009-counters-file.md).
 */
#define CTR_HEAD	offsetof(struct ctr_file, slots)

struct counters {
	struct ctr_file	*f;		/* CTR_HEAD bytes of it; NULL:
					   counting nothing */
	int		 fd;		/* the file f maps, for its slots */
	struct ctr_slot_data *slot[CTR_SLOTS];	/* mapped on first use */
	char		 path[PATH_MAX];
	dev_t		 dev;
	ino_t		 ino;
	int64_t		 checked;	/* when the path was last looked at */
	int		 due;		/* look at the path on the next count */
	struct {
		char	 name[CTR_NAME];
		int	 slot;
	}		 cache[CTR_CACHE];
	size_t		 ncache;
	int		 full;		/* said once: no slot left */
};

/*
 * A file truncated under the mapping faults on the next access: the
 * fault handler (front/front.c) asks counters_on_bus() first, which jumps
 * back out of the count in flight.  One process counts one request at
 * a time, so one jump buffer per process.
 */
static sigjmp_buf		 bus_jmp;
static volatile sig_atomic_t	 bus_armed;

void
counters_on_bus(void)
{
	if (bus_armed) {
		bus_armed = 0;
		siglongjmp(bus_jmp, 1);
	}
}

#define LOAD(p)		__atomic_load_n((p), __ATOMIC_RELAXED)
#define STORE(p, v)	__atomic_store_n((p), (v), __ATOMIC_RELAXED)
#define ADD(p, v)	((void)__atomic_fetch_add((p), (v), __ATOMIC_RELAXED))
#define CAS(p, e, v)	__atomic_compare_exchange_n((p), (e), (v), 0, \
			    __ATOMIC_ACQUIRE, __ATOMIC_RELAXED)

int
counters_path(const char *db, char *buf, size_t bufsz)
{
	int	 n = snprintf(buf, bufsz, "%s" CTR_SUFFIX, db);

	return n < 0 || (size_t)n >= bufsz ? -1 : 0;
}

/* FNV-1a over the outcome names: a release that changes them starts
 * the counts again rather than misreading them. */
static uint32_t
outcome_sum(void)
{
	static uint32_t	 sum;		/* per process: the table is fixed */
	uint32_t	 h = 2166136261u;
	const char	*s;
	int		 i;

	if (sum != 0)
		return sum;
	for (i = 0; i < HOOK__MAX; i++)
		for (s = resp_outcome((enum hook_err)i); ; s++) {
			h = (h ^ (unsigned char)*s) * 16777619u;
			if (*s == '\0')
				break;
		}
	return sum = h;
}

static int
header_ok(const struct ctr_file *f)
{
	return memcmp(f->magic, CTR_MAGIC, sizeof(CTR_MAGIC)) == 0 &&
	    f->version == CTR_VERSION && f->size == sizeof(*f) &&
	    f->outsum == outcome_sum();
}

int
counters_cat(enum hook_err er)
{
	int	 st;

	if (!resp_counted(er))
		return -1;
	if (er == HOOK_OK || er == HOOK_ACCEPTED)
		return CAT_PROCESSED;	/* accepted: its effect to follow */
	if (er == HOOK_DUP)
		return CAT_DUPLICATE;
	if (er == HOOK_ECONFLICT)
		return CAT_CONFLICT;
	if (er == HOOK_PARKED)
		return CAT_FAILED;	/* answered 200, yet no effect */
	st = resp_status(er);
	if (st >= 500)
		return CAT_FAILED;
	if (st >= 400)
		return CAT_REFUSED;
	return -1;
}

/*
 * A new, empty counters file published at c->path: written whole under
 * a temporary name, then linked (missing: another process may have won,
 * and its file is as good) or renamed over a bad one.
 */
static int
rebuild(const char *path, int replace, char *err, size_t errsz)
{
	struct ctr_file	*h;
	char		 tmp[PATH_MAX];
	int		 fd, rc = -1;

	if ((size_t)snprintf(tmp, sizeof(tmp), "%s.XXXXXX", path) >=
	    sizeof(tmp)) {
		snprintf(err, errsz, "path too long");
		return -1;
	}
	if ((h = calloc(1, sizeof(*h))) == NULL) {
		snprintf(err, errsz, "out of memory");
		return -1;
	}
	memcpy(h->magic, CTR_MAGIC, sizeof(CTR_MAGIC));
	h->version = CTR_VERSION;
	h->size = sizeof(*h);
	h->outsum = outcome_sum();
	h->created = (int64_t)time(NULL);
	h->slots[0].state = 2;		/* requests naming no endpoint */
	if ((fd = mkstemp(tmp)) == -1) {
		snprintf(err, errsz, "cannot create %s: %s", tmp,
		    strerror(errno));
		free(h);
		return -1;
	}
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	if (fchmod(fd, 0600) == -1 || pwrite(fd, h, sizeof(*h), 0) !=
	    (ssize_t)sizeof(*h))
		snprintf(err, errsz, "cannot write %s: %s", tmp,
		    strerror(errno));
	else if (replace && rename(tmp, path) == -1)
		snprintf(err, errsz, "cannot rename %s: %s", tmp,
		    strerror(errno));
	else if (!replace && link(tmp, path) == -1 && errno != EEXIST)
		snprintf(err, errsz, "cannot create %s: %s", path,
		    strerror(errno));
	else
		rc = 0;
	if (rc == -1 || !replace)
		(void)unlink(tmp);
	close(fd);
	free(h);
	return rc;
}

/* Bytes [off, off + len) of fd mapped (their pages); NULL if not. */
static void *
map_bytes(int fd, size_t off, size_t len)
{
	size_t	 skew = off % (size_t)getpagesize();
	char	*m;

	m = mmap(NULL, skew + len, PROT_READ | PROT_WRITE, MAP_SHARED, fd,
	    (off_t)(off - skew));
	return m == MAP_FAILED ? NULL : m + skew;
}

static void
unmap_bytes(void *p, size_t off, size_t len)
{
	size_t	 skew = off % (size_t)getpagesize();

	if (p != NULL)
		(void)munmap((char *)p - skew, skew + len);
}

#define SLOT_OFF(i)	(CTR_HEAD + (size_t)(i) * sizeof(struct ctr_slot_data))

/* Slot i, mapped now if it is not yet; NULL if it cannot be. */
static struct ctr_slot_data *
slot_at(struct counters *c, int i)
{
	if (c->slot[i] == NULL)
		c->slot[i] = map_bytes(c->fd, SLOT_OFF(i),
		    sizeof(struct ctr_slot_data));
	return c->slot[i];
}

static void
slot_drop(struct counters *c, int i)
{
	unmap_bytes(c->slot[i], SLOT_OFF(i), sizeof(struct ctr_slot_data));
	c->slot[i] = NULL;
}

/* Every mapping let go, the file closed: counting nothing. */
static void
unmap_all(struct counters *c)
{
	int	 i;

	for (i = 0; i < CTR_SLOTS; i++)
		slot_drop(c, i);
	unmap_bytes(c->f, 0, CTR_HEAD);
	c->f = NULL;
	if (c->fd != -1)
		close(c->fd);
	c->fd = -1;
}

/* Map the file at c->path, rebuilding it once if it is not one. */
static void
map(struct counters *c, int64_t now)
{
	struct stat	 sb;
	char		 err[PATH_MAX + 64];
	void		*m;
	int		 fd, tries;

	c->f = NULL;
	c->fd = -1;
	c->ncache = 0;
	c->checked = now;
	err[0] = '\0';
	for (tries = 0; tries < 2; tries++) {
		fd = open(c->path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
		if (fd == -1 && errno == ENOENT) {
			if (rebuild(c->path, 0, err, sizeof(err)) == -1)
				break;
			continue;
		}
		if (fd == -1) {
			snprintf(err, sizeof(err), "cannot open %s: %s",
			    c->path, strerror(errno));
			break;
		}
		if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode) ||
		    sb.st_size != (off_t)sizeof(struct ctr_file))
			m = NULL;
		else
			m = map_bytes(fd, 0, CTR_HEAD);
		/* Published before its header is read: a file truncated
		 * meanwhile faults there, and the count's guard unmaps it. */
		c->f = m;
		c->fd = fd;
		if (c->f != NULL && header_ok(c->f)) {
			c->dev = sb.st_dev;
			c->ino = sb.st_ino;
			return;
		}
		unmap_all(c);
		log_warnx("counters: %s is not a counters file of this "
		    "release (truncated, corrupt or older): starting it "
		    "again", c->path);
		if (rebuild(c->path, 1, err, sizeof(err)) == -1)
			break;
	}
	log_warnx("counters: %s; counting nothing (deliveries are "
	    "answered as usual)", err[0] ? err : "cannot map the file");
}

struct counters *
counters_open(const char *path)
{
	struct counters	*c;
	int		 n;

	if ((c = calloc(1, sizeof(*c))) == NULL)
		return NULL;
	c->fd = -1;
	n = snprintf(c->path, sizeof(c->path), "%s", path);
	if (n < 0 || (size_t)n >= sizeof(c->path)) {
		log_warnx("counters: path too long; counting nothing");
		c->path[0] = '\0';
		return c;
	}
	c->due = 1;			/* mapped by the first count */
	return c;
}

void
counters_close(struct counters *c)
{
	if (c == NULL)
		return;
	unmap_all(c);
	free(c);
}

/*
 * Slot i's state and name as read(2) sees them: the name is written
 * before the state says named, so a named state read with it has its
 * name.  -1 if the file is shorter (truncated under us).
 */
static int
slot_peek(const struct counters *c, int i, uint64_t *state,
    char name[CTR_NAME])
{
	char	 head[offsetof(struct ctr_slot_data, name) + CTR_NAME];

	if (pread(c->fd, head, sizeof(head), (off_t)SLOT_OFF(i)) !=
	    (ssize_t)sizeof(head))
		return -1;
	memcpy(state, head + offsetof(struct ctr_slot_data, state),
	    sizeof(*state));
	memcpy(name, head + offsetof(struct ctr_slot_data, name), CTR_NAME);
	return 0;
}

/*
 * A slot named name: found, or the first free one named now; -1 if
 * none is left, -2 if the file cannot be read or mapped.  Slots are
 * looked at with pread(): only the one found (or named) is mapped.
 */
static int
slot_of(struct counters *c, const char *name)
{
	struct ctr_slot_data	*s;
	uint64_t		 st;
	char			 seen[CTR_NAME];
	size_t			 i;
	int			 spins;

	if (name == NULL || *name == '\0')
		return 0;
	for (i = 0; i < c->ncache; i++)
		if (strcmp(c->cache[i].name, name) == 0)
			return c->cache[i].slot;
	for (i = 1; i < CTR_SLOTS; i++) {
		if (slot_peek(c, (int)i, &st, seen) == -1)
			return -2;
		if (st == 2 && strncmp(seen, name, CTR_NAME) != 0)
			continue;	/* another endpoint's */
		/* Free, being named, or ours: decided in the mapping. */
		if ((s = slot_at(c, (int)i)) == NULL)
			return -2;
		st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
		if (st == 0) {
			if (CAS(&s->state, &st, 1)) {
				snprintf(s->name, sizeof(s->name), "%s", name);
				__atomic_store_n(&s->state, 2,
				    __ATOMIC_RELEASE);
				break;
			}
		}
		/* Being named by another process: wait for the name. */
		for (spins = 0; st == 1 && spins < 1000; spins++) {
			sched_yield();
			st = __atomic_load_n(&s->state, __ATOMIC_ACQUIRE);
		}
		if (st == 2 && strncmp(s->name, name, sizeof(s->name)) == 0)
			break;
		/* Named for another endpoint meanwhile (a slot this
		 * process counts in was named already: never here). */
		slot_drop(c, (int)i);
	}
	if (i == CTR_SLOTS)
		return -1;
	if (c->ncache < CTR_CACHE) {
		snprintf(c->cache[c->ncache].name, CTR_NAME, "%s", name);
		c->cache[c->ncache++].slot = (int)i;
	}
	return (int)i;
}

uint64_t
counters_total(const struct ctr_slot_data *s, enum ctr_cat cat)
{
	uint64_t	 n = 0;
	int		 i;

	for (i = 0; i < HOOK__MAX; i++)
		if (counters_cat((enum hook_err)i) == (int)cat)
			n += LOAD(&s->out[i]);
	return n;
}

/* The first request of a tick copies the totals into its mark. */
static void
mark(struct ctr_slot_data *s, struct ctr_mark *m, uint64_t tick)
{
	uint64_t	 t = LOAD(&m->tick);
	int		 k;

	if (t == tick || (t & ~CTR_BUSY) >= tick)
		return;
	if (!CAS(&m->tick, &t, tick | CTR_BUSY))
		return;
	for (k = 0; k < CAT__MAX; k++)
		STORE(&m->base[k], counters_total(s, (enum ctr_cat)k));
	__atomic_store_n(&m->tick, tick, __ATOMIC_RELEASE);
}

/*
 * Write a failure record under its sequence count (odd while written).
 * An odd count met here is another writer's, or one that died writing
 * (killed between the two stores): it is taken over, so a record is
 * never blocked for good; two writers at the same instant may leave a
 * mixed record, which is statistics, not state.
 */
static void
put_failure(uint64_t *seq, struct ctr_failure *f, int64_t now,
    enum hook_err er, int slot, const char *why)
{
	uint64_t	 q = LOAD(seq), odd = q | 1;

	if (!CAS(seq, &q, odd + (q & 1 ? 2 : 0)))
		return;
	f->at = now;
	f->outcome = (uint32_t)er;
	f->slot = (uint32_t)slot;
	snprintf(f->why, sizeof(f->why), "%s", why != NULL ? why : "");
	__atomic_store_n(seq, odd + (q & 1 ? 3 : 1), __ATOMIC_RELEASE);
}

/* counters_count(), or with only_ok the last success alone. */
static void
count(struct counters *c, const char *name, enum hook_err er,
    uint64_t us, int64_t now, const char *why, int only_ok)
{
	struct ctr_slot_data	*s;
	struct stat		 sb;
	uint64_t		 n;
	int			 slot, cat, i;

	if (c == NULL || c->path[0] == '\0' || er >= HOOK__MAX ||
	    !resp_counted(er))
		return;
	cat = counters_cat(er);
	if (sigsetjmp(bus_jmp, 0) != 0) {
		/* The file shrank under the mapping: look again next time. */
		log_warnx("counters: %s was truncated under this process; "
		    "this request is not counted", c->path);
		unmap_all(c);
		c->due = 1;
		return;
	}
	bus_armed = 1;
	if (c->due || now - c->checked >= CTR_RECHECK || now < c->checked) {
		c->due = 0;
		c->checked = now;
		if (c->f == NULL || stat(c->path, &sb) == -1 ||
		    sb.st_ino != c->ino || sb.st_dev != c->dev) {
			unmap_all(c);
			map(c, now);
		}
	}
	if (c->f != NULL && !header_ok(c->f)) {
		/* Overwritten under us: rebuilt by mapping it again. */
		unmap_all(c);
		map(c, now);
	}
	if (c->f == NULL) {
		bus_armed = 0;
		return;
	}
	if ((slot = slot_of(c, name)) == -1) {
		bus_armed = 0;
		if (!c->full)
			log_warnx("counters: no room for endpoint %s (%d "
			    "names counted already; remove %s to start "
			    "again)", name, CTR_SLOTS - 1, c->path);
		c->full = 1;
		return;
	}
	if (slot == -2 || (s = slot_at(c, slot)) == NULL) {
		/* Short (truncated) or no memory to map: the file is
		 * looked at again by the next count. */
		bus_armed = 0;
		log_warnx("counters: %s: cannot read or map a slot; this "
		    "request is not counted", c->path);
		c->due = 1;
		return;
	}
	if (only_ok) {
		STORE(&s->last_ok, now);
		bus_armed = 0;
		return;
	}
	mark(s, &s->minutes[(uint64_t)now / 60 % CTR_MINUTES],
	    (uint64_t)now / 60);
	mark(s, &s->hours[(uint64_t)now / 3600 % CTR_HOURS],
	    (uint64_t)now / 3600);
	ADD(&s->out[er], 1);
	for (i = 0; i < CTR_LAT - 1 && us > ctr_lat_us[i]; i++)
		;
	ADD(&s->lat[i], 1);
	ADD(&s->lat_sum_us, us);
	if (cat == -1 || cat == CAT_PROCESSED || cat == CAT_DUPLICATE)
		STORE(&s->last_ok, now);
	else {
		if (cat == CAT_FAILED) {
			STORE(&s->last_error, now);
			STORE(&s->last_error_outcome, (uint64_t)er);
		}
		put_failure(&s->fail_seq, &s->last_fail, now, er, slot, why);
		n = __atomic_fetch_add(&c->f->fail_next, 1, __ATOMIC_RELAXED);
		put_failure(&c->f->fails[n % CTR_FAILS].seq,
		    &c->f->fails[n % CTR_FAILS].f, now, er, slot, why);
	}
	bus_armed = 0;
}

void
counters_count(struct counters *c, const char *name, enum hook_err er,
    uint64_t us, int64_t now, const char *why)
{
	count(c, name, er, us, now, why, 0);
}

void
counters_succeeded(struct counters *c, const char *name, int64_t now)
{
	count(c, name, HOOK_OK, 0, now, NULL, 1);
}

int
counters_read(const char *path, struct ctr_file *f, char *err, size_t errsz)
{
	struct stat	 sb;
	ssize_t		 n;
	int		 fd;

	memset(f, 0, sizeof(*f));
	if ((fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW |
	    O_NONBLOCK)) == -1) {
		if (errno == ENOENT)
			snprintf(err, errsz, "nothing counted yet (no %s)",
			    path);
		else
			snprintf(err, errsz, "%s: %s", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &sb) == -1 || !S_ISREG(sb.st_mode)) {
		close(fd);
		snprintf(err, errsz, "%s is not a regular file", path);
		return -1;
	}
	n = read(fd, f, sizeof(*f));
	close(fd);
	if (n != (ssize_t)sizeof(*f) || !header_ok(f)) {
		memset(f, 0, sizeof(*f));
		snprintf(err, errsz, "%s is not a counters file of this "
		    "release", path);
		return -1;
	}
	return 0;
}

void
counters_last_fail(const struct ctr_file *f, size_t s, struct ctr_failure *out)
{
	/* A copy: a record written during the copy is odd or moved on. */
	if (f->slots[s].fail_seq & 1)
		memset(out, 0, sizeof(*out));
	else
		*out = f->slots[s].last_fail;
	out->why[sizeof(out->why) - 1] = '\0';
}

uint64_t
counters_window(const struct ctr_slot_data *s, const struct ctr_mark *marks,
    size_t nmarks, uint64_t now, uint64_t n, enum ctr_cat cat)
{
	const struct ctr_mark	*m, *first = NULL;
	uint64_t		 t, total;
	size_t			 i;

	/* The oldest mark inside the window: totals then. */
	for (i = 0; i < nmarks; i++) {
		m = &marks[i];
		t = m->tick;
		if ((t & CTR_BUSY) || t + n <= now || t > now)
			continue;
		if (first == NULL || t < first->tick)
			first = m;
	}
	if (first == NULL)
		return 0;
	total = counters_total(s, cat);
	return total > first->base[cat] ? total - first->base[cat] : 0;
}

void
counters_series(const struct ctr_slot_data *s, const struct ctr_mark *marks,
    size_t nmarks, uint64_t now, enum ctr_cat cat, uint64_t *out)
{
	const struct ctr_mark	*m, *next;
	uint64_t		 tick, end;
	size_t			 i, j;

	for (i = 0; i < nmarks; i++) {
		out[i] = 0;
		tick = now - (nmarks - 1) + i;
		if (now + 1 < nmarks - i)
			continue;		/* before the epoch */
		m = &marks[tick % nmarks];
		if (m->tick != tick)
			continue;
		/* Up to the next tick marked after it, or up to now. */
		next = NULL;
		for (j = 1; tick + j <= now && next == NULL; j++)
			if (marks[(tick + j) % nmarks].tick == tick + j)
				next = &marks[(tick + j) % nmarks];
		end = next != NULL ? next->base[cat] : counters_total(s, cat);
		out[i] = end > m->base[cat] ? end - m->base[cat] : 0;
	}
}
