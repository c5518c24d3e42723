// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The HTML report (src/export/html.c, svg.c) on synthetic streams: strings
 * from the trace are escaped, every chart has its marks (as many as the
 * results say), the page fetches and runs nothing, and the queue depth
 * over time is Little's law over the analyzer's timeline.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "synth.h"
#include "analyze/report.h"
#include "analyze/zones.h"
#include "export/html.h"
#include "export/svg.h"

#define DEV_Z IT_MKDEV(259, 7)

static char *render(const struct it_analyzer *a)
{
	struct it_report_input in = { .path = "t<1>.trail", .a = a, .r = it_analyzer_results(a) };
	struct it_html_input hi = { .in = &in };
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	it_report_html(f, &hi);
	fclose(f);
	return buf;
}

/* The data marks of chart id: class="mark" between its <svg id=...> and
 * </svg>; -1 when the page has no such chart. */
static int marks(const char *page, const char *id)
{
	char key[96];
	int n = 0;

	snprintf(key, sizeof(key), "<svg id=\"%s\"", id);
	const char *p = strstr(page, key), *end;
	if (!p || !(end = strstr(p, "</svg>")))
		return -1;
	while ((p = strstr(p, "class=\"mark\"")) && p < end) {
		n++;
		p++;
	}
	return n;
}

static size_t count(const char *s, const char *what)
{
	size_t n = 0;

	while ((s = strstr(s, what))) {
		n++;
		s++;
	}
	return n;
}

TEST(html_escapes)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);

	html_esc(f, "<a href=\"x\">'&'</a>\x01");
	fclose(f);
	ASSERT_STREQ(buf, "&lt;a href=&quot;x&quot;&gt;&#39;&amp;&#39;&lt;/a&gt;?", "escaped");
	free(buf);
}

/* Reads by a process with a hostile name, writes by another, on one
 * disk: grouped by op and comm. */
TEST(html_report_charts_and_escaping)
{
	struct it_event evs[64];
	size_t n = 0;
	const uint64_t s = 1000000000ull;

	evs[n++] = TASK(s, 7, 7, "<script>x</sc");
	evs[n++] = TASK(s, 8, 8, "dd&co");
	for (uint64_t i = 0; i < 8; i++) {
		uint64_t t0 = s + 100000 * i;
		uint32_t pid = i < 5 ? 7 : 8;
		uint8_t op = i < 5 ? IT_OP_READ : IT_OP_WRITE;
		evs[n++] = ev_tid(Q(t0, 0xb0 + i, DEV_A, 8 * i, K4, op), pid, pid);
		evs[n++] = ev_tid(I(t0 + 100, 0x70 + i, 0xb0 + i, DEV_A, 8 * i, K4, op), pid, pid);
		evs[n++] = ev_tid(D(t0 + 300, 0x70 + i, 0xb0 + i, DEV_A, 8 * i, K4, op), pid, pid);
		evs[n++] = C(t0 + 2000 + 1000 * i, 0x70 + i, DEV_A, K4);
	}
	struct it_analyzer_opts o = { .keys = { IT_KEY_OP, IT_KEY_COMM }, .nkeys = 2, .start_ns = s };
	struct it_analyzer *a = run_opts(evs, n, o, NULL, s + 2000000);
	const struct it_results *r = it_analyzer_results(a);
	char *page = render(a);

	ASSERT_EQ(r->ngroups, 2, "two groups");
	ASSERT_TRUE(!strstr(page, "<script"), "no script, and the comm is escaped");
	ASSERT_TRUE(strstr(page, "&lt;script&gt;x&lt;/sc") != NULL, "comm shown escaped");
	ASSERT_TRUE(strstr(page, "dd&amp;co") != NULL, "& escaped");
	ASSERT_TRUE(strstr(page, "t&lt;1&gt;.trail") != NULL, "path escaped");
	ASSERT_TRUE(strstr(page, "default-src 'none'") != NULL, "nothing may be fetched");
	ASSERT_EQ(count(page, "src=\""), 0, "no src attribute");
	/* group 0 (read): stages Q2I, I2D, D2C, Q2C: one line each */
	ASSERT_EQ(marks(page, "cdf-g0"), 4, "a CDF line per stage");
	ASSERT_EQ(marks(page, "cdf-g1"), 4, "second group");
	ASSERT_TRUE(marks(page, "hist-g0-Q2C") >= 1, "Q2C histogram bars");
	/* the reads' Q2C are 2000..6000 ns: 2 to 6 us in quarter octaves
	 * from 2^(4*log2(2000))/4: the bars span the bins between */
	ASSERT_TRUE(marks(page, "hist-g0-Q2C") <= 12, "bins of a 1.6-octave range");
	/* Q2I, I2D, D2C per group (Q2D absent) */
	ASSERT_EQ(marks(page, "stages-chart"), 6, "three parts a group");
	ASSERT_EQ(marks(page, "iops-d0"), 3, "read, write, other IOPS");
	ASSERT_EQ(marks(page, "qd-d0"), 2 * IT_QD_BUCKETS, "a bar per depth bucket, insert and issue");
	ASSERT_EQ(marks(page, "sizes-d0"), 3, "one size class, three ops");
	ASSERT_EQ(marks(page, "zones-d0"), -1, "no zone map without zones");
	ASSERT_EQ(marks(page, "calls-threads"), -1, "no syscall chart without the layer");
	ASSERT_EQ(count(page, "<svg id="), count(page, "</title><desc id="), "a title and desc per chart");
	/* Little's law: the I/Os' Q2C (2000 + 1000 i, i < 8 => 44000 ns)
	 * over the 1 s interval */
	ASSERT_U64_EQ(r->devs[0].timeline[0].latency_ns, 44000, "latency summed per interval");
	free(page);
	it_analyzer_free(a);
}

TEST(html_zone_heat_map)
{
	struct it_event evs[] = {
		ZINFO(DEV_Z, 0, 0, 1024), ZINFO(DEV_Z, 1, 1024, 1024), ZINFO(DEV_Z, 2, 2048, 1024),
		ZINFO(DEV_Z, 3, 3072, 1024),
		Q(500, 0xb2, DEV_Z, 1024, 65536, IT_OP_WRITE),
		D(510, 0x72, 0xb2, DEV_Z, 1024, 65536, IT_OP_WRITE),
		C(600, 0x72, DEV_Z, 65536),
	};
	struct it_analyzer *a = run(evs, N(evs), NULL);
	char *page = render(a);

	ASSERT_EQ(marks(page, "zones-d0"), 4, "a cell per zone");
	ASSERT_TRUE(strstr(page, "zone 1: 0.06 MiB written") != NULL, "the written zone's title");
	free(page);
	it_analyzer_free(a);
}

TEST(html_empty_trace)
{
	struct it_analyzer *a = run(NULL, 0, NULL);
	char *page = render(a);

	ASSERT_TRUE(strstr(page, "no completed block I/O") != NULL, "says there is nothing");
	ASSERT_TRUE(strstr(page, "</html>") != NULL, "a whole page");
	ASSERT_EQ(count(page, "<svg id="), 0, "no chart");
	free(page);
	it_analyzer_free(a);
}
