/* SPDX-License-Identifier: MIT */
/*
 * oncehook: entry point.  With a command, run it; without one, handle
 * requests: one request as plain CGI, or a FastCGI loop when a process
 * manager (mod_fcgid, lighttpd bin-path, spawn-fcgi) passed a socket on
 * standard input.  The configuration is parsed once here.
 */
#include "config.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "cmd/admin.h"
#include "cmd/selftest.h"
#include "conf.h"
#include "front/front.h"
#include "front/serve.h"
#include "lib/log.h"
#include "pipeline/event.h"
#include "pipeline/pipeline.h"
#include "store/sqlite/library.h"
#include "store/store.h"
#include "writer/shared.h"

/*
 * The commands: one row each.  --help, the "unknown command" message
 * and the man page's SYNOPSIS follow this table (tests/docs.sh compares
 * them).  args is the usage after the command name; what says what it
 * does, for the commands whose arguments do not.
 */
struct command {
	const char	*name;
	int		(*fn)(int, char **);
	const char	*args;
	const char	*what;
};

static const struct command commands[] = {
	{ "init", admin_init, "", "create or migrate the database" },
	{ "check", admin_check, "", "validate the configuration" },
	{ "list", admin_list, "[--endpoint NAME | --outbox] [--status STATUS] "
	    "[--limit N]", NULL },
	{ "show", admin_show, "[--endpoint NAME] KEY | --outbox ID", NULL },
	{ "stats", admin_stats, "[--endpoint NAME] [--json] [--prometheus] "
	    "[--check]", "counts, health, and a check for cron" },
	{ "replay", admin_replay, "[--endpoint NAME] [--dry-run] KEY... | "
	    "--failed | --dead", "run failed events' actions again, once" },
	{ "work", admin_work, "[--once] [--max-seconds N]",
	    "run deferred and failed events' actions" },
	{ "deliver", admin_deliver, "[--once] [--max-seconds N] [--retry-dead] "
	    "[--retry-now]",
	    "send the outbox's rows to their targets" },
	{ "prune", admin_prune, "[--dry-run] [--dead]",
	    "delete events past their retention" },
	{ "serve", serve_main,
	    "--listen ADDR [--workers N] [--timeout SECONDS] "
	    "[--no-group-commit] [--no-work] [--no-deliver]",
	    "serve FastCGI on a socket of its own" },
	{ "sign", admin_sign, "[--endpoint NAME] [--curl URL] [--id ID] "
	    "[--event TYPE] [--time UNIX] [--key FILE] [--cert-url URL] FILE",
	    "sign a payload to test a deployment" },
	{ "selftest", selftest_main, "", "check the signature schemes" },
};
#define NCOMMANDS	(sizeof(commands) / sizeof(commands[0]))

/* One usage line: the command, and what it does in a column of its own. */
static void
usage_line(FILE *f, const char *lead, const char *cmd, const char *what)
{
	int	 n;

	n = fprintf(f, "%s %s", lead, cmd);
	if (what == NULL)
		fputc('\n', f);
	else if (n < 38)
		fprintf(f, "%*s%s\n", 39 - n, "", what);
	else
		fprintf(f, "\n%39s%s\n", "", what);
}

static void
usage(FILE *f)
{
	char	 cmd[160];
	size_t	 i;

	usage_line(f, "usage:", "oncehook", "handle requests (CGI or FastCGI)");
	for (i = 0; i < NCOMMANDS; i++) {
		(void)snprintf(cmd, sizeof(cmd), "oncehook %s%s%s",
		    commands[i].name, commands[i].args[0] != '\0' ? " " : "",
		    commands[i].args);
		usage_line(f, "      ", cmd, commands[i].what);
	}
	usage_line(f, "      ", "oncehook --version", NULL);
	fputs("\nConfigured by ONCEHOOK_* environment variables; see "
	    "oncehook(8).  oncehook --env-file FILE COMMAND ... reads them\n"
	    "from FILE first (NAME=value lines, as systemd's EnvironmentFile=;\n"
	    "the environment wins), for cron and timers.\n", f);
}

extern char	**environ;

static int
handle(void)
{
	struct pipeline		 p;
	struct sharedwriter	 sw;
	struct conf		*cf;
	char			 err[512];
	int			 rc, cgi = front_is_cgi();

	if ((cf = conf_load_env(err, sizeof(err))) == NULL)
		log_error("configuration: %s", err);
	else {
		log_setlevel(cf->loglevel);
		/* Once per process: a CGI request would say it every time. */
		if (!cgi)
			(void)conf_warnings(cf, (const char *const *)environ,
			    log_warn_cb, (void *)"configuration: ");
	}
	pipeline_init(&p, cf, err);
	/* Group commit (writer/shared.h); a CGI process keeps its texts
	 * only when it looks for a writer. */
	if (cf != NULL) {
		/* The texts first: the writer's name is made of them
		 * (writer/shared.h). */
		if (!cgi)
			store_keep_actions(cf);
		sharedwriter_init(&sw, cf, cgi);
		pipeline_claim_through(&p, sharedwriter_claim,
		    sharedwriter_hands, &sw);
	}
	front_explain_faults();
	/*
	 * A FastCGI process with a bad configuration keeps answering 500
	 * (and logging why) rather than exiting into a restart loop.
	 */
	rc = cgi ? front_cgi(&p) : front_fcgi(&p, 0);
	pipeline_clear(&p);
	if (cf != NULL)
		sharedwriter_close(&sw);
	conf_free(cf);
	return rc;
}

/*
 * --env-file FILE: the variables of FILE, as systemd's EnvironmentFile=
 * reads them (one NAME=value a line; a value in double quotes loses
 * them; no shell expansion: a secret may hold $, ` or \), for cron and
 * timers.  A variable already in the environment wins.  0, or -1 after
 * a message naming the file and line.
 */
static int
env_file(const char *path)
{
	FILE	*f;
	char	 line[8192], *v, *e;
	size_t	 len, n = 0;

	if ((f = fopen(path, "r")) == NULL) {
		fprintf(stderr, "oncehook: --env-file %s: %s\n", path,
		    strerror(errno));
		return -1;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		n++;
		len = strcspn(line, "\r\n");
		if (line[len] == '\0' && !feof(f)) {
			fprintf(stderr, "oncehook: %s:%zu: line too long\n",
			    path, n);
			fclose(f);
			return -1;
		}
		line[len] = '\0';
		for (v = line; *v == ' ' || *v == '\t'; v++)
			;
		if (*v == '\0' || *v == '#')
			continue;
		if ((e = strchr(v, '=')) == NULL || e == v ||
		    strspn(v, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
		    "0123456789_") != (size_t)(e - v)) {
			fprintf(stderr, "oncehook: %s:%zu: want NAME=value\n",
			    path, n);
			fclose(f);
			return -1;
		}
		*e++ = '\0';
		len = strlen(e);
		/* Quotes close on their line: a PEM block pasted with its
		 * lines would otherwise fail at its second line, unnamed. */
		if (e[0] == '"' && (len < 2 || e[len - 1] != '"')) {
			fprintf(stderr, "oncehook: %s:%zu: %s: the value's "
			    "double quote is not closed on its line (a PEM "
			    "key goes on one line: \"-----BEGIN PUBLIC "
			    "KEY----- ... -----END PUBLIC KEY-----\")\n",
			    path, n, v);
			fclose(f);
			return -1;
		}
		if (len >= 2 && e[0] == '"' && e[len - 1] == '"') {
			e[len - 1] = '\0';
			e++;
		}
		if (setenv(v, e, 0) == -1) {
			fprintf(stderr, "oncehook: %s:%zu: %s\n", path, n,
			    strerror(errno));
			fclose(f);
			return -1;
		}
	}
	fclose(f);
	return 0;
}

/*
 * The configuration holds secrets: no core file may ever carry them.
 * Both limits go to zero, so nothing later in the process can raise
 * them again.
 */
static void
no_core(void)
{
	struct rlimit	 rl = { 0, 0 };

	(void)setrlimit(RLIMIT_CORE, &rl);
}

int
main(int argc, char **argv)
{
	no_core();
	store_process_init();
	if (argc > 2 && strcmp(argv[1], "--env-file") == 0) {
		if (env_file(argv[2]) == -1)
			return 2;
		argv[2] = argv[0];
		argv += 2;
		argc -= 2;
	}
	/* Not a command: how a FastCGI or CGI process starts its writer. */
	if (argc == 2 && strcmp(argv[1], SHAREDWRITER_ARG) == 0)
		return sharedwriter_main(0);
	if (argc == 3 && strcmp(argv[1], SHAREDWRITER_ARG) == 0 &&
	    strcmp(argv[2], SHAREDWRITER_CGI) == 0)
		return sharedwriter_main(1);
	if (argc > 1) {
		size_t	 i;

		for (i = 0; i < NCOMMANDS; i++)
			if (strcmp(argv[1], commands[i].name) == 0)
				return commands[i].fn(argc - 1, argv + 1);
		if (strcmp(argv[1], "--version") == 0) {
			/* Whose security updates reach this binary. */
			printf("oncehook %s\nCopyright (c) 2026 the oncehook "
			    "authors; MIT licence (LICENSE)\n"
			    "SQLite %s, jansson %s and libfcgi: "
			    "%s\n", PACKAGE_VERSION, sqlite_library_version(),
			    event_jansson_version(),
#ifdef STATIC_LIBS
			    "linked in (their security updates need oncehook "
			    "rebuilt)"
#else
			    "the system's shared libraries"
#endif
			    );
			return 0;
		}
		if (strcmp(argv[1], "--help") == 0 ||
		    strcmp(argv[1], "-h") == 0) {
			usage(stdout);
			return 0;
		}
		fprintf(stderr, "oncehook: unknown command %s\n", argv[1]);
		usage(stderr);
		return 2;
	}
	if (front_is_cgi() && getenv("GATEWAY_INTERFACE") == NULL &&
	    getenv("REQUEST_METHOD") == NULL) {
		usage(stderr);
		return 2;
	}
	return handle();
}
