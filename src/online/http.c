// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The head of an HTTP/1.x request, checked as RFC 9112 asks of a server:
 * request-line = method SP request-target SP HTTP-version, then field lines
 * "name: value" (a token, a colon with no space before it), then an empty
 * line. A bare LF is taken as a line end (RFC 9112 §2.2 allows it); a bare
 * CR, a control character, a field line that starts with white space
 * (obsolete folding) or a missing Host are 400. Nothing is copied: the
 * parser only reads the buffer it is given.
 */
#include <stdbool.h>
#include <string.h>
#include <strings.h>

#include "online/http.h"

#define MAX_TARGET 1024

static bool is_tchar(char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       (c && strchr("!#$%&'*+-.^_`|~", c));
}

/* The end of the line at p (its LF), or NULL when buf holds none yet. */
static const char *line_end(const char *p, const char *end)
{
	return memchr(p, '\n', (size_t)(end - p));
}

/* The line [p, lf) without its CR; false for a CR or NUL inside it. */
static bool line_clean(const char *p, const char **lf)
{
	const char *e = *lf;

	if (e > p && e[-1] == '\r')
		e--;
	for (const char *q = p; q < e; q++)
		if (*q == '\r' || *q == '\0')
			return false;
	*lf = e;
	return true;
}

static int request_line(const char *p, const char *e, int *head_only)
{
	const char *sp1, *sp2, *target;
	size_t mlen, tlen, qlen;

	sp1 = memchr(p, ' ', (size_t)(e - p));
	if (!sp1 || sp1 == p)
		return 400;
	for (const char *q = p; q < sp1; q++)
		if (!is_tchar(*q))
			return 400;
	target = sp1 + 1;
	sp2 = memchr(target, ' ', (size_t)(e - target));
	if (!sp2 || sp2 == target)
		return 400;
	for (const char *q = target; q < sp2; q++)
		if ((unsigned char)*q <= ' ' || *q == 0x7f)
			return 400;
	/* the version: exactly "HTTP/" DIGIT "." DIGIT */
	if (e - (sp2 + 1) != 8 || memcmp(sp2 + 1, "HTTP/", 5) || sp2[7] != '.' ||
	    sp2[6] < '0' || sp2[6] > '9' || sp2[8] < '0' || sp2[8] > '9')
		return 400;
	if (sp2[6] != '1')
		return 505;
	tlen = (size_t)(sp2 - target);
	if (tlen > MAX_TARGET)
		return 414;
	mlen = (size_t)(sp1 - p);
	*head_only = mlen == 4 && !memcmp(p, "HEAD", 4);
	if (!*head_only && !(mlen == 3 && !memcmp(p, "GET", 3)))
		return 405;
	if (target[0] != '/')
		return 400; /* origin-form only: a proxy's absolute-form is not for us */
	for (qlen = 0; qlen < tlen && target[qlen] != '?'; qlen++)
		;
	return qlen == 8 && !memcmp(target, "/metrics", 8) ? 200 : 404;
}

static int field_line(const char *p, const char *e, bool *host)
{
	const char *colon = memchr(p, ':', (size_t)(e - p));

	if (!colon || colon == p)
		return 400;
	for (const char *q = p; q < colon; q++)
		if (!is_tchar(*q))
			return 400; /* also a space before the colon, and folding */
	if (colon - p == 4 && !strncasecmp(p, "host", 4)) {
		if (*host)
			return 400; /* two Host fields */
		*host = true;
	}
	return 0;
}

int ol_http_parse(const char *buf, size_t len, int *head_only)
{
	const char *p = buf, *end = buf + len, *lf, *e;
	bool host = false, http10;
	int status;

	*head_only = 0;
	/* a server should ignore empty lines before the request line */
	while (p < end && (*p == '\n' || (*p == '\r' && p + 1 < end && p[1] == '\n')))
		p += *p == '\r' ? 2 : 1;
	lf = line_end(p, end);
	if (!lf)
		return len >= OL_HTTP_MAX_HEAD ? 431 : 0;
	e = lf;
	if (!line_clean(p, &e))
		return 400;
	status = request_line(p, e, head_only);
	if (status == 400 || status == 505)
		return status;
	http10 = e[-1] == '0';
	for (p = lf + 1;; p = lf + 1) {
		int bad;

		lf = line_end(p, end);
		if (!lf)
			return len >= OL_HTTP_MAX_HEAD ? 431 : 0;
		e = lf;
		if (!line_clean(p, &e))
			return 400;
		if (e == p)
			break; /* the empty line: the head is complete */
		bad = field_line(p, e, &host);
		if (bad)
			return bad;
	}
	if (!host && !http10)
		return 400; /* RFC 9112 §3.2: a 1.1 request without Host */
	return status;
}

const char *ol_http_reason(int status)
{
	switch (status) {
	case 200: return "OK";
	case 400: return "Bad Request";
	case 404: return "Not Found";
	case 405: return "Method Not Allowed";
	case 408: return "Request Timeout";
	case 414: return "URI Too Long";
	case 431: return "Request Header Fields Too Large";
	case 500: return "Internal Server Error";
	case 505: return "HTTP Version Not Supported";
	default: return "Error";
	}
}
