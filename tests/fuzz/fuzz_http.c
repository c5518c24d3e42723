// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libFuzzer target: iotrail serve's HTTP request parser (src/online/http.c)
 * on any bytes, given exactly as they arrived (no terminating NUL: the
 * parser must not read past them). Its answer must be one the server
 * knows. Seeds in corpus/http.
 */
#include "online/http.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *buf;
	int head_only, status;

	if (size > OL_HTTP_MAX_HEAD)
		return 0;
	buf = malloc(size ? size : 1); /* exactly size bytes: ASan sees an overread */
	if (!buf)
		return 0;
	memcpy(buf, data, size);
	status = ol_http_parse(buf, size, &head_only);
	switch (status) {
	case 0: case 200: case 400: case 404: case 405: case 414: case 431: case 505:
		break;
	default:
		abort();
	}
	free(buf);
	return 0;
}
