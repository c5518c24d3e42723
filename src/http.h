/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* HTTP POSTs with libcurl, for the exporters to a server (export/exporter.h). */
#ifndef IOTRAIL_HTTP_H
#define IOTRAIL_HTTP_H

#include <stddef.h>

struct it_http;

/* A connection to base_url (http://HOST:PORT), reused by every post. NULL
 * with why in err. */
struct it_http *it_http_open(const char *base_url, char *err, size_t errlen);
/* struct it_export_url's post: conn is a struct it_http. */
int it_http_post(void *conn, const char *query, const void *body, size_t len, char *reply,
		 size_t replylen);
void it_http_close(struct it_http *h);

#endif
