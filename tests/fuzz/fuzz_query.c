// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libFuzzer target: the query instructions' text parser (src/agent/query.c,
 * what `iotrail query` takes from its command line) on any bytes. What it
 * accepts must encode into a message the frame parser takes back field for
 * field, and a STORE's setting must apply (or be refused) without harm.
 * Seeds in corpus/query.
 */
#include "agent/query.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t out[IT_AGENT_HDR + IT_AGENT_MAX_MSG];
	struct it_agent_msg m, back;
	struct it_query_settings set;
	char text[512], err[400];
	uint32_t code;
	size_t n;

	if (size >= sizeof(text))
		return 0;
	memcpy(text, data, size);
	text[size] = '\0';
	if (it_query_parse(text, &m, err, sizeof(err)))
		return 0;
	n = it_agent_encode(&m, out, sizeof(out));
	if (!n || it_agent_parse(out, n, &back, err, sizeof(err)) != (long)n || back.type != m.type)
		abort(); /* an instruction accepted must travel */
	if ((m.type == IT_MSG_LOAD && memcmp(&m.u.load, &back.u.load, sizeof(m.u.load))) ||
	    (m.type == IT_MSG_STORE && memcmp(&m.u.store, &back.u.store, sizeof(m.u.store))) ||
	    (m.type == IT_MSG_RESET && strcmp(m.u.reset.sw, back.u.reset.sw)))
		abort(); /* and arrive as it left */
	if (m.type == IT_MSG_STORE) {
		it_query_settings_default(&set);
		if (!it_query_store(&set, m.u.store.name, m.u.store.value, &code, err, sizeof(err)))
			it_query_setting_text(&set, m.u.store.name, text, sizeof(text));
	}
	return 0;
}
