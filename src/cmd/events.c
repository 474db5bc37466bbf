/* SPDX-License-Identifier: MIT */
/*
 * oncehook: the commands on the event rows: `list`, `show`, `prune`
 * (and the outbox's rows with --outbox), `replay`.
 */
#include "config.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cmd/admin.h"
#include "cmd/common.h"
#include "conf.h"
#include "lib/log.h"
#include "observe/counters.h"
#include "store/outbox.h"
#include "store/store.h"

/*
 * Open the configured store for a command that reads or changes only the
 * database (no endpoint secret, no status token is read); NULL after a
 * message.
 */
static struct store *
open_store(const char *cmd, struct conf **cfp)
{
	struct store	*st;
	char		 err[512];

	if ((*cfp = cmd_load(cmd, CONF_NEEDS_DB)) == NULL)
		return NULL;
	if ((st = store_open(*cfp, 0, err, sizeof(err))) == NULL) {
		fprintf(stderr, "oncehook %s: %s\n", cmd, err);
		conf_free(*cfp);
		*cfp = NULL;
	}
	return st;
}

/* Unix seconds as UTC ISO 8601 into buf (21 bytes). */
static const char *
iso(long long t, char *buf, size_t sz)
{
	if (t < 0)
		snprintf(buf, sz, "-");
	else
		log_utc((int64_t)t, buf, sz);
	return buf;
}

static void
list_row(void *arg, const struct store_row *r)
{
	char	 t[32], k[600], ty[300];

	printf("%s  %-12s %-9s %s  %s\n", iso(r->received_at, t, sizeof(t)),
	    r->endpoint, r->status, log_escape(k, sizeof(k), r->key),
	    log_escape(ty, sizeof(ty), r->type));
}

static const char list_usage[] =
"usage: oncehook list [--endpoint NAME] [--status STATUS] [--limit N]\n"
"       oncehook list --outbox [--status STATUS] [--limit N]\n"
"\n"
"List recorded events, newest first (default 50): time received,\n"
"endpoint, status, key, type.  Keys and types are printed escaped.\n"
"--status received, processed, failed (parked) or dead.\n"
"--outbox: the outbox's rows instead, newest first: time written, id,\n"
"status, attempts, topic, endpoint, key; --status pending, delivered\n"
"or dead.\n";

static void
outbox_line(void *arg, const struct outbox_row *r)
{
	char	 t[32], k[600], tp[300];

	(void)arg;
	printf("%s  %s %-9s %3lld  %s  %s %s\n", iso(r->created_at, t,
	    sizeof(t)), r->id, r->status, r->attempts, log_escape(tp,
	    sizeof(tp), r->topic), r->endpoint, log_escape(k, sizeof(k),
	    r->key));
}

static void
outbox_show(void *arg, const struct outbox_row *r)
{
	char	 t[32], k[600];

	(void)arg;
	printf("id            %s\n", r->id);
	printf("topic         %s\n", r->topic);
	printf("endpoint      %s\n", r->endpoint);
	printf("key           %s\n", log_escape(k, sizeof(k), r->key));
	printf("status        %s\n", r->status);
	printf("created_at    %s\n", iso(r->created_at, t, sizeof(t)));
	printf("attempts      %lld\n", r->attempts);
	if (r->last_error != NULL)
		printf("last_error    %s\n", log_escape(k, sizeof(k),
		    r->last_error));
	if (strcmp(r->status, "pending") == 0)
		printf("next_at       %s\n", iso(r->next_at, t, sizeof(t)));
	printf("delivered_at  %s\n", iso(r->delivered_at, t, sizeof(t)));
	printf("payload       %s\n", r->payload ? r->payload : "");
}

/* show KEY: the event's outbox rows, one line each. */
static void
event_outbox_line(void *arg, const struct outbox_row *r)
{
	int	*first = arg;

	printf("%s%s %s %s (%lld attempt%s)\n", *first ? "outbox        " :
	    "              ", r->id, r->topic, r->status, r->attempts,
	    r->attempts == 1 ? "" : "s");
	*first = 0;
}

/* The status words list --status takes, of events and of the outbox. */
static const char *const event_words[] = { "received", "processed",
    "failed", "dead", NULL };
static const char *const outbox_words[] = { "pending", "delivered",
    "dead", NULL };

/* s if it is one of words (NULL-terminated), as the table spells it. */
static const char *
word_in(const char *s, const char *const *words)
{
	for (; *words != NULL; words++)
		if (strcmp(s, *words) == 0)
			return *words;
	return NULL;
}

int
admin_list(int argc, char **argv)
{
	struct conf	*cf = NULL;
	struct store	*st;
	const char	*endpoint = NULL, *status = NULL, *sword = NULL;
	char		 err[512], *end;
	long long	 limit = 50, n;
	int		 i, outbox = 0;

	if (cmd_helped(argc, argv, list_usage))
		return 0;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--endpoint") == 0 && i + 1 < argc)
			endpoint = argv[++i];
		else if (strcmp(argv[i], "--outbox") == 0)
			outbox = 1;
		else if (strcmp(argv[i], "--status") == 0 && i + 1 < argc)
			sword = argv[++i];
		else if (strcmp(argv[i], "--limit") == 0 && i + 1 < argc) {
			errno = 0;
			limit = strtoll(argv[++i], &end, 10);
			if (errno != 0 || *end != '\0' || limit < 1) {
				fputs(list_usage, stderr);
				return 2;
			}
		} else {
			fputs(list_usage, stderr);
			return 2;
		}
	}
	if (sword != NULL && (status = word_in(sword, outbox ? outbox_words :
	    event_words)) == NULL) {
		fprintf(stderr, "oncehook list: --status %s: want %s\n", sword,
		    outbox ? "pending, delivered or dead" :
		    "received, processed, failed or dead");
		return 2;
	}
	if (outbox && endpoint != NULL) {
		fputs(list_usage, stderr);
		return 2;
	}
	if ((st = open_store("list", &cf)) == NULL)
		return 1;
	if (outbox)
		n = outbox_list(st, NULL, NULL, NULL, status, limit, 0,
		    outbox_line, NULL, err, sizeof(err));
	else
		n = store_list(st, endpoint, NULL, status, limit, 0, list_row,
		    NULL, err, sizeof(err));
	if (n < 0)
		fprintf(stderr, "oncehook list: %s\n", err);
	store_close(st);
	conf_free(cf);
	return n < 0 ? 1 : 0;
}

static void
show_row(void *arg, const struct store_row *r)
{
	char	 t[32], k[600];

	printf("endpoint      %s\n", r->endpoint);
	printf("key           %s\n", log_escape(k, sizeof(k), r->key));
	printf("type          %s\n", log_escape(k, sizeof(k), r->type));
	printf("status        %s\n", r->status);
	printf("payload_hash  %s\n", r->payload_hash);
	printf("received_at   %s\n", iso(r->received_at, t, sizeof(t)));
	printf("processed_at  %s\n", iso(r->processed_at, t, sizeof(t)));
	printf("attempts      %lld\n", r->attempts);
	if (r->last_error != NULL)
		printf("last_error    %s\n", log_escape(k, sizeof(k),
		    r->last_error));
	if (r->next_at >= 0)
		printf("next_at       %s\n", iso(r->next_at, t, sizeof(t)));
	printf("expires_at    %s\n", r->expires_at < 0 ? "never (forever)" :
	    iso(r->expires_at, t, sizeof(t)));
	printf("payload       %s\n", r->payload ? r->payload : "");
}

static const char show_usage[] =
"usage: oncehook show [--endpoint NAME] KEY\n"
"       oncehook show --outbox ID\n"
"\n"
"Show one recorded event with its payload, its attempts and, if its\n"
"last run failed, why, and the outbox rows its actions wrote.\n"
"--endpoint is needed when ONCEHOOK_ENDPOINTS names several.  --outbox:\n"
"one outbox row instead, by its id (ob_...).  Exit status 1 if there is\n"
"none, 2 on a usage error.\n";

int
admin_show(int argc, char **argv)
{
	struct conf	*cf = NULL;
	struct store	*st;
	const char	*endpoint = NULL, *key = NULL;
	char		 err[512];
	long long	 n;
	int		 i, outbox = 0, first = 1;

	if (cmd_helped(argc, argv, show_usage))
		return 0;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--endpoint") == 0 && i + 1 < argc)
			endpoint = argv[++i];
		else if (strcmp(argv[i], "--outbox") == 0 && !outbox)
			outbox = 1;
		else if (key == NULL)
			key = argv[i];
		else {
			fputs(show_usage, stderr);
			return 2;
		}
	}
	if (key == NULL) {
		fputs(show_usage, stderr);
		return 2;
	}
	if (outbox && endpoint != NULL) {
		fputs(show_usage, stderr);
		return 2;
	}
	if ((st = open_store("show", &cf)) == NULL)
		return 1;
	if (outbox) {
		if ((n = outbox_list(st, key, NULL, NULL, NULL, 1, 1,
		    outbox_show, NULL, err, sizeof(err))) < 0)
			fprintf(stderr, "oncehook show: %s\n", err);
		else if (n == 0)
			fprintf(stderr, "oncehook show: no outbox row %s\n",
			    key);
		store_close(st);
		conf_free(cf);
		return n > 0 ? 0 : 1;
	}
	if (endpoint == NULL && cf->nendpoints == 1)
		endpoint = cf->endpoints[0].name;
	if (endpoint == NULL) {
		fprintf(stderr, "oncehook show: --endpoint is needed\n");
		n = -2;			/* a usage error: 2, as replay */
	} else if ((n = store_list(st, endpoint, key, NULL, 1, 1, show_row,
	    NULL, err, sizeof(err))) < 0)
		fprintf(stderr, "oncehook show: %s\n", err);
	else if (n == 0)
		fprintf(stderr, "oncehook show: no event %s on endpoint %s\n",
		    key, endpoint);
	else if (outbox_list(st, NULL, endpoint, key, NULL, 100, 0,
	    event_outbox_line, &first, err, sizeof(err)) < 0)
		fprintf(stderr, "oncehook show: outbox: %s\n", err);
	store_close(st);
	conf_free(cf);
	return n > 0 ? 0 : n == -2 ? 2 : 1;
}

static const char prune_usage[] =
"usage: oncehook prune [--dry-run] [--dead]\n"
"\n"
"Delete the processed events whose retention (ONCEHOOK_<NAME>_RETENTION)\n"
"has ended, and the conflicts rows older than it, in small transactions\n"
"while deliveries go on.  A pruned key is no longer deduplicated: keep\n"
"the retention beyond every sender's retry horizon.  Events that never\n"
"took effect (received, failed) are kept; --dead deletes dead ones past\n"
"their retention too.  The outbox rows of the events deleted go with\n"
"them once delivered (dead ones too with --dead; pending ones are kept).\n"
"--dry-run counts only.  Run it from cron, e.g.\n"
"daily.\n";

int
admin_prune(int argc, char **argv)
{
	struct conf	*cf = NULL;
	struct store	*st;
	char		 err[512];
	long long	 n, nc = 0, no = 0, now;
	int		 i, dry = 0, dead = 0;

	if (cmd_helped(argc, argv, prune_usage))
		return 0;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--dry-run") == 0)
			dry = 1;
		else if (strcmp(argv[i], "--dead") == 0)
			dead = 1;
		else {
			fputs(prune_usage, stderr);
			return 2;
		}
	}
	if ((st = open_store("prune", &cf)) == NULL)
		return 1;
	now = (long long)time(NULL);
	if ((n = store_prune(st, now, dry, dead, &nc, err, sizeof(err))) < 0 ||
	    (no = outbox_prune(st, now, dry, dead, err, sizeof(err))) < 0) {
		fprintf(stderr, "oncehook prune: %s\n", err);
		n = -1;
	} else
		printf("%s %lld events and %lld conflicts past their "
		    "retention, and %lld outbox rows of the events gone\n",
		    dry ? "would delete" : "deleted", n, nc, no);
	store_close(st);
	conf_free(cf);
	return n < 0 ? 1 : 0;
}

static const char replay_usage[] =
"usage: oncehook replay [--endpoint NAME] [--dry-run]\n"
"                       (KEY... | --failed | --dead)\n"
"\n"
"Run the endpoint's current actions for stored events that have not\n"
"taken effect (failed: parked after ONCEHOOK_<NAME>_PARK_AFTER attempts;\n"
"dead; received), each exactly once: the status changes in the same\n"
"transaction as the effect, so two replays, work and live deliveries\n"
"at the same moment cannot run one twice.  A processed event is never\n"
"run again (said, not an error).  --failed or --dead: every such event\n"
"(of the endpoint, or of all).  --dry-run says what would run.  Exit 0\n"
"when nothing failed (nothing to do included), 1 when an event failed\n"
"again or a named key was not found, 2 on a usage or configuration\n"
"error.\n";

/* The events to replay: endpoint index and key, owned. */
struct replay_list {
	size_t	*ep;
	char	**keys;
	size_t	 n, cap;
	size_t	 cur;		/* the endpoint being listed */
	int	 oom;
};

static void
replay_add(void *arg, const struct store_row *r)
{
	struct replay_list	*l = arg;
	size_t			*ne;
	char			**nk;

	if (l->oom)
		return;
	if (l->n == l->cap) {
		l->cap = l->cap ? l->cap * 2 : 64;
		ne = realloc(l->ep, l->cap * sizeof(*ne));
		nk = realloc(l->keys, l->cap * sizeof(*nk));
		if (ne != NULL)
			l->ep = ne;
		if (nk != NULL)
			l->keys = nk;
		if (ne == NULL || nk == NULL) {
			l->oom = 1;
			return;
		}
	}
	if ((l->keys[l->n] = strdup(r->key)) == NULL) {
		l->oom = 1;
		return;
	}
	l->ep[l->n++] = l->cur;
}

int
admin_replay(int argc, char **argv)
{
	struct replay_list	 l;
	struct conf		*cf = NULL;
	struct counters		*ctr = NULL;
	struct store		*st;
	const char		*endpoint = NULL, *status = NULL;
	char			 why[512], k[600];
	enum hook_err		 er;
	size_t			 e = 0, j;
	int			 i, dry = 0, nkeys = 0, rc = 0;
	long long		 n;

	if (cmd_helped(argc, argv, replay_usage))
		return 0;
	memset(&l, 0, sizeof(l));
	/* Options anywhere: "replay KEY --dry-run" must not run KEY. */
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--endpoint") == 0 && i + 1 < argc)
			endpoint = argv[++i];
		else if (strcmp(argv[i], "--dry-run") == 0)
			dry = 1;
		else if (strcmp(argv[i], "--failed") == 0)
			status = "failed";
		else if (strcmp(argv[i], "--dead") == 0)
			status = "dead";
		else if (argv[i][0] == '-') {
			fputs(replay_usage, stderr);
			return 2;
		} else
			nkeys++;
	}
	if ((nkeys == 0) == (status == NULL)) {
		fputs(replay_usage, stderr);
		return 2;
	}
	if ((cf = cmd_load("replay", CONF_NEEDS_DB)) == NULL)
		return 2;
	if ((er = store_connect(cf, STORE_LAZY, &st, why, sizeof(why))) !=
	    HOOK_OK) {
		fprintf(stderr, "oncehook replay: %s\n", why);
		conf_free(cf);
		return er == HOOK_ECONF ? 2 : 1;
	}
	if (endpoint != NULL && conf_endpoint_index(cf, endpoint, &e) == -1) {
		fprintf(stderr, "oncehook replay: no endpoint %s\n", endpoint);
		rc = 2;
		goto out;
	}
	if (endpoint == NULL && nkeys > 0 && cf->nendpoints > 1) {
		fprintf(stderr, "oncehook replay: --endpoint is needed\n");
		rc = 2;
		goto out;
	}
	if (endpoint == NULL)
		e = 0;
	if (status != NULL) {
		for (j = 0; j < cf->nendpoints; j++) {
			if (endpoint != NULL && j != e)
				continue;
			l.cur = j;
			if ((n = store_list(st, cf->endpoints[j].name, NULL,
			    status, 1LL << 40, 0, replay_add, &l, why,
			    sizeof(why))) < 0) {
				fprintf(stderr, "oncehook replay: %s\n", why);
				rc = 1;
				goto out;
			}
		}
	} else
		for (i = 1; i < argc && !l.oom; i++) {
			if (strcmp(argv[i], "--endpoint") == 0) {
				i++;
				continue;
			}
			if (argv[i][0] == '-')
				continue;
			l.cur = e;
			replay_add(&l, &(struct store_row){ .key = argv[i] });
		}
	if (l.oom) {
		fprintf(stderr, "oncehook replay: out of memory\n");
		rc = 2;
		goto out;
	}
	if (l.n == 0)
		printf("nothing to replay\n");
	/* Oldest first, as work runs them (the list came newest first). */
	if (status != NULL)
		for (j = 0; j < l.n / 2; j++) {
			char	*tk = l.keys[j];
			size_t	 te = l.ep[j];

			l.keys[j] = l.keys[l.n - 1 - j];
			l.ep[j] = l.ep[l.n - 1 - j];
			l.keys[l.n - 1 - j] = tk;
			l.ep[l.n - 1 - j] = te;
		}
	for (j = 0; j < l.n; j++) {
		const char	*name = cf->endpoints[l.ep[j]].name;

		log_escape(k, sizeof(k), l.keys[j]);
		switch (store_replay(st, l.ep[j], l.keys[j], dry, why,
		    sizeof(why))) {
		case REPLAY_DONE:
			printf("replayed       %s %s\n", name, k);
			if (cf->counters && cf->counters_file != NULL &&
			    ctr == NULL)
				ctr = counters_open(cf->counters_file);
			counters_succeeded(ctr, name, (int64_t)time(NULL));
			break;
		case REPLAY_WOULD:
			printf("would replay   %s %s (%s)\n", name, k, why);
			break;
		case REPLAY_ALREADY:
			printf("processed      %s %s (already; not run again)\n",
			    name, k);
			break;
		case REPLAY_NONE:
			printf("not found      %s %s\n", name, k);
			rc = 1;
			break;
		case REPLAY_FAILED:
			printf("failed again   %s %s: %s\n", name, k, why);
			rc = 1;
			break;
		case REPLAY_ERROR:
			printf("not replayed   %s %s: %s\n", name, k, why);
			rc = 1;
			break;
		}
	}
out:
	for (j = 0; j < l.n; j++)
		free(l.keys[j]);
	free(l.keys);
	free(l.ep);
	counters_close(ctr);
	store_close(st);
	conf_free(cf);
	return rc;
}
