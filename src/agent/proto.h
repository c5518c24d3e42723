/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The agent protocol (doc/agent-protocol.md): length-prefixed messages
 * between `iotrail record --target` (the initiator) and `iotrail agent`
 * (the target), inside TLS 1.3. Pure C, no sockets: the parser is
 * fuzzed (tests/fuzz/fuzz_agent_msg.c) and unit-tested; the NTP-like
 * clock arithmetic lives here too.
 */
#ifndef IOTRAIL_AGENT_PROTO_H
#define IOTRAIL_AGENT_PROTO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define IT_AGENT_MAGIC    0x47415449u /* "ITAG" little-endian */
#define IT_AGENT_VERSION  2u          /* 2: LOAD, STORE, RESET, STATS */
#define IT_AGENT_HDR      12u         /* magic, version, type, length */
#define IT_AGENT_MAX_DATA (8u << 20)  /* DATA payload at most */
#define IT_AGENT_MAX_MSG  4096u       /* every other payload at most */
#define IT_AGENT_PORT     4790

enum it_agent_type {
	IT_MSG_HELLO = 1,  /* both ways: version, software, host name */
	IT_MSG_START = 2,  /* initiator: layers, devices; agent: the same, empty */
	IT_MSG_PULL = 3,   /* initiator: empty */
	IT_MSG_DATA = 4,   /* agent: flags, then whole trace-file bytes */
	IT_MSG_CLOCK = 5,  /* initiator: t1; agent: t1, t2, t3 */
	IT_MSG_STOP = 6,   /* initiator: empty; agent: empty (the recorder stopped) */
	IT_MSG_ERROR = 7,  /* either: code, one line */
	/* the query protocol (version 2): ntprof's [opcode][switch][statistic][params] */
	IT_MSG_LOAD = 8,   /* initiator: a switch's statistics of the last window (agent: STATS) */
	IT_MSG_STORE = 9,  /* both ways: switch, setting, value (the agent: what is now set) */
	IT_MSG_RESET = 10, /* initiator: switch; agent: switch, the reset's time */
	IT_MSG_STATS = 11, /* agent: LOAD's answer */
	IT_MSG_LAST = IT_MSG_STATS,
};

/* DATA flags */
#define IT_DATA_FINAL 1u  /* the recording is over and every byte has been sent */

enum it_agent_err {
	IT_AERR_VERSION = 1,  /* protocol version not spoken */
	IT_AERR_BUSY = 2,     /* a recording session is running */
	IT_AERR_STATE = 3,    /* message out of order */
	IT_AERR_RECORD = 4,   /* the recorder could not start or died */
	IT_AERR_BAD = 5,      /* malformed message */
	IT_AERR_QUERY = 6,    /* a query the agent cannot answer (unknown switch, no data) */
	IT_AERR_UNSUPPORTED = 7, /* a STORE of a setting this agent cannot honour yet */
};

#define IT_AGENT_TEXT 256 /* strings in messages, NUL included */
#define IT_SWITCH_LEN 32  /* a switch's name ("block.d2c"), NUL included */
#define IT_QUERY_PCTS 8   /* percentiles in one LOAD at most */
#define IT_PCT_SCALE 1000 /* percentiles on the wire: thousandths of a percent (99.9: 99900) */

/* The statistics a LOAD asks for (its [statistic] field), bits. */
enum it_query_stat {
	IT_QS_COUNT = 1u << 0, IT_QS_MIN = 1u << 1, IT_QS_AVG = 1u << 2, IT_QS_MAX = 1u << 3,
	IT_QS_PCT = 1u << 4,   /* the percentiles listed (none listed: the agent's set) */
	IT_QS_IOPS = 1u << 5, IT_QS_BYTES = 1u << 6,
	IT_QS_ALL = (1u << 7) - 1,
};

/* One switch's numbers over a span of time: I/Os completed in it. */
struct it_stage_stat {
	uint64_t ios;             /* I/Os completed that pass the filters */
	uint64_t count;           /*   of which have this stage */
	uint64_t bytes;           /*   their bytes */
	uint64_t min, max, sum;   /* the stage's time, ns (min 0 when count is 0) */
	uint64_t pct_ns[IT_QUERY_PCTS];
};

struct it_agent_msg {
	uint16_t version;     /* of the frame */
	uint16_t type;
	union {
		struct { uint32_t version; char software[32]; char host[64]; } hello;
		struct { char layers[IT_AGENT_TEXT]; char devs[IT_AGENT_TEXT]; } start;
		struct { uint32_t flags; const uint8_t *bytes; size_t len; } data;
		struct { uint64_t t1, t2, t3; bool reply; } clock;
		struct { uint32_t code; char text[IT_AGENT_TEXT]; } error;
		struct {
			char sw[IT_SWITCH_LEN];
			uint32_t stats;          /* enum it_query_stat bits, not 0 */
			uint64_t window_ns;      /* 0: the agent's setting */
			uint8_t op;              /* 0: any; else enum it_op + 1 */
			char dev[IT_SWITCH_LEN]; /* device or initiator controller; "": any */
			uint8_t npct;            /* 0: the agent's percentile set */
			uint32_t pct[IT_QUERY_PCTS]; /* ascending, 1 .. 100 * IT_PCT_SCALE */
		} load;
		struct {
			char sw[IT_SWITCH_LEN];
			uint32_t stats;          /* as asked */
			uint64_t start_ns, end_ns;  /* the window, agent's CLOCK_MONOTONIC */
			uint64_t reset_ns;       /* since reset: from here (the recording's start
						  * when later) to end_ns */
			uint64_t dropped;        /* events the agent's recorder lost so far */
			uint8_t npct;
			uint32_t pct[IT_QUERY_PCTS];
			struct it_stage_stat window, since_reset;
		} stats;
		struct {
			char sw[IT_SWITCH_LEN];  /* a switch or "all" */
			char name[IT_SWITCH_LEN];
			char value[IT_AGENT_TEXT];
		} store;
		struct { char sw[IT_SWITCH_LEN]; uint64_t at_ns; bool reply; } reset;
	} u;
};

/*
 * Parses one message at the start of buf. Returns its length in bytes (> 0)
 * with *m filled (data.bytes points into buf), 0 when buf holds only part
 * of one (read more), -1 with a one-line reason in err when the bytes are
 * not a message this version takes. A frame of another protocol version
 * is returned whole (type and version set, payload not parsed) when its
 * header is sane, so the caller can answer with a clear error.
 */
long it_agent_parse(const void *buf, size_t len, struct it_agent_msg *m, char *err, size_t errlen);

/* Bytes needed for the frame whose header starts buf (header included);
 * 0 when fewer than IT_AGENT_HDR bytes are there; -1 on a bad header. */
long it_agent_frame_len(const void *buf, size_t len, char *err, size_t errlen);

/* Encodes a message into out (cap bytes); returns its length or 0 when it
 * does not fit. DATA: the payload bytes are not copied: out gets the
 * header and the flags only, and the caller sends m->u.data.bytes after. */
size_t it_agent_encode(const struct it_agent_msg *m, uint8_t *out, size_t cap);

/* One clock exchange: t1 initiator sent, t2 agent received, t3 agent sent,
 * t4 initiator received, each on its own CLOCK_MONOTONIC. */
struct it_clock_sample {
	int64_t theta;       /* agent clock - initiator clock: ((t2-t1)+(t3-t4))/2 */
	uint64_t rtt;        /* (t4-t1) - (t3-t2) */
};
/* false when the timestamps cannot be (t4 < t1, t3 < t2, negative round trip). */
bool it_clock_sample(uint64_t t1, uint64_t t2, uint64_t t3, uint64_t t4,
		     struct it_clock_sample *s);
/* Keeps in *best the sample with the smallest round trip; returns true if
 * s replaced it (best->rtt == UINT64_MAX: none yet). */
bool it_clock_keep_best(struct it_clock_sample *best, const struct it_clock_sample *s);

#endif
