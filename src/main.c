/*
 * oncehook: entry point.  With a command, run it; without one, handle
 * requests: one request as plain CGI, or a FastCGI loop when a process
 * manager (mod_fcgid, lighttpd bin-path, spawn-fcgi) passed a socket on
 * standard input.  The configuration is parsed once here.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "admin.h"
#include "conf.h"
#include "front.h"
#include "log.h"
#include "pipeline.h"
#include "selftest.h"
#include "serve.h"

static const char usage[] =
"usage: oncehook                 handle requests (CGI or FastCGI)\n"
"       oncehook init            create or migrate the database\n"
"       oncehook check           validate the configuration\n"
"       oncehook list [--endpoint NAME] [--limit N]\n"
"       oncehook show [--endpoint NAME] KEY\n"
"       oncehook prune [--dry-run]  delete events past their retention\n"
"       oncehook serve --listen ADDR [--workers N]\n"
"                                serve FastCGI on a socket of its own\n"
"       oncehook sign [--endpoint NAME] [--curl URL] [--id ID]\n"
"                     [--event TYPE] [--time UNIX] FILE\n"
"                                sign a payload to test a deployment\n"
"       oncehook selftest        check the signature schemes\n"
"       oncehook --version\n"
"\n"
"Configured by ONCEHOOK_* environment variables; see oncehook(8).\n";

extern char	**environ;

static int
handle(void)
{
	struct pipeline	 p;
	struct conf	*cf;
	char		 err[512];
	int		 rc, cgi = front_is_cgi();

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
	/*
	 * A FastCGI process with a bad configuration keeps answering 500
	 * (and logging why) rather than exiting into a restart loop.
	 */
	rc = cgi ? front_cgi(&p) : front_fcgi(&p, 0);
	pipeline_clear(&p);
	conf_free(cf);
	return rc;
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
	if (argc > 1) {
		if (strcmp(argv[1], "init") == 0)
			return admin_init(argc - 1, argv + 1);
		if (strcmp(argv[1], "check") == 0)
			return admin_check(argc - 1, argv + 1);
		if (strcmp(argv[1], "list") == 0)
			return admin_list(argc - 1, argv + 1);
		if (strcmp(argv[1], "show") == 0)
			return admin_show(argc - 1, argv + 1);
		if (strcmp(argv[1], "prune") == 0)
			return admin_prune(argc - 1, argv + 1);
		if (strcmp(argv[1], "serve") == 0)
			return serve_main(argc - 1, argv + 1);
		if (strcmp(argv[1], "selftest") == 0)
			return selftest_main(argc - 1, argv + 1);
		if (strcmp(argv[1], "sign") == 0)
			return admin_sign(argc - 1, argv + 1);
		if (strcmp(argv[1], "--version") == 0) {
			printf("oncehook %s\n", PACKAGE_VERSION);
			return 0;
		}
		if (strcmp(argv[1], "--help") == 0 ||
		    strcmp(argv[1], "-h") == 0) {
			fputs(usage, stdout);
			return 0;
		}
		fprintf(stderr, "oncehook: unknown command %s\n%s", argv[1],
		    usage);
		return 2;
	}
	if (front_is_cgi() && getenv("GATEWAY_INTERFACE") == NULL &&
	    getenv("REQUEST_METHOD") == NULL) {
		fputs(usage, stderr);
		return 2;
	}
	return handle();
}
