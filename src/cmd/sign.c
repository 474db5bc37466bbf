/* SPDX-License-Identifier: MIT */
/*
 * oncehook: `oncehook sign`: a payload signed as the endpoint's provider
 * signs it, to test a deployment.
 */
#include "config.h"

#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "cmd/admin.h"
#include "cmd/common.h"
#include "conf.h"
#include "lib/crypto.h"
#include "pipeline/event.h"
#include "pipeline/sig.h"
#include "pipeline/sigkit.h"

static const char sign_usage[] =
"usage: oncehook sign [--endpoint NAME] [--curl URL] [--id ID]\n"
"                     [--event TYPE] [--time UNIX] [--key FILE]\n"
"                     [--cert-url URL] FILE\n"
"\n"
"Sign the JSON in FILE (- for standard input) the way the endpoint's\n"
"provider does, with its first secret and the current time, and print\n"
"the headers to send, or with --curl a ready curl command line.\n"
"--id sets the delivery id for schemes that send one in a header (random\n"
"otherwise; give the same id twice to send a duplicate; for hmac-sha256\n"
"it becomes X-Idempotency-Key, else the body's id is the key; schemes\n"
"whose key is in the body ignore it), --event the type for schemes that\n"
"carry it in a header\n"
"(github, shopify, gitlab, woocommerce, linear), --time the timestamp\n"
"(sent in milliseconds by webflow and cashfree).  For gitlab the header\n"
"is the secret itself; for basic, the Authorization header.  For linear\n"
"the time is the body's own webhookTimestamp (Unix milliseconds), which\n"
"FILE must carry.  For mailgun, which signs inside the body, FILE is a\n"
"JSON object without \"signature\" and the body to send is printed after\n"
"the headers and an empty line (--id is its token).  For twilio FILE is\n"
"the form as Twilio posts it (Name=value&...) and --id the\n"
"I-Twilio-Idempotency-Token; twilio and square sign the endpoint's\n"
"ONCEHOOK_<NAME>_URL.  For adyen FILE is the batch, each item with an\n"
"additionalData object ({} will do) and no hmacSignature; the body to\n"
"send, each item signed there, is printed after an empty line.\n"
"The public-key schemes (discord, telnyx, sendgrid, paypal) sign with the\n"
"private key in --key FILE: PEM (unencrypted), or an Ed25519 seed (whsk_,\n"
"hex or base64); standard signs v1a with one, v1 with its whsec_ secret\n"
"without.  paypal signs with the endpoint's first webhook id and sends\n"
"--cert-url as PAYPAL-CERT-URL: the certificate of that key, fetched only\n"
"from ONCEHOOK_TEST_CERT_HOSTS (a test set-up: see docs/providers.md).\n";

#define SIGN_BODY_MAX	(64 << 20)	/* bytes */

/* Read FILE (or stdin for "-") into a new buffer; NULL on error. */
static char *
read_file(const char *path, size_t *sz)
{
	FILE	*f;
	char	*buf, *nb;
	size_t	 cap = 65536, len = 0, n;

	if ((f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb")) ==
	    NULL) {
		fprintf(stderr, "oncehook sign: %s: %s\n", path,
		    strerror(errno));
		return NULL;
	}
	if ((buf = malloc(cap)) == NULL)
		goto fail;
	while ((n = fread(buf + len, 1, cap - len, f)) > 0) {
		len += n;
		if (len == cap) {
			if (cap >= SIGN_BODY_MAX ||
			    (nb = realloc(buf, cap * 2)) == NULL)
				goto fail;
			buf = nb;
			cap *= 2;
		}
	}
	if (ferror(f))
		goto fail;
	if (f != stdin)
		fclose(f);
	*sz = len;
	return buf;
fail:
	fprintf(stderr, "oncehook sign: %s: cannot read it\n", path);
	free(buf);
	if (f != stdin)
		fclose(f);
	return NULL;
}

/* Print the n bytes at s single-quoted for a POSIX shell. */
static void
shell_quote_n(const char *s, size_t n)
{
	putchar('\'');
	for (; n > 0; s++, n--)
		if (*s == '\'')
			fputs("'\\''", stdout);
		else
			putchar(*s);
	putchar('\'');
}

/* Print the string s single-quoted for a POSIX shell. */
static void
shell_quote(const char *s)
{
	shell_quote_n(s, strlen(s));
}

/* What `sign` was asked to do. */
struct sign_args {
	const char	*endpoint;	/* --endpoint, or NULL */
	const char	*curl;		/* --curl URL, or NULL */
	const char	*file;		/* FILE, or "-" */
	const char	*id;		/* --id, or NULL */
	const char	*event;		/* --event, or NULL */
	const char	*key;		/* --key FILE, or NULL */
	const char	*cert_url;	/* --cert-url URL, or NULL */
	long long	 t;		/* --time, or -1 */
};

/* Parse sign's command line; 0, or 2 after a usage message. */
static int
sign_parse(int argc, char **argv, struct sign_args *a)
{
	char	*end;
	int	 i;

	memset(a, 0, sizeof(*a));
	a->t = -1;
	for (i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--endpoint") == 0 && i + 1 < argc)
			a->endpoint = argv[++i];
		else if (strcmp(argv[i], "--curl") == 0 && i + 1 < argc)
			a->curl = argv[++i];
		else if (strcmp(argv[i], "--id") == 0 && i + 1 < argc)
			a->id = argv[++i];
		else if (strcmp(argv[i], "--event") == 0 && i + 1 < argc)
			a->event = argv[++i];
		else if (strcmp(argv[i], "--key") == 0 && i + 1 < argc)
			a->key = argv[++i];
		else if (strcmp(argv[i], "--cert-url") == 0 && i + 1 < argc)
			a->cert_url = argv[++i];
		else if (strcmp(argv[i], "--time") == 0 && i + 1 < argc) {
			errno = 0;
			a->t = strtoll(argv[++i], &end, 10);
			if (errno != 0 || *end != '\0' || a->t < 0) {
				fprintf(stderr, "oncehook sign: --time wants "
				    "Unix seconds\n");
				return 2;
			}
		} else if (a->file == NULL && (argv[i][0] != '-' ||
		    strcmp(argv[i], "-") == 0))
			a->file = argv[i];
		else
			break;
	}
	if (i < argc || a->file == NULL || (a->id != NULL &&
	    (*a->id == '\0' || strlen(a->id) > 200))) {
		fputs(sign_usage, stderr);
		return 2;
	}
	/* What the endpoint would refuse (400) is not signed. */
	if ((a->id != NULL && event_text(a->id, 200) != EVENT_TEXT_OK) ||
	    (a->event != NULL &&
	    event_text(a->event, EVENT_TYPE_MAX) != EVENT_TEXT_OK)) {
		fputs("oncehook sign: --id and --event want UTF-8 text "
		    "without control characters\n", stderr);
		return 2;
	}
	return 0;
}

/* The private key in the file at path into k: 0, or -1 after a message. */
static int
sign_key(const char *path, struct secret *k)
{
	char	 err[200], *text;
	size_t	 sz;
	int	 rc;

	if ((text = read_file(path, &sz)) == NULL)
		return -1;
	while (sz > 0 && (text[sz - 1] == '\n' || text[sz - 1] == '\r' ||
	    text[sz - 1] == ' '))
		sz--;
	text[sz] = '\0';	/* read_file() leaves room: it grows at full */
	if ((rc = sigpub_private(text, k, err, sizeof(err))) == -1)
		fprintf(stderr, "oncehook sign: %s: %s\n", path, err);
	crypto_wipe(text, sz);
	free(text);
	return rc;
}

/* The endpoint to sign for, with a usable secret; NULL after a message. */
static const struct conf_endpoint *
sign_endpoint(const struct conf *cf, const char *name)
{
	const struct conf_endpoint	*ep = NULL;
	size_t				 i;

	if (name == NULL && cf->named && cf->nendpoints > 1) {
		fprintf(stderr, "oncehook sign: --endpoint: one of");
		for (i = 0; i < cf->nendpoints; i++)
			fprintf(stderr, " %s", cf->endpoints[i].name);
		fprintf(stderr, "\n");
		return NULL;
	}
	for (i = 0; i < cf->nendpoints && ep == NULL; i++)
		if (name == NULL || strcmp(cf->endpoints[i].name, name) == 0)
			ep = &cf->endpoints[i];
	if (ep == NULL) {
		fprintf(stderr, "oncehook sign: no endpoint %s\n", name);
		return NULL;
	}
	if (ep->nsecrets == 0) {
		fprintf(stderr, "oncehook sign: endpoint %s has no usable "
		    "secret%s\n", ep->name, ep->placeholder ? " (only the "
		    "example's placeholder)" : "");
		return NULL;
	}
	return ep;
}

/*
 * Print the signed headers, or a curl command line sending the file.
 * The body is JSON unless the scheme names its own Content-Type
 * (twilio's forms).
 */
static void
sign_print(const struct sig_out *out, const struct sign_args *a)
{
	char	 line[PATH_MAX + 8], abs[PATH_MAX];
	size_t	 i;
	int	 typed = 0;

	for (i = 0; i < out->n; i++)
		typed |= strcasecmp(out->h[i].name, "Content-Type") == 0;
	if (a->curl == NULL) {
		if (!typed)
			printf("Content-Type: application/json\n");
		for (i = 0; i < out->n; i++)
			printf("%s: %s\n", out->h[i].name, out->h[i].value);
		if (out->body != NULL) {
			printf("\n");
			fwrite(out->body, 1, out->bodysz, stdout);
			printf("\n");
		}
		return;
	}
	printf("curl -sS -X POST%s", typed ? "" :
	    " -H 'Content-Type: application/json'");
	for (i = 0; i < out->n; i++) {
		snprintf(line, sizeof(line), "%s: %s", out->h[i].name,
		    out->h[i].value);
		printf(" -H ");
		shell_quote(line);
	}
	printf(" --data-binary ");
	if (out->body != NULL)
		shell_quote_n(out->body, out->bodysz);	/* not a C string */
	else if (strcmp(a->file, "-") == 0)
		printf("@-");
	else {
		/* Absolute, so the line works from anywhere. */
		if (realpath(a->file, abs) == NULL)
			snprintf(abs, sizeof(abs), "%s", a->file);
		snprintf(line, sizeof(line), "@%s", abs);
		shell_quote(line);
	}
	printf(" ");
	shell_quote(a->curl);
	printf("\n");
}

int
admin_sign(int argc, char **argv)
{
	struct conf			*cf = NULL;
	const struct conf_endpoint	*ep;
	struct sign_args		 a;
	struct sig_msg			 m;
	struct sig_out			 out;
	struct secret			 key = { NULL, 0, SECRET_MAC };
	unsigned char			 rnd[12];
	char				 id[40];
	char				*body = NULL;
	size_t				 bodysz = 0;
	int				 rc = 1;

	if (cmd_helped(argc, argv, sign_usage))
		return 0;
	if ((rc = sign_parse(argc, argv, &a)) != 0)
		return rc;
	rc = 1;
	memset(&out, 0, sizeof(out));
	if ((cf = cmd_load("sign", CONF_NEEDS_SECRETS)) == NULL)
		return 1;
	if ((ep = sign_endpoint(cf, a.endpoint)) == NULL ||
	    (body = read_file(a.file, &bodysz)) == NULL ||
	    (a.key != NULL && sign_key(a.key, &key) == -1))
		goto out;
	if (a.key == NULL && (ep->scheme->flags & SCHEME_PUBLIC_KEY)) {
		fprintf(stderr, "oncehook sign: %s signs with a private key: "
		    "give it with --key FILE\n", ep->scheme->name);
		goto out;
	}
	memset(&m, 0, sizeof(m));
	m.id = a.id;
	m.event = a.event;
	m.cert_url = a.cert_url;
	m.id_given = m.id != NULL;
	if (m.id == NULL) {
		if (crypto_random(rnd, sizeof(rnd)) == -1)
			goto out;
		memcpy(id, "msg_", 4);
		crypto_hex(rnd, sizeof(rnd), id + 4);
		m.id = id;
	}
	m.body = body;
	m.bodysz = bodysz;
	m.now = a.t >= 0 ? (time_t)a.t : time(NULL);
	if (sig_sign(ep, a.key != NULL ? &key : NULL, &m, &out) == -1) {
		fprintf(stderr, "oncehook sign: signing failed%s\n",
		    strcmp(ep->scheme->name, "mailgun") == 0 ? " (mailgun: "
		    "FILE must be a JSON object without \"signature\", the "
		    "--id plain text)" : strcmp(ep->scheme->name, "basic") ==
		    0 ? " (basic: user:password too long for one header)" :
		    "");
		goto out;
	}
	sign_print(&out, &a);
	rc = 0;
out:
	free(out.body);
	crypto_wipe(&out, sizeof(out));
	if (key.p != NULL) {
		crypto_wipe(key.p, key.sz);
		free(key.p);
	}
	free(body);
	conf_free(cf);
	return rc;
}
