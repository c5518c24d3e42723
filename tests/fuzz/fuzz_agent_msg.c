// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * libFuzzer target: the agent protocol's parser (src/agent/proto.c) on any
 * bytes, as a stream of frames the way the channel reads them. Whatever
 * it accepts must encode back to the same bytes (DATA: header and flags,
 * then its payload); nothing may read out of bounds (ASan) or overflow
 * (UBSan). Built and run by `make fuzz-agent`; seeds in corpus/agent_msg.
 */
#include "agent/proto.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	uint8_t out[IT_AGENT_HDR + IT_AGENT_MAX_MSG];
	struct it_agent_msg m;
	char err[200];

	while (size) {
		long n = it_agent_parse(data, size, &m, err, sizeof(err));

		if (n <= 0)
			break;
		if (m.version == IT_AGENT_VERSION) {
			size_t e = it_agent_encode(&m, out, sizeof(out));

			if (!e)
				abort(); /* a message parsed must encode */
			if (m.type == IT_MSG_DATA ?
			    e + m.u.data.len != (size_t)n || memcmp(out, data, e) ||
			    memcmp(m.u.data.bytes, data + e, m.u.data.len) :
			    e != (size_t)n || memcmp(out, data, e))
				abort(); /* and to the same bytes */
		}
		data += n;
		size -= (size_t)n;
	}
	return 0;
}
