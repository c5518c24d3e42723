// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * HTTP POSTs with libcurl (http.h): one easy handle, so the connection is
 * kept alive between batches. The server's answer is kept to its first
 * line: ClickHouse puts its exception there ("Code: 60, e.displayText() =
 * DB::Exception: Table x.y doesn't exist."), which is what a user needs.
 */
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "dl.h"
#include "http.h"

/* libcurl, loaded when a server is first named (dl.h): linked, it and its
 * tree of libraries (gnutls, p11-kit, krb5, ldap, nettle, ...) kept 3.7 MB
 * resident in every iotrail process for the two commands that post
 * (export --url, record --sink). The header stays for types and constants. */
static struct {
	CURLcode (*global_init)(long flags);
	CURL *(*easy_init)(void);
	CURLcode (*easy_setopt)(CURL *c, CURLoption option, ...);
	CURLcode (*easy_perform)(CURL *c);
	CURLcode (*easy_getinfo)(CURL *c, CURLINFO info, ...);
	void (*easy_cleanup)(CURL *c);
	const char *(*easy_strerror)(CURLcode rc);
	char *(*easy_escape)(CURL *c, const char *s, int len);
	void (*free)(void *p);
} curl;

static int curl_load(char *err, size_t errlen)
{
	static void *so;
	const struct it_dl_sym syms[] = {
		{ (void **)&curl.global_init, "curl_global_init" },
		{ (void **)&curl.easy_init, "curl_easy_init" },
		{ (void **)&curl.easy_setopt, "curl_easy_setopt" },
		{ (void **)&curl.easy_perform, "curl_easy_perform" },
		{ (void **)&curl.easy_getinfo, "curl_easy_getinfo" },
		{ (void **)&curl.easy_cleanup, "curl_easy_cleanup" },
		{ (void **)&curl.easy_strerror, "curl_easy_strerror" },
		{ (void **)&curl.easy_escape, "curl_easy_escape" },
		{ (void **)&curl.free, "curl_free" },
	};

	return it_dl_load(&so, "libcurl.so.4", "libcurl", "libcurl4", syms,
			  sizeof(syms) / sizeof(syms[0]), err, errlen);
}

struct it_http {
	CURL *c;
	char *base;
	char answer[4096];  /* the first line of the response body */
	size_t alen;
	int line_done;      /* its first line ended */
};

static size_t on_body(char *p, size_t size, size_t n, void *ctx)
{
	struct it_http *h = ctx;
	size_t len = size * n;

	for (size_t i = 0; i < len && !h->line_done && h->alen + 1 < sizeof(h->answer); i++) {
		if (p[i] == '\n')
			h->line_done = h->alen > 0; /* leading newlines skipped */
		else
			h->answer[h->alen++] = p[i];
	}
	return len;
}

struct it_http *it_http_open(const char *base_url, char *err, size_t errlen)
{
	struct it_http *h = calloc(1, sizeof(*h));

	if (strncmp(base_url, "http://", 7) && strncmp(base_url, "https://", 8)) {
		snprintf(err, errlen, "'%s' is not an http:// or https:// URL; give http://HOST:PORT",
			 base_url);
		free(h);
		return NULL;
	}
	if (h && curl_load(err, errlen)) {
		free(h);
		return NULL;
	}
	if (!h || curl.global_init(CURL_GLOBAL_DEFAULT) || !(h->c = curl.easy_init()) ||
	    !(h->base = strdup(base_url))) {
		snprintf(err, errlen, "libcurl could not start (out of memory?)");
		it_http_close(h);
		return NULL;
	}
	/* no trailing slash: the query goes after "/?" */
	size_t n = strlen(h->base);
	while (n > 0 && h->base[n - 1] == '/')
		h->base[--n] = 0;
	curl.easy_setopt(h->c, CURLOPT_WRITEFUNCTION, on_body);
	curl.easy_setopt(h->c, CURLOPT_WRITEDATA, h);
	curl.easy_setopt(h->c, CURLOPT_CONNECTTIMEOUT, 10L);
	curl.easy_setopt(h->c, CURLOPT_NOSIGNAL, 1L);
	/* a server that stops answering is an error, not a hang (record
	 * --sink waits for its last POST before it exits): under a byte a
	 * second for a minute; a big insert answers well within that */
	curl.easy_setopt(h->c, CURLOPT_LOW_SPEED_LIMIT, 1L);
	curl.easy_setopt(h->c, CURLOPT_LOW_SPEED_TIME, 60L);
	return h;
}

int it_http_post(void *conn, const char *query, const void *body, size_t len, char *reply,
		 size_t replylen)
{
	struct it_http *h = conn;
	char *url = NULL, *q = NULL;
	long code = 0;
	CURLcode rc;

	h->alen = 0;
	h->line_done = 0;
	if (query && !(q = curl.easy_escape(h->c, query, 0))) {
		snprintf(reply, replylen, "out of memory");
		return -1;
	}
	if (asprintf(&url, "%s/%s%s", h->base, q ? "?query=" : "", q ? q : "") < 0) {
		curl.free(q);
		snprintf(reply, replylen, "out of memory");
		return -1;
	}
	curl.free(q);
	curl.easy_setopt(h->c, CURLOPT_URL, url);
	curl.easy_setopt(h->c, CURLOPT_POSTFIELDS, body ? (const char *)body : "");
	curl.easy_setopt(h->c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)(body ? len : 0));
	rc = curl.easy_perform(h->c);
	free(url);
	h->answer[h->alen] = 0;
	if (rc != CURLE_OK) {
		snprintf(reply, replylen, "%s: %s", h->base, curl.easy_strerror(rc));
		return -1;
	}
	curl.easy_getinfo(h->c, CURLINFO_RESPONSE_CODE, &code);
	if (code != 200) {
		snprintf(reply, replylen, "the server answered HTTP %ld: %s", code,
			 h->alen ? h->answer : "(no message)");
		return -1;
	}
	snprintf(reply, replylen, "%s", h->answer);
	return 0;
}

void it_http_close(struct it_http *h)
{
	if (!h)
		return;
	if (h->c)
		curl.easy_cleanup(h->c);
	free(h->base);
	free(h);
}
