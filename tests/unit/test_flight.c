/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* The flight recorder's buffer (src/flight.c) on synthetic event streams:
 * only the last window is kept (by timestamp), the memory bound pushes
 * the oldest out and counts them, and the trigger fires once per spike. */
#include <string.h>

#include "flight.h"
#include "harness.h"
#include "synth.h"

#define MS 1000000ull

struct seen {
	uint64_t first, last;
	long n;
};

static int note(const struct it_event *e, void *ctx)
{
	struct seen *s = ctx;

	if (!s->n++)
		s->first = e->ts_ns;
	s->last = e->ts_ns;
	return 0;
}

TEST(flight_window)
{
	struct it_flight *f = it_flight_new(1000 * MS, 1 << 20, NULL);
	struct it_flight_stats st;
	struct seen s = { 0 };
	struct it_event e;

	ASSERT_NOT_NULL(f, "new");
	/* one event every 10 ms for 5 s */
	for (uint64_t t = 0; t <= 5000; t += 10) {
		e = ev_base(IT_EV_BIO_QUEUE, t * MS, t + 1, DEV_A);
		ASSERT_TRUE(!it_flight_add(f, &e), "no trigger: never fires");
	}
	ASSERT_EQ(it_flight_each(f, 5000 * MS, note, &s), 101, "the last second: 4000..5000 ms");
	ASSERT_U64_EQ(s.first, 4000 * MS, "oldest kept");
	ASSERT_U64_EQ(s.last, 5000 * MS, "newest");
	/* written out later: what fell out of the window meanwhile is left out */
	s = (struct seen){ 0 };
	ASSERT_EQ(it_flight_each(f, 5500 * MS, note, &s), 51, "at 5.5 s: 4500..5000 ms");
	ASSERT_U64_EQ(s.first, 4500 * MS, "oldest then");
	it_flight_stats(f, &st);
	ASSERT_U64_EQ(st.overwritten, 0, "the window fits");
	ASSERT_U64_EQ(st.added, 501, "every event given");
	it_flight_free(f);

	/* room for 20 events: the window holds 101, the oldest go early */
	f = it_flight_new(1000 * MS, 20 * sizeof(struct it_event), NULL);
	for (uint64_t t = 0; t <= 5000; t += 10) {
		e = ev_base(IT_EV_BIO_QUEUE, t * MS, t + 1, DEV_A);
		it_flight_add(f, &e);
	}
	s = (struct seen){ 0 };
	ASSERT_EQ(it_flight_each(f, 5000 * MS, note, &s), 20, "the memory bound");
	ASSERT_U64_EQ(s.first, 4810 * MS, "the newest 20");
	it_flight_stats(f, &st);
	/* every event past the first 20 pushed one out while still in the window */
	ASSERT_U64_EQ(st.overwritten, 501 - 20, "counted: pushed out inside the window");
	it_flight_free(f);
}

/* One I/O: bio b queued at q ms, request r issued at d ms, completed at c ms. */
static int io(struct it_flight *f, uint64_t b, uint64_t r, uint64_t q, uint64_t d, uint64_t c)
{
	/* at C the BPF side gives the request's first bio in aux */
	struct it_event e[3] = { Q(q * MS, b, DEV_A, 0, K4, IT_OP_READ),
				 D(d * MS, r, b, DEV_A, 0, K4, IT_OP_READ),
				 ev_io(IT_EV_RQ_COMPLETE, c * MS, r, b, DEV_A, 0, K4, IT_OP_READ) };
	int fired = 0;

	for (int i = 0; i < 3; i++)
		fired += it_flight_add(f, &e[i]);
	return fired;
}

TEST(flight_trigger)
{
	struct it_trigger t;
	struct it_flight *f;
	struct it_flight_stats st;
	char err[160];
	int fired = 0;
	uint64_t now = 0, id = 1;

	ASSERT_EQ(it_trigger_parse("q2c>5ms", &t, err, sizeof(err)), 0, err);
	f = it_flight_new(1000 * MS, 1 << 20, &t);
	/* fast I/Os (1 ms), a spike of three slow ones (10 ms each, back to
	 * back), fast again for 600 ms (past the re-arm time), a second spike of one, fast again */
	for (int i = 0; i < 50; i++, now += 2, id++)
		fired += io(f, id, id + 1000, now, now, now + 1);
	ASSERT_EQ(fired, 0, "no spike yet");
	for (int i = 0; i < 3; i++, now += 11, id++)
		fired += io(f, id, id + 1000, now, now + 1, now + 10);
	ASSERT_EQ(fired, 1, "one spike, one firing");
	for (int i = 0; i < 300; i++, now += 2, id++)
		fired += io(f, id, id + 1000, now, now, now + 1);
	fired += io(f, id, id + 1000, now, now, now + 20);
	now += 21, id++;
	ASSERT_EQ(fired, 2, "a second spike fires again");
	/* a slow stage other than the trigger's does not fire it */
	it_flight_free(f);
	ASSERT_EQ(it_trigger_parse("q2d>5ms", &t, err, sizeof(err)), 0, err);
	f = it_flight_new(1000 * MS, 1 << 20, &t);
	fired = io(f, 1, 2, 0, 1, 50);
	ASSERT_EQ(fired, 0, "slow D2C, fast Q2D: no firing");
	fired = io(f, 3, 4, 100, 110, 111);
	ASSERT_EQ(fired, 1, "slow Q2D fires");
	it_flight_stats(f, &st);
	ASSERT_U64_EQ(st.fired, 1, "counted");
	it_flight_free(f);
}
