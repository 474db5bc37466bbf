/* SPDX-License-Identifier: MIT */
/*
 * oncehook tests: the documentation's variable tables against the
 * configuration table (conf_vars[] in src/conf.c).
 *
 * docs/configuration.md's table under "## Variables" must list exactly the
 * table's variables, each with the table's meaning and default; the man
 * page's ENVIRONMENT section must name exactly the same variables, say
 * "Required." for the required ones and "Default X." for each plain
 * default.  Adding a variable is a row in conf.c; this test says which
 * documents still miss it.
 */
#include "config.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "tap.h"

#define DOC_MAX	(256 * 1024)

static char *
slurp(const char *rel)
{
	char	 path[1024];
	char	*buf;
	FILE	*f;
	size_t	 n;

	snprintf(path, sizeof(path), "%s/%s", tap_srcdir(), rel);
	if ((f = fopen(path, "r")) == NULL)
		BAIL("cannot open %s", path);
	if ((buf = malloc(DOC_MAX + 1)) == NULL)
		BAIL("out of memory");
	n = fread(buf, 1, DOC_MAX, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

/*
 * The row that a documented name stands for: "ONCEHOOK_<NAME>_X" (or
 * as the man page writes it, "ONCEHOOK_ Ns Ar NAME Ns Ev _X") is the
 * endpoint row X, "ONCEHOOK_X" the global row X.
 */
static const struct conf_var *
row_of(const char *doc)
{
	const struct conf_var	*cv;
	enum conf_scope		 scope = CONF_GLOBAL;
	const char		*name = doc + strlen("ONCEHOOK_");

	if (strncmp(doc, "ONCEHOOK_<NAME>_", 16) == 0) {
		scope = CONF_ENDPOINT;
		name = doc + 16;
	}
	for (cv = conf_vars; cv->name != NULL; cv++)
		if (cv->scope == scope && strcmp(cv->name, name) == 0)
			return cv;
	return NULL;
}

/* 1 if name, with its placeholder (e.g. "<TOPIC>") made a topic, is a
 * variable of the outbox's targets (conf_outbox_var()). */
static int
outbox_pattern(const char *name, const char *placeholder)
{
	char		 v[256];
	const char	*p;

	if ((p = strstr(name, placeholder)) == NULL)
		return 0;
	snprintf(v, sizeof(v), "%.*sORDER_PAID%s", (int)(p - name), name,
	    p + strlen(placeholder));
	return conf_outbox_var(v, strlen(v));
}

static void
trim(char *s)
{
	size_t	 n = strlen(s), i = 0;

	while (n > 0 && s[n - 1] == ' ')
		s[--n] = '\0';
	while (s[i] == ' ')
		i++;
	memmove(s, s + i, n - i + 1);
}

/* The configuration guide's variable table. */
static void
test_readme(void)
{
	const struct conf_var	*cv;
	char			*doc = slurp("docs/configuration.md"), *p, *end,
				*line;
	char			 cell[3][512];
	int			 seen[64] = { 0 }, rows = 0, i, k;
	int			 outbox_rows = 0;

	if ((p = strstr(doc, "\n## Variables\n")) == NULL)
		BAIL("docs/configuration.md has no Variables section");
	if ((end = strstr(p + 1, "\n## ")) != NULL)
		*end = '\0';
	for (line = strtok(p, "\n"); line != NULL; line = strtok(NULL, "\n")) {
		if (strncmp(line, "| `ONCEHOOK_", 12) != 0)
			continue;
		/* | `VAR` | meaning | default | */
		for (k = 0; k < 3; k++) {
			char	*bar = strchr(line + 1, '|');
			size_t	 len;

			if (bar == NULL)
				break;
			len = (size_t)(bar - line - 1);
			if (len >= sizeof(cell[k]))
				len = sizeof(cell[k]) - 1;
			memcpy(cell[k], line + 1, len);
			cell[k][len] = '\0';
			trim(cell[k]);
			line = bar;
		}
		if (k < 3)
			continue;
		rows++;
		cell[0][strlen(cell[0]) - 1] = '\0';	/* the backquotes */
		if (outbox_pattern(cell[0] + 1, "<TOPIC>")) {
			outbox_rows++;
			continue;
		}
		cv = row_of(cell[0] + 1);
		CHECK(cv != NULL, "configuration.md: %s is a variable oncehook reads",
		    cell[0] + 1);
		if (cv == NULL)
			continue;
		seen[cv - conf_vars]++;
		CHECK(strcmp(cell[1], cv->doc) == 0, "configuration.md: %s "
		    "means what conf.c says (guide \"%s\", conf.c \"%s\")",
		    cell[0] + 1,
		    cell[1], cv->doc);
		CHECK(strcmp(cell[2], cv->defdoc) == 0, "configuration.md: %s "
		    "defaults to %s as conf.c says (guide %s)", cell[0] + 1,
		    cv->defdoc, cell[2]);
	}
	for (cv = conf_vars, i = 0; cv->name != NULL; cv++, i++)
		CHECK(seen[i] == 1, "configuration.md: %s%s listed once (%d)",
		    cv->scope == CONF_GLOBAL ? "ONCEHOOK_" : "ONCEHOOK_<NAME>_",
		    cv->name, seen[i]);
	CHECK(rows > 0, "configuration.md: the variable table was found (%d rows)",
	    rows);
	CHECK(outbox_rows == 2, "configuration.md: the outbox's target variables, "
	    "_COMMAND and _URL, are listed (%d)", outbox_rows);
	free(doc);
}

/* The man page's ENVIRONMENT section. */
static void
test_man(void)
{
	const struct conf_var	*cv;
	char			*doc = slurp("man/oncehook.8"), *p, *end, *e;
	char			 name[128], want[128], entry[2048];
	int			 seen[64] = { 0 }, i;
	size_t			 len;

	if ((p = strstr(doc, "\n.Sh ENVIRONMENT\n")) == NULL)
		BAIL("oncehook.8 has no ENVIRONMENT section");
	if ((end = strstr(p + 1, "\n.Sh ")) != NULL)
		*end = '\0';
	while ((p = strstr(p, "\n.It Ev ")) != NULL) {
		p += 8;
		len = strcspn(p, "\n");
		snprintf(name, sizeof(name), "%.*s", (int)len, p);
		/* ONCEHOOK_ Ns Ar NAME Ns Ev _X */
		if (strncmp(name, "ONCEHOOK_ Ns Ar NAME Ns Ev _", 28) == 0)
			snprintf(want, sizeof(want), "ONCEHOOK_<NAME>_%s",
			    name + 28);
		else
			snprintf(want, sizeof(want), "%s", name);
		e = strstr(p, "\n.It ");
		snprintf(entry, sizeof(entry), "%.*s",
		    (int)(e != NULL ? (size_t)(e - p) : strlen(p)), p);
		/* The outbox's targets: one entry for both. */
		if (strcmp(want, "ONCEHOOK_OUTBOX_ Ns Ar TOPIC Ns Ev _COMMAND , "
		    "ONCEHOOK_OUTBOX_ Ns Ar TOPIC Ns Ev _URL") == 0) {
			CHECK(outbox_pattern("ONCEHOOK_OUTBOX_<TOPIC>_COMMAND",
			    "<TOPIC>") && outbox_pattern(
			    "ONCEHOOK_OUTBOX_<TOPIC>_URL", "<TOPIC>"),
			    "man: the outbox's target variables are ones "
			    "oncehook reads");
			continue;
		}
		cv = row_of(want);
		CHECK(cv != NULL, "man: %s is a variable oncehook reads",
		    want);
		if (cv == NULL)
			continue;
		seen[cv - conf_vars]++;
		if (cv->flags & CONF_REQUIRED)
			CHECK(strstr(entry, "Required.") != NULL,
			    "man: %s says it is required", want);
		if (cv->def != NULL && strchr(cv->defdoc, ' ') == NULL) {
			char	 d[64];
			size_t	 j, k = 0;

			for (j = 0; cv->defdoc[j] != '\0' && k + 1 < sizeof(d);
			    j++)
				if (cv->defdoc[j] != '`')
					d[k++] = cv->defdoc[j];
			d[k] = '\0';
			snprintf(name, sizeof(name), "Default %s.", d);
			CHECK(strstr(entry, name) != NULL, "man: %s says "
			    "\"%s\"", want, name);
		}
	}
	for (cv = conf_vars, i = 0; cv->name != NULL; cv++, i++)
		CHECK(seen[i] == 1, "man: %s%s listed once (%d)",
		    cv->scope == CONF_GLOBAL ? "ONCEHOOK_" : "ONCEHOOK_<NAME>_",
		    cv->name, seen[i]);
	free(doc);
}

int
main(void)
{
	test_readme();
	test_man();
	return tap_done();
}
