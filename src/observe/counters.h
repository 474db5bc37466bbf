/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the counters (SPEC section 10).
 *
 * One small file of fixed layout next to the database (ONCEHOOK_DB
 * with "-counters" appended, 0600), mapped shared by every process that
 * answers requests and updated with atomic operations: no lock, no
 * database write, the same under CGI, FastCGI and serve, kept across
 * restarts.  Readers (stats, the status endpoint) copy it with read(2)
 * and never map it.
 *
 * The contract:
 * - Counting never decides a delivery.  A missing, truncated, corrupt
 *   or foreign file is rebuilt (its counts start again at zero), an
 *   unwritable one is a warning and the request is answered as if
 *   nothing were counted.  A file truncated while mapped (SIGBUS) loses
 *   the count in flight, never the process.
 * - Per slot (one per endpoint, slot 0 for requests that named no
 *   endpoint): a count per outcome, a latency histogram, the time of
 *   the last success and the last refusal or failure with its reason,
 *   and snapshots of five running totals (processed, duplicates,
 *   conflicts, refused, failed) taken by the first request of each
 *   minute (the last 60) and each hour (the last 48).  A window's count
 *   is a total now minus the first snapshot inside the window: exact,
 *   except that requests in flight at the turn of a minute may count in
 *   the one before.
 * - The file's layout carries a version and a checksum of the outcome
 *   names: a release that adds an outcome starts its counts again.
 */
#ifndef ONCEHOOK_COUNTERS_H
#define ONCEHOOK_COUNTERS_H

#include <stddef.h>
#include <stdint.h>

#include "hook.h"

#define CTR_SLOTS	65	/* slot 0 + 64 endpoints (CONF_COUNTED_MAX) */
#define CTR_OUTCOMES	32	/* room for enum hook_err */
#define CTR_LAT		15	/* latency buckets (the last is +Inf) */
#define CTR_MINUTES	60
#define CTR_HOURS	48
#define CTR_FAILS	16	/* the last failures, every endpoint */
#define CTR_WHY		160	/* bytes of a failure's reason */
#define CTR_NAME	64

/* The running totals a window is counted in. */
enum ctr_cat {
	CAT_PROCESSED,		/* new events committed */
	CAT_DUPLICATE,		/* retries answered already_processed */
	CAT_CONFLICT,		/* key conflicts (422) */
	CAT_REFUSED,		/* every other 4xx */
	CAT_FAILED,		/* 5xx: ours, or storage */
	CAT__MAX
};

/* Upper bounds of the latency buckets, microseconds (the last: none). */
extern const uint64_t	ctr_lat_us[CTR_LAT];

/* A failure as recorded (copied out by readers). */
struct ctr_failure {
	int64_t		 at;		/* unix seconds; 0: none */
	uint32_t	 outcome;	/* enum hook_err */
	uint32_t	 slot;
	char		 why[CTR_WHY];	/* "" or the operator's reason */
};

/* A snapshot of one slot's running totals, taken at a minute or hour. */
struct ctr_mark {
	uint64_t	 tick;		/* minute or hour since the epoch,
					   with CTR_BUSY while written */
	uint64_t	 base[CAT__MAX];
};

struct ctr_slot_data {
	uint64_t		 state;		/* 0 free, 1 naming, 2 named */
	char			 name[CTR_NAME];
	uint64_t		 out[CTR_OUTCOMES];
	uint64_t		 lat[CTR_LAT];
	uint64_t		 lat_sum_us;
	int64_t			 last_ok;	/* unix seconds, or 0 */
	int64_t			 last_error;	/* a 5xx, unix seconds */
	uint64_t		 last_error_outcome;
	uint64_t		 fail_seq;	/* even: last_fail is whole */
	struct ctr_failure	 last_fail;
	struct ctr_mark		 minutes[CTR_MINUTES];
	struct ctr_mark		 hours[CTR_HOURS];
};

/* The file, as it lies on disk and in memory. */
struct ctr_file {
	char			 magic[16];	/* CTR_MAGIC */
	uint32_t		 version;
	uint32_t		 size;		/* sizeof(struct ctr_file) */
	uint32_t		 outsum;	/* checksum of the outcome names */
	uint32_t		 pad;
	int64_t			 created;	/* unix seconds */
	uint64_t		 fail_next;	/* next ring entry */
	struct {
		uint64_t		 seq;
		struct ctr_failure	 f;
	}			 fails[CTR_FAILS];
	struct ctr_slot_data	 slots[CTR_SLOTS];
};

#define CTR_BUSY	(UINT64_C(1) << 63)

struct counters;

/* A SQLite database's counters file: its path and this (conf.c). */
#define CTR_SUFFIX	"-counters"

/*
 * The default counters file of the SQLite database at db (db and
 * "-counters") into buf; -1 if it does not fit.  The file in use is the
 * configuration's (conf.h: counters_file).
 */
int	counters_path(const char *db, char *buf, size_t bufsz);

/*
 * Open (creating or rebuilding it if needed) and map the counters file
 * at path.  Never fails: a counters that could not be mapped
 * counts nothing, and says why once in the log.  Release with
 * counters_close().
 */
struct counters	*counters_open(const char *path);
void		 counters_close(struct counters *);

/*
 * Count one answered request: slot name ("" or NULL for none), its
 * outcome, how long it took, the time now, and for a refusal or a
 * failure the operator's reason (may be NULL).  Lock-free; at most a
 * few atomic operations; never blocks.  A long-lived process
 * re-checks once a minute that the file at the path is still the one
 * it maps (removed, replaced) and maps the new one.
 */
void	counters_count(struct counters *, const char *name, enum hook_err,
	    uint64_t us, int64_t now, const char *why);

/*
 * An event of endpoint name took effect outside a request (work, replay,
 * after a deferred answer): its last success, nothing counted.
 */
void	counters_succeeded(struct counters *, const char *name, int64_t now);

/* From the SIGBUS handler (front/front.c): leave a count in flight whose file
 * shrank under the mapping; returns if no count is in flight. */
void	counters_on_bus(void);

/*
 * Read the counters file at path into *f (a read(2) copy, no
 * mapping).  Returns 0, or -1 with the reason in err if there is none
 * or it is not a counters file (then *f is all zero: nothing counted).
 */
int	counters_read(const char *path, struct ctr_file *f, char *err,
	    size_t errsz);

/* A consistent copy of slot s's last failure out of a read copy. */
void	counters_last_fail(const struct ctr_file *, size_t s,
	    struct ctr_failure *out);

/*
 * A slot's count of category cat in the window of the last n ticks of
 * marks (minutes or hours, nmarks of them) ending at tick now.
 */
uint64_t counters_window(const struct ctr_slot_data *,
	    const struct ctr_mark *marks, size_t nmarks, uint64_t now,
	    uint64_t n, enum ctr_cat cat);
/*
 * Per tick of the last nmarks ending at tick now, oldest first, the
 * count of category cat into out[nmarks] (0 for a tick nothing marked).
 */
void	 counters_series(const struct ctr_slot_data *,
	    const struct ctr_mark *marks, size_t nmarks, uint64_t now,
	    enum ctr_cat cat, uint64_t *out);
/* A slot's running total of category cat. */
uint64_t counters_total(const struct ctr_slot_data *, enum ctr_cat cat);
/* The category an outcome counts in, or -1 for none (a handshake). */
int	 counters_cat(enum hook_err);

#endif
