/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: the in-memory engine (tests/unit/fakestore.h).  Its state
 * is a few fixed arrays, so that a transaction or a savepoint is a copy
 * of it and a rollback a copy back.  One process, one connection: its
 * "write lock" is that nothing else runs, as SQLite's serialises claims.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "pipeline/event.h"
#include "store/engine.h"
#include "store/store.h"
#include "fakestore.h"

#define ROWS	64
#define FAILS	16

struct frow {
	long long	 id;
	size_t		 endpoint;
	char		 key[128];
	char		 type[64];	/* "" for none */
	char		 hash[72];
	char		 payload[512];
	char		 status[16];
	long long	 received_at;
	long long	 attempts;
	long long	 next_at;
	char		 error[128];
};

struct fstate {
	struct frow	 rows[ROWS];
	size_t		 nrows;
	struct {
		size_t		 endpoint;
		char		 key[128];
		long long	 attempts;
	}		 fails[FAILS];
	size_t		 nfails;
	long long	 effects;
	long long	 conflicts;
	long long	 lastid;
};

#define FIXES	8


struct fake {
	struct store	 base;
	struct store_ops ops;
	struct fstate	 cur, tx, sp;
	int		 in_tx;
	int		 lost;
	int		 deadlocks;
	int		 code;		/* the last error, for why */
	char		 fault_op[32];
	int		 fault_nth;
	int		 fault_code;
	char		 fixed[FIXES][128];	/* t.later's keys that now run */
	size_t		 nfixed;
	char		 path[1024];	/* fake_open_file(): its state */
};

#define F(b)	((struct fake *)(b))

static struct frow *
row_of(struct fstate *st, size_t endpoint, const char *key)
{
	size_t	 i;

	for (i = 0; i < st->nrows; i++)
		if (st->rows[i].endpoint == endpoint &&
		    strcmp(st->rows[i].key, key) == 0)
			return &st->rows[i];
	return NULL;
}

/* The transaction is gone: its state with it. */
static void
gone(struct fake *f)
{
	if (f->in_tx)
		f->cur = f->tx;
	f->in_tx = 0;
}

/* The fault planned for op, if this is its call: its code. */
static int
faulted(struct fake *f, const char *op)
{
	if (f->lost)
		return f->code = FAKE_LOST;
	if (f->fault_nth == 0 || strcmp(f->fault_op, op) != 0 ||
	    --f->fault_nth > 0)
		return 0;
	f->code = f->fault_code;
	if (f->code == FAKE_ROLLBACK || f->code == FAKE_DEADLOCK)
		gone(f);
	else if (f->code == FAKE_LOST) {
		f->lost = 1;
		gone(f);
	}
	return f->code;
}

static enum hook_err
fk_classify(struct store *b, int code)
{
	(void)b;
	return code == FAKE_BUSY || code == FAKE_DEADLOCK ||
	    code == FAKE_LOST ? HOOK_EBUSY : HOOK_ESYSTEM;
}

static enum engine_end
fk_ended(struct store *b, int code)
{
	if (F(b)->lost)
		return ENGINE_LOST;
	if (code == FAKE_DEADLOCK)
		return ENGINE_AGAIN;
	return F(b)->in_tx ? ENGINE_STATEMENT : ENGINE_TRANSACTION;
}

static void
fk_note(struct store *b, int code)
{
	(void)b;
	(void)code;
}

static void
fk_why(struct store *b, const char *step, char *buf, size_t bufsz)
{
	snprintf(buf, bufsz, "%s: fake error %d", step, F(b)->code);
}

#define STATE_MAGIC	"oncehook fake state 1\n"

/* A file-backed fake (fake_open_file()): the state another process
 * saved last, outside a transaction; 0, or a fake code. */
static int
load(struct fake *f)
{
	char	 magic[sizeof(STATE_MAGIC) - 1];
	FILE	*fp;
	int	 rc = 0;

	if (f->path[0] == '\0' || f->in_tx)
		return 0;
	if ((fp = fopen(f->path, "rb")) == NULL)
		return FAKE_LOST;
	if (fread(magic, 1, sizeof(magic), fp) != sizeof(magic) ||
	    memcmp(magic, STATE_MAGIC, sizeof(magic)) != 0 ||
	    fread(&f->cur, sizeof(f->cur), 1, fp) != 1)
		rc = FAKE_LOST;
	fclose(fp);
	return rc;
}

/* JSON text of s (the fake's keys and statuses: printable). */
static void
json_str(FILE *fp, const char *s)
{
	fputc('"', fp);
	for (; *s != '\0'; s++)
		fprintf(fp, *s == '"' || *s == '\\' ? "\\%c" : "%c", *s);
	fputc('"', fp);
}

/* Save the state for the next process, and beside it (PATH.json) the
 * rows as the request cases read them (tests/cases/run.py). */
static int
save(struct fake *f)
{
	char	 tmp[sizeof(f->path) + 8], side[sizeof(f->path) + 8];
	FILE	*fp;
	size_t	 i;
	int	 ok;

	if (f->path[0] == '\0')
		return 0;
	snprintf(tmp, sizeof(tmp), "%s.tmp", f->path);
	if ((fp = fopen(tmp, "wb")) == NULL)
		return FAKE_LOST;
	ok = fwrite(STATE_MAGIC, 1, sizeof(STATE_MAGIC) - 1, fp) ==
	    sizeof(STATE_MAGIC) - 1 && fwrite(&f->cur, sizeof(f->cur), 1,
	    fp) == 1;
	if (fclose(fp) != 0 || !ok || rename(tmp, f->path) != 0)
		return FAKE_LOST;
	snprintf(side, sizeof(side), "%s.json", f->path);
	if ((fp = fopen(tmp, "w")) == NULL)
		return FAKE_LOST;
	fprintf(fp, "{\"effects\": %lld, \"conflicts\": %lld, \"events\": {",
	    f->cur.effects, f->cur.conflicts);
	for (i = 0; i < f->cur.nrows; i++) {
		fprintf(fp, "%s", i ? ", " : "");
		json_str(fp, f->cur.rows[i].key);
		fprintf(fp, ": {\"status\": ");
		json_str(fp, f->cur.rows[i].status);
		fprintf(fp, ", \"attempts\": %lld}", f->cur.rows[i].attempts);
	}
	fprintf(fp, "}}\n");
	if (fclose(fp) != 0 || rename(tmp, side) != 0)
		return FAKE_LOST;
	return 0;
}

static int
fk_tx_begin(struct store *b)
{
	struct fake	*f = F(b);
	int		 rc;

	if ((rc = faulted(f, "tx_begin")) != 0 || (rc = load(f)) != 0)
		return rc;
	f->tx = f->cur;
	f->in_tx = 1;
	return 0;
}

static int
fk_tx_commit(struct store *b)
{
	struct fake	*f = F(b);
	int		 rc;

	if ((rc = faulted(f, "tx_commit")) != 0 || (rc = save(f)) != 0)
		return rc;
	f->in_tx = 0;
	return 0;
}

static void
fk_tx_rollback(struct store *b)
{
	gone(F(b));
}

static void
fk_tx_end(struct store *b)
{
	(void)b;
}

static int
fk_savepoint(struct store *b, enum engine_sp step)
{
	struct fake	*f = F(b);
	int		 rc;

	if ((rc = faulted(f, "savepoint")) != 0)
		return rc;
	if (step == ENGINE_SP_SET)
		f->sp = f->cur;
	else if (step == ENGINE_SP_UNDO)
		f->cur = f->sp;
	return 0;
}

static int
fk_find_key(struct store *b, size_t endpoint, const struct event *ev,
    enum hook_err *found)
{
	struct fake	*f = F(b);
	struct frow	*r;
	int		 rc;

	*found = HOOK_OK;
	if ((rc = faulted(f, "find_key")) != 0 || (rc = load(f)) != 0)
		return rc;
	if ((r = row_of(&f->cur, endpoint, ev->key)) == NULL)
		return 0;
	if (strcmp(r->hash, ev->hash) == 0 || (ev->payload != NULL &&
	    strlen(r->payload) == ev->payloadsz &&
	    memcmp(r->payload, ev->payload, ev->payloadsz) == 0))
		*found = strcmp(r->status, "failed") == 0 ||
		    strcmp(r->status, "dead") == 0 ? HOOK_PARKED : HOOK_DUP;
	else
		*found = HOOK_ECONFLICT;
	return 0;
}

static int
fk_find_payload(struct store *b, size_t endpoint, const struct event *ev,
    int *found)
{
	struct fake	*f = F(b);
	struct frow	*r;
	size_t		 i;
	int		 rc;

	*found = 0;
	if ((rc = faulted(f, "find_payload")) != 0 || (rc = load(f)) != 0)
		return rc;
	for (i = 0; i < f->cur.nrows; i++) {
		r = &f->cur.rows[i];
		if (r->endpoint == endpoint && strcmp(r->hash, ev->hash) == 0 &&
		    strcmp(r->type, ev->type != NULL ? ev->type : "") == 0 &&
		    strcmp(r->key, ev->key) != 0) {
			*found = strcmp(r->status, "failed") == 0 ||
			    strcmp(r->status, "dead") == 0 ? 2 : 1;
			break;
		}
	}
	return 0;
}

static int
fk_guard(struct store *b, size_t endpoint, const struct event *ev, int *found)
{
	int	 rc;

	if ((rc = faulted(F(b), "guard")) != 0)
		return rc;
	return fk_find_payload(b, endpoint, ev, found);
}

static struct frow *
add_row(struct fake *f, size_t endpoint, const struct event *ev,
    const char *status)
{
	struct frow	*r;

	if (f->cur.nrows == ROWS)
		return NULL;
	r = &f->cur.rows[f->cur.nrows++];
	memset(r, 0, sizeof(*r));
	r->id = ++f->cur.lastid;
	r->endpoint = endpoint;
	snprintf(r->key, sizeof(r->key), "%s", ev->key);
	snprintf(r->type, sizeof(r->type), "%s", ev->type != NULL ?
	    ev->type : "");
	snprintf(r->hash, sizeof(r->hash), "%s", ev->hash);
	snprintf(r->payload, sizeof(r->payload), "%.*s", (int)ev->payloadsz,
	    ev->payload);
	snprintf(r->status, sizeof(r->status), "%s", status);
	r->received_at = ev->received_at;
	return r;
}

static int
fk_insert(struct store *b, size_t endpoint, const struct event *ev,
    long long now, int *isnew)
{
	struct fake	*f = F(b);
	struct frow	*r;
	int		 rc;

	*isnew = 0;
	if ((rc = faulted(f, "insert")) == FAKE_RACE) {
		if (f->tx.nrows == ROWS ||
		    (r = add_row(f, endpoint, ev, "processed")) == NULL)
			return f->code = FAKE_STATEMENT;
		snprintf(r->hash, sizeof(r->hash), "other");
		r->payload[0] = '\0';
		f->tx.rows[f->tx.nrows++] = *r;	/* committed before us */
		f->tx.lastid = f->cur.lastid;
		return 0;
	}
	if (rc != 0)
		return rc;
	if (row_of(&f->cur, endpoint, ev->key) != NULL)
		return 0;
	if ((r = add_row(f, endpoint, ev, b->cf->endpoints[endpoint].deferred ?
	    "received" : "processed")) == NULL)
		return f->code = FAKE_STATEMENT;
	if (b->cf->endpoints[endpoint].deferred)
		r->next_at = now + STORE_CLAIMER_FIRST;
	*isnew = 1;
	return 0;
}

static int
fk_conflict(struct store *b, size_t endpoint, const struct event *ev)
{
	int	 rc;

	(void)endpoint;
	(void)ev;
	if ((rc = faulted(F(b), "conflict")) != 0)
		return rc;
	F(b)->cur.conflicts++;
	return 0;
}

static enum hook_err
fk_ready(struct store *b, size_t endpoint, const struct event *ev, char *why,
    size_t whysz)
{
	(void)b;
	(void)endpoint;
	(void)ev;
	(void)why;
	(void)whysz;
	return HOOK_OK;
}

static int
is_fixed(const struct fake *f, const char *key)
{
	size_t	 i;

	for (i = 0; i < f->nfixed; i++)
		if (strcmp(f->fixed[i], key) == 0)
			return 1;
	return 0;
}

static enum hook_err
fk_actions(struct store *b, size_t endpoint, const struct event *ev,
    int *code, char *why, size_t whysz)
{
	struct fake	*f = F(b);
	const char	*t = ev->type != NULL ? ev->type : "";

	(void)endpoint;
	if ((*code = faulted(f, "actions")) != 0) {
		snprintf(why, whysz, "fault %d", *code);
		return fk_classify(b, *code) == HOOK_EBUSY ? HOOK_EBUSY :
		    HOOK_EACTION;
	}
	if (strcmp(t, "t.fail") == 0) {
		snprintf(why, whysz, "t.fail fails");
		*code = f->code = FAKE_STATEMENT;
		return HOOK_EACTION;
	}
	if (strcmp(t, "t.later") == 0 && !is_fixed(f, ev->key)) {
		snprintf(why, whysz, "t.later fails until fixed");
		*code = f->code = FAKE_STATEMENT;
		return HOOK_EACTION;
	}
	if (strcmp(t, "t.rollback") == 0) {
		snprintf(why, whysz, "t.rollback rolls back");
		gone(f);
		*code = f->code = FAKE_ROLLBACK;
		return HOOK_EACTION;
	}
	if (strcmp(t, "t.deadlock") == 0 && f->deadlocks > 0) {
		f->deadlocks--;
		snprintf(why, whysz, "a deadlock");
		gone(f);
		*code = f->code = FAKE_DEADLOCK;
		return HOOK_EBUSY;
	}
	if (strcmp(t, "t.lost") == 0) {
		snprintf(why, whysz, "connection lost");
		f->lost = 1;
		gone(f);
		*code = f->code = FAKE_LOST;
		return HOOK_EBUSY;
	}
	f->cur.effects++;
	return HOOK_OK;
}

static int
fk_take(struct store *b, const char *endpoint, const char *key, long long now,
    long long lead, int skip, struct store_taken *t, int *found)
{
	struct fake	*f = F(b);
	struct frow	*r, *best = NULL;
	size_t		 i, epi;
	int		 rc;

	(void)skip;
	*found = 0;
	if ((rc = faulted(f, "take")) != 0)
		return rc;
	for (i = 0; i < f->cur.nrows; i++) {
		r = &f->cur.rows[i];
		if (endpoint != NULL) {
			if (conf_endpoint_index(b->cf, endpoint, &epi) == 0 &&
			    r->endpoint == epi && strcmp(r->key, key) == 0)
				best = r;
			continue;
		}
		if ((strcmp(r->status, "received") == 0 &&
		    r->next_at <= now + lead) ||
		    (strcmp(r->status, "failed") == 0 && r->next_at <= now))
			if (best == NULL || r->next_at < best->next_at)
				best = r;
	}
	if (best == NULL)
		return 0;
	if (store_taken_fill(b->cf, t, best->id,
	    b->cf->endpoints[best->endpoint].name, best->key,
	    best->type[0] != '\0' ? best->type : NULL, best->hash,
	    best->payload, strlen(best->payload), best->received_at,
	    best->attempts, best->status) == -1)
		return f->code = FAKE_STATEMENT;
	*found = 1;
	return 0;
}

static struct frow *
row_id(struct fake *f, long long id)
{
	size_t	 i;

	for (i = 0; i < f->cur.nrows; i++)
		if (f->cur.rows[i].id == id)
			return &f->cur.rows[i];
	return NULL;
}

static int
fk_processed(struct store *b, long long id, long long now, long long attempts,
    int *changed)
{
	struct frow	*r;
	int		 rc;

	(void)now;
	*changed = 0;
	if ((rc = faulted(F(b), "processed")) != 0)
		return rc;
	if ((r = row_id(F(b), id)) != NULL &&
	    strcmp(r->status, "processed") != 0) {
		snprintf(r->status, sizeof(r->status), "processed");
		r->attempts = attempts;
		r->next_at = 0;
		r->error[0] = '\0';
		*changed = 1;
	}
	return 0;
}

static int
fk_run_failed(struct store *b, long long id, const char *error, long long max,
    long long next_at)
{
	struct frow	*r;
	int		 rc;

	if ((rc = faulted(F(b), "run_failed")) != 0)
		return rc;
	if ((r = row_id(F(b), id)) != NULL &&
	    strcmp(r->status, "processed") != 0) {
		r->attempts++;
		snprintf(r->error, sizeof(r->error), "%s", error);
		snprintf(r->status, sizeof(r->status), "%s",
		    r->attempts >= max ? "dead" : "failed");
		r->next_at = r->attempts >= max ? 0 : next_at;
	}
	return 0;
}

static int
fk_count_failure(struct store *b, size_t endpoint, const struct event *ev,
    const char *error, long long now, long long *attempts)
{
	struct fstate	*st = &F(b)->cur;
	size_t		 i;
	int		 rc;

	(void)error;
	(void)now;
	if ((rc = faulted(F(b), "count_failure")) != 0)
		return rc;
	for (i = 0; i < st->nfails; i++)
		if (st->fails[i].endpoint == endpoint &&
		    strcmp(st->fails[i].key, ev->key) == 0)
			break;
	if (i == st->nfails) {
		if (i == FAILS)
			return F(b)->code = FAKE_STATEMENT;
		st->nfails++;
		st->fails[i].endpoint = endpoint;
		snprintf(st->fails[i].key, sizeof(st->fails[i].key), "%s",
		    ev->key);
		st->fails[i].attempts = 0;
	}
	*attempts = ++st->fails[i].attempts;
	return 0;
}

static int
fk_park(struct store *b, size_t endpoint, const struct event *ev,
    const char *error, long long attempts, long long next_at, int *parked)
{
	struct fake	*f = F(b);
	struct frow	*r;
	size_t		 i;
	int		 rc;

	*parked = 0;
	if ((rc = faulted(f, "park")) != 0)
		return rc;
	if (row_of(&f->cur, endpoint, ev->key) == NULL &&
	    (r = add_row(f, endpoint, ev, "failed")) != NULL) {
		r->attempts = attempts;
		r->next_at = next_at;
		snprintf(r->error, sizeof(r->error), "%s", error);
		*parked = 1;
	}
	for (i = 0; i < f->cur.nfails; i++)
		if (f->cur.fails[i].endpoint == endpoint &&
		    strcmp(f->cur.fails[i].key, ev->key) == 0) {
			f->cur.fails[i] = f->cur.fails[--f->cur.nfails];
			break;
		}
	return 0;
}

static int
fk_broken(const struct store *b)
{
	return ((const struct fake *)b)->lost;
}

static void
fk_close(struct store *b)
{
	free(b);
}

static int
fk_version(const struct store *b)
{
	(void)b;
	return 1;
}

static int
fk_about(struct store *b, char *buf, size_t bufsz)
{
	snprintf(buf, bufsz, "the in-memory engine of the tests (%s)",
	    F(b)->path[0] != '\0' ? F(b)->path : "in memory");
	return 0;
}

static int
fk_idle(struct store *b)
{
	(void)b;
	return 0;
}

struct store *
fake_open(const struct conf *cf, unsigned int caps)
{
	struct fake	*f;

	if ((f = calloc(1, sizeof(*f))) == NULL)
		return NULL;
	f->ops.engine = "fake";
	f->ops.caps = caps;
	f->ops.classify = fk_classify;
	f->ops.ended = fk_ended;
	f->ops.note = fk_note;
	f->ops.why = fk_why;
	f->ops.tx_begin = fk_tx_begin;
	f->ops.tx_commit = fk_tx_commit;
	f->ops.tx_rollback = fk_tx_rollback;
	f->ops.tx_end = fk_tx_end;
	f->ops.savepoint = fk_savepoint;
	f->ops.find_key = fk_find_key;
	f->ops.find_payload = fk_find_payload;
	f->ops.guard = fk_guard;
	f->ops.insert = fk_insert;
	f->ops.conflict = fk_conflict;
	f->ops.ready = fk_ready;
	f->ops.actions = fk_actions;
	f->ops.take = fk_take;
	f->ops.processed = fk_processed;
	f->ops.run_failed = fk_run_failed;
	f->ops.count_failure = fk_count_failure;
	f->ops.park = fk_park;
	f->ops.broken = fk_broken;
	f->ops.close = fk_close;
	f->ops.version = fk_version;
	f->ops.about = fk_about;
	f->ops.idle = fk_idle;
	f->base.ops = &f->ops;
	f->base.cf = cf;
	return &f->base;
}

long long
fake_effects(const struct store *b)
{
	return ((const struct fake *)b)->cur.effects;
}

long long
fake_conflicts(const struct store *b)
{
	return ((const struct fake *)b)->cur.conflicts;
}

void
fake_deadlocks(struct store *b, int n)
{
	F(b)->deadlocks = n;
}

void
fake_fault(struct store *b, const char *op, int nth, int code)
{
	snprintf(F(b)->fault_op, sizeof(F(b)->fault_op), "%s", op);
	F(b)->fault_nth = nth;
	F(b)->fault_code = code;
}

const char *
fake_status(const struct store *b, const char *key)
{
	struct frow	*r;

	r = row_of(&((struct fake *)b)->cur, 0, key);
	return r != NULL ? r->status : NULL;
}

long long
fake_attempts(const struct store *b, const char *key)
{
	struct frow	*r;

	r = row_of(&((struct fake *)b)->cur, 0, key);
	return r != NULL ? r->attempts : -1;
}

void
fake_fix(struct store *b, const char *key)
{
	struct fake	*f = F(b);

	if (f->nfixed < FIXES)
		snprintf(f->fixed[f->nfixed++], sizeof(f->fixed[0]), "%s", key);
}

struct store *
fake_open_file(const struct conf *cf, int init, char *err, size_t errsz)
{
	struct store	*st;
	struct fake	*f;

	if ((st = fake_open(cf, 0)) == NULL) {
		snprintf(err, errsz, "out of memory");
		return NULL;
	}
	f = F(st);
	snprintf(f->path, sizeof(f->path), "%s", cf->db);
	if (access(f->path, F_OK) != 0) {
		if (!init || save(f) != 0) {
			snprintf(err, errsz, "%s: %s%s", f->path, strerror(errno),
			    init ? "" : ": run oncehook init");
			fk_close(st);
			return NULL;
		}
	}
	if (load(f) != 0) {
		snprintf(err, errsz, "%s: not a state of the fake", f->path);
		fk_close(st);
		return NULL;
	}
	return st;
}
