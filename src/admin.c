/*
 * oncehook: admin commands (see admin.h).  They print to stdout what a
 * person asked for and to stderr what went wrong; never a secret.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "admin.h"
#include "conf.h"
#include "log.h"
#include "sig.h"
#include "store.h"

/* --help for a command: 1 if asked (and printed). */
static int
helped(int argc, char **argv, const char *usage)
{
	if (argc > 1 && (strcmp(argv[1], "--help") == 0 ||
	    strcmp(argv[1], "-h") == 0)) {
		fputs(usage, stdout);
		return 1;
	}
	return 0;
}

/* Load the configuration or say why not. */
static struct conf *
load(const char *cmd)
{
	struct conf	*cf;
	char		 err[512];

	if ((cf = conf_load_env(err, sizeof(err))) == NULL)
		fprintf(stderr, "oncehook %s: %s\n", cmd, err);
	return cf;
}

/* -1 and a message if the database lies inside $DOCUMENT_ROOT. */
static int
docroot_ok(const char *cmd, const struct conf *cf)
{
	const char	*dr = getenv("DOCUMENT_ROOT");

	if (dr != NULL && *dr != '\0' && conf_path_inside(cf->db, dr) == 1) {
		fprintf(stderr, "oncehook %s: ONCEHOOK_DB: %s lies inside "
		    "DOCUMENT_ROOT %s, where the web server could serve it\n",
		    cmd, cf->db, dr);
		return -1;
	}
	return 0;
}

static const char init_usage[] =
"usage: oncehook init\n"
"\n"
"Create the database named by ONCEHOOK_DB (mode 0600) or migrate it to\n"
"this version's schema, and run the setup part of every endpoint's\n"
"actions file (tables such as orders).  Safe to run again.\n";

int
admin_init(int argc, char **argv)
{
	struct conf	*cf;
	struct store	*st;
	char		 err[512];

	if (helped(argc, argv, init_usage))
		return 0;
	if (argc > 1) {
		fputs(init_usage, stderr);
		return 2;
	}
	if ((cf = load("init")) == NULL)
		return 1;
	if (docroot_ok("init", cf) == -1) {
		conf_free(cf);
		return 1;
	}
	if ((st = store_open(cf, STORE_INIT, err, sizeof(err))) == NULL) {
		fprintf(stderr, "oncehook init: %s\n", err);
		conf_free(cf);
		return 1;
	}
	printf("%s: schema version %d, ready\n", cf->db, store_version());
	store_close(st);
	conf_free(cf);
	return 0;
}

static const char check_usage[] =
"usage: oncehook check\n"
"\n"
"Validate the configuration in the environment, open the database and\n"
"prepare every action, and print the endpoints with their schemes,\n"
"key sources and retention.  Secrets are counted, never printed.\n"
"Exit status 0 if all is well, 1 if not.\n";

static void
print_sources(const char *label, const struct srclist *sl)
{
	size_t	 i;

	printf("  %-10s", label);
	for (i = 0; i < sl->n; i++)
		printf(" %s%s%s", sl->v[i].kind == SRC_HEADER ? "header:" :
		    sl->v[i].kind == SRC_JSON ? "json:" : "hash",
		    sl->v[i].arg ? sl->v[i].arg : "", "");
	printf("\n");
}

int
admin_check(int argc, char **argv)
{
	struct conf			*cf;
	const struct conf_endpoint	*ep;
	struct store			*st;
	struct stat			 sb;
	char				 err[512];
	size_t				 i;
	int				 rc = 0;

	if (helped(argc, argv, check_usage))
		return 0;
	if (argc > 1) {
		fputs(check_usage, stderr);
		return 2;
	}
	if ((cf = load("check")) == NULL)
		return 1;
	printf("database   %s\n", cf->db);
	printf("max body   %lld bytes\n", cf->maxbody);
	printf("sync       %s\n", cf->synchronous_full ? "full" : "normal");
	printf("busy       %lld ms\n", cf->busy_ms);
	for (i = 0; i < cf->nendpoints; i++) {
		ep = &cf->endpoints[i];
		printf("endpoint %s%s\n", ep->name,
		    cf->named ? "" : " (unnamed: every path)");
		printf("  scheme     %s\n", ep->scheme->name);
		printf("  secrets    %zu\n", ep->nsecrets);
		if (ep->scheme->timestamped)
			printf("  tolerance  %llds\n", ep->tolerance);
		print_sources("key", &ep->key);
		if (ep->retention < 0)
			printf("  retention  forever\n");
		else
			printf("  retention  %llds\n", ep->retention);
		printf("  actions    %s\n", ep->actions);
	}
	if (docroot_ok("check", cf) == -1)
		rc = 1;
	if (stat(cf->db, &sb) == 0 && (sb.st_mode & 077) != 0)
		fprintf(stderr, "oncehook check: warning: %s is readable by "
		    "others (mode %03o); chmod 600 it\n", cf->db,
		    (unsigned)(sb.st_mode & 0777));
	if ((st = store_open(cf, 0, err, sizeof(err))) == NULL) {
		fprintf(stderr, "oncehook check: %s\n", err);
		rc = 1;
	} else
		printf("database ok: schema version %d, actions prepared\n",
		    store_version());
	store_close(st);
	conf_free(cf);
	return rc;
}
