/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The request parser of `iotrail serve`'s HTTP/1.1 server (RFC 9112):
 * pure C, fuzzed (tests/fuzz/fuzz_http.c). The server answers one request
 * per connection and closes it, so only the head is read: the request
 * line and the header fields up to the empty line.
 */
#ifndef IOTRAIL_ONLINE_HTTP_H
#define IOTRAIL_ONLINE_HTTP_H

#include <stddef.h>

#define OL_HTTP_MAX_HEAD 8192 /* a longer head is answered 431 */

/* The status to answer the head in buf[0..len): 0 while it is incomplete
 * (read more), 200 for GET (or HEAD) /metrics, else the error status:
 * 400 malformed or without Host, 404 another path, 405 another method,
 * 414 a target too long, 431 a head too long, 505 not HTTP/1.x. *head_only
 * is set for HEAD. */
int ol_http_parse(const char *buf, size_t len, int *head_only);

const char *ol_http_reason(int status);

#endif
