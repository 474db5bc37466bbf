/* SPDX-License-Identifier: MIT */
/*
 * oncehook: an outbox row to a URL (see outbox/send.h), through the
 * libcurl room (lib/curlapi.h).
 */
#include "config.h"

#include <stdio.h>
#include <string.h>
#include <time.h>

#include "conf.h"
#include "lib/crypto.h"
#include "lib/curlapi.h"
#include "outbox/send.h"

int
send_sign(const struct secret *secret, const struct send_msg *m,
    long long ts, char *out, size_t outsz)
{
	unsigned char		 mac[CRYPTO_SHA256_LEN];
	char			 tss[24];
	struct crypto_piece	 p[5];
	long			 n;

	snprintf(tss, sizeof(tss), "%lld", ts);
	p[0].p = m->id;
	p[0].sz = strlen(m->id);
	p[1].p = ".";
	p[1].sz = 1;
	p[2].p = tss;
	p[2].sz = strlen(tss);
	p[3].p = ".";
	p[3].sz = 1;
	p[4].p = m->payload;
	p[4].sz = m->payloadsz;
	if (outsz < 4 || crypto_hmac_sha256(secret->p, secret->sz, p, 5,
	    mac) == -1)
		return -1;
	memcpy(out, "v1,", 3);
	n = crypto_base64(mac, sizeof(mac), out + 3, outsz - 3);
	crypto_wipe(mac, sizeof(mac));
	return n < 0 ? -1 : 0;
}

/* Drop the response body: only the status matters. */
static size_t
discard(char *p, size_t sz, size_t n, void *arg)
{
	(void)p;
	(void)arg;
	return sz * n;
}

int
send_http(const char *url, const struct secret *secret,
    const struct send_msg *m, long timeout, char *why, size_t whysz)
{
	const struct curl_api	*api;
	struct curl_slist	*h = NULL, *t;
	CURL			*c = NULL;
	CURLcode		 rc;
	long			 code = 0;
	long long		 ts = (long long)time(NULL);
	char			 hdr[3][700], sig[80];
	int			 i, res = -1;

	if (whysz > 0)
		why[0] = '\0';
	if (secret == NULL || secret->p == NULL) {
		snprintf(why, whysz, "ONCEHOOK_OUTBOX_SECRET is not set: a "
		    "URL target's requests are signed with it");
		return -1;
	}
	if ((api = curlapi_load(why, whysz)) == NULL)
		return -1;
	if (send_sign(secret, m, ts, sig, sizeof(sig)) == -1) {
		snprintf(why, whysz, "signing failed");
		return -1;
	}
	snprintf(hdr[0], sizeof(hdr[0]), "webhook-id: %s", m->id);
	snprintf(hdr[1], sizeof(hdr[1]), "webhook-timestamp: %lld", ts);
	snprintf(hdr[2], sizeof(hdr[2]), "webhook-signature: %s", sig);
	if ((t = api->slist_append(h, "Content-Type: application/json")) ==
	    NULL)
		goto oom;
	h = t;
	for (i = 0; i < 3; i++) {
		if ((t = api->slist_append(h, hdr[i])) == NULL)
			goto oom;
		h = t;
	}
	/* "Expect: 100-continue" would cost a round trip on large rows. */
	if ((t = api->slist_append(h, "Expect:")) == NULL)
		goto oom;
	h = t;
	if ((c = api->easy_init()) == NULL)
		goto oom;
	api->easy_setopt(c, CURLOPT_URL, url);
	api->easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	api->easy_setopt(c, CURLOPT_HTTPHEADER, h);
	api->easy_setopt(c, CURLOPT_POST, 1L);
	api->easy_setopt(c, CURLOPT_POSTFIELDS, m->payload);
	api->easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE,
	    (curl_off_t)m->payloadsz);
	api->easy_setopt(c, CURLOPT_USERAGENT, "oncehook/" PACKAGE_VERSION);
	api->easy_setopt(c, CURLOPT_TIMEOUT, timeout);
	api->easy_setopt(c, CURLOPT_CONNECTTIMEOUT, timeout < 10 ?
	    timeout : 10L);
	api->easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	api->easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	api->easy_setopt(c, CURLOPT_WRITEFUNCTION, discard);
	if ((rc = api->easy_perform(c)) != CURLE_OK) {
		snprintf(why, whysz, "POST: %s", api->easy_strerror(rc));
		goto out;
	}
	api->easy_getinfo(c, CURLINFO_RESPONSE_CODE, &code);
	if (code >= 200 && code < 300)
		res = 0;
	else
		snprintf(why, whysz, "POST: HTTP %ld", code);
	goto out;
oom:
	snprintf(why, whysz, "out of memory");
out:
	if (c != NULL)
		api->easy_cleanup(c);
	api->slist_free_all(h);
	crypto_wipe(hdr[2], sizeof(hdr[2]));
	crypto_wipe(sig, sizeof(sig));
	return res;
}
