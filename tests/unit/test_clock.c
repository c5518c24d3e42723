// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The clock estimate (src/layers/fabric/clock.c) on synthetic I/Os between
 * two clocks with a known offset and drift: queueing noise and an
 * asymmetric network, windows without I/O, a sample no I/O could give, a
 * clock step that no line fits, the agent exchange as the fallback, the
 * impossible estimate, and the first guess from command times.
 */
#include "harness.h"

#include <math.h>
#include <stdlib.h>

#include "layers/fabric/clock.h"

#define S 1000000000ull
#define US 1000ull
#define MS 1000000ull
#define OFFSET (3700ull * 1000000ull) /* the target reads 3.7 s ahead */
#define PPM 50.0                      /* and gains 50 us a second */
#define H0 (100 * S)                  /* the initiator's time at the start */

/* The target's clock at the initiator's time h. */
static uint64_t tclock(uint64_t h)
{
	return h + OFFSET + (uint64_t)llround(PPM * 1e-6 * (double)(h - H0));
}

/* The true offset (initiator = target + offset) at the target's time t. */
static double true_offset(uint64_t t)
{
	double h = ((double)t - (double)OFFSET + PPM * 1e-6 * (double)H0) / (1 + PPM * 1e-6);
	return h - (double)t;
}

static uint64_t rng = 88172645463325252ull;

/* Exponential noise of mean m (queueing), deterministic. */
static uint64_t noise(uint64_t m)
{
	rng ^= rng << 13;
	rng ^= rng >> 7;
	rng ^= rng << 17;
	double u = (double)(rng >> 11) / (double)(1ull << 53);
	return (uint64_t)(-log(1 - u) * (double)m);
}

/* One I/O sent at h: out 20 us + 40 us more than back (asymmetric) plus
 * queueing, 100 us at the target plus queueing, back 20 us plus queueing. */
static struct it_clock_sample io_at(uint64_t h)
{
	uint64_t out = 60 * US + noise(30 * US), work = 100 * US + noise(50 * US);
	uint64_t back = 20 * US + noise(30 * US);

	return (struct it_clock_sample){ .t1 = h, .t2 = tclock(h + out),
					 .t3 = tclock(h + out + work), .t4 = h + out + work + back };
}

/* The estimate holds the truth at target time t within its uncertainty. */
static void holds_at(const struct it_clock_est *e, uint64_t t, const char *label)
{
	double got = (double)(int64_t)(it_clock_map(e, t) - t);

	ASSERT_NEAR(got, true_offset(t), (double)e->uncertainty_ns, label);
}

TEST(clock_noise_asymmetry_drift)
{
	size_t n = 60 * 200;
	struct it_clock_sample *s = malloc(n * sizeof(*s));
	struct it_clock_est e;

	for (size_t i = 0; i < n; i++)
		s[i] = io_at(H0 + i * (S / 200));
	ASSERT_EQ(it_clock_estimate(s, n, false, 0, 0, &e), 0, "estimate");
	ASSERT_EQ(e.method, IT_CLOCK_IO, "from matched I/Os");
	ASSERT_EQ(e.samples, n, "samples");
	ASSERT_EQ(e.rejected, 0, "none rejected");
	ASSERT_EQ(e.windows, 60, "one window a second");
	ASSERT_TRUE(e.all_bounds_meet, "one line meets every I/O: all causal");
	ASSERT_TRUE(e.drift_known, "60 s bound the drift");
	ASSERT_NEAR(it_clock_drift_ppm(&e), PPM, e.drift_bound_ppm, "drift within its bound");
	ASSERT_LE(e.drift_bound_ppm, 2, "a minute of I/O bounds it to 2 ppm");
	/* the asymmetry (40 us) is inside every bound: the uncertainty says so */
	ASSERT_LE(e.uncertainty_ns, e.min_rtt_ns, "uncertainty below the smallest round trip");
	for (size_t i = 0; i < n; i += 997)
		holds_at(&e, s[i].t2, "the truth within the uncertainty");
	it_clock_free(&e);
	free(s);
}

TEST(clock_windows_without_io)
{
	struct it_clock_sample s[2 * 5 * 100];
	struct it_clock_est e;
	size_t n = 0;

	/* I/O in seconds 0-5 and 50-55 only */
	for (uint64_t sec = 0; sec < 55; sec++)
		for (int k = 0; k < 100 && (sec < 5 || sec >= 50); k++)
			s[n++] = io_at(H0 + sec * S + (uint64_t)k * (S / 100));
	ASSERT_EQ(it_clock_estimate(s, n, true, -(int64_t)OFFSET + 2 * (int64_t)S, 50 * US, &e), 0,
		  "estimate");
	ASSERT_EQ(e.method, IT_CLOCK_IO, "the I/Os, not the (wrong) exchange");
	ASSERT_EQ(e.windows, 10, "ten windows with I/O");
	ASSERT_TRUE(e.exchange, "the exchange kept for the report");
	holds_at(&e, tclock(H0 + 30 * S), "in the gap: the line");
	holds_at(&e, tclock(H0 + 2 * S), "in the first windows");
	holds_at(&e, tclock(H0 + 52 * S), "in the last windows");
	ASSERT_NEAR(it_clock_drift_ppm(&e), PPM, e.drift_bound_ppm, "drift within its bound");
	for (uint64_t i = 0; i < e.windows; i++) {
		ASSERT_NEAR((double)e.window[i].offset_ns, true_offset(e.window[i].at_ns),
			    (double)e.window[i].rtt_ns / 2, "each window's offset within its bound");
		ASSERT_TRUE(!i || e.window[i].at_ns > e.window[i - 1].at_ns, "windows in time order");
	}
	it_clock_free(&e);
}

TEST(clock_exchange_fallback_and_impossible)
{
	struct it_clock_est e;

	ASSERT_EQ(it_clock_estimate(NULL, 0, true, -3700000000ll, 40 * US, &e), 0, "estimate");
	ASSERT_EQ(e.method, IT_CLOCK_EXCHANGE, "no I/O: the exchange");
	ASSERT_EQ(e.offset_ns, -3700000000ll, "its offset");
	ASSERT_U64_EQ(e.uncertainty_ns, 40 * US, "its uncertainty");
	ASSERT_TRUE(!e.drift_known, "no drift from one exchange");
	ASSERT_U64_EQ(it_clock_map(&e, 5 * S), 5 * S - 3700000000ull, "mapped by the offset");

	ASSERT_EQ(it_clock_estimate(NULL, 0, false, 0, 0, &e), 0, "estimate");
	ASSERT_EQ(e.method, IT_CLOCK_NONE, "no I/O, no exchange: impossible");
	ASSERT_STREQ(it_clock_method_name(e.method), "none", "named");
	ASSERT_U64_EQ(it_clock_map(&e, 5 * S), 5 * S, "nothing moved");
}

TEST(clock_rejects_impossible_sample)
{
	struct it_clock_sample s[3] = { io_at(H0), io_at(H0 + S / 2), io_at(H0 + S) };
	struct it_clock_est e;

	/* the target worked longer than the initiator waited: no one I/O */
	s[1].t3 = s[1].t2 + (s[1].t4 - s[1].t1) + 1;
	ASSERT_EQ(it_clock_estimate(s, 3, false, 0, 0, &e), 0, "estimate");
	ASSERT_EQ(e.rejected, 1, "rejected");
	ASSERT_EQ(e.method, IT_CLOCK_IO, "the others used");
	holds_at(&e, s[0].t2, "the truth within the uncertainty");
	it_clock_free(&e);
}

TEST(clock_step_no_line_meets_all)
{
	size_t n = 20 * 100;
	struct it_clock_sample *s = malloc(n * sizeof(*s));
	struct it_clock_est e;

	for (size_t i = 0; i < n; i++)
		s[i] = io_at(H0 + i * (S / 100));
	/* one I/O matched to the wrong command: its target side 5 ms later */
	s[700].t2 += 5000 * US;
	s[700].t3 += 5000 * US;
	ASSERT_EQ(it_clock_estimate(s, n, false, 0, 0, &e), 0, "estimate");
	ASSERT_TRUE(!e.all_bounds_meet, "no line meets that one too");
	ASSERT_EQ(e.method, IT_CLOCK_IO, "the windows' fastest I/Os instead");
	ASSERT_NEAR((double)(int64_t)(it_clock_map(&e, s[100].t2) - s[100].t2),
		    true_offset(s[100].t2), 100 * US, "still near the truth");
	it_clock_free(&e);
	free(s);
}

TEST(clock_first_guess_from_commands)
{
	/* 4 queues x 8 tags, a command id back every 32 commands */
	enum { N = 3000 };
	struct it_clock_cmd *h = malloc(N * sizeof(*h)), *t = malloc(N * sizeof(*t));
	int64_t off = 0;
	uint64_t slack = 0;

	for (size_t i = 0; i < N; i++) {
		uint64_t s = H0 + i * 50 * US, out = 20 * US + noise(20 * US);
		uint64_t work = 80 * US + noise(40 * US), back = 20 * US + noise(20 * US);
		uint64_t key = (i % 4) << 16 | (i % 32) / 4;
		h[i] = (struct it_clock_cmd){ key, s, s + out + work + back };
		t[i] = (struct it_clock_cmd){ key, tclock(s + out), tclock(s + out + work) };
	}
	/* the exchange's guess 2 s off: the commands still tell */
	ASSERT_EQ(it_clock_coarse(h, N, t, N, -(int64_t)OFFSET + 2 * (int64_t)S, 0, &off, &slack), 1,
		  "found");
	ASSERT_NEAR((double)off, true_offset(t[N / 2].start), (double)slack, "within its slack");
	ASSERT_LE(slack, 200 * US, "slack of the order of a round trip");
	ASSERT_EQ(it_clock_coarse(h, N, t, 0, 0, 0, &off, &slack), 0, "no target command: none");
	free(h);
	free(t);
}

/* QD1 at a regular pace (netem on both NICs, as on two guests): one
 * command id for every I/O, so pairs one or more I/Os apart line up
 * nearly as well as the true ones. The exchange's bound picks the truth;
 * without it the guess may be any multiple of the pace off. */
TEST(clock_coarse_regular_pace_takes_the_exchange_bound)
{
	enum { N = 30 };
	struct it_clock_cmd h[N], t[N];
	int64_t off = 0, truth;
	uint64_t slack = 0, pace = 150 * MS;

	for (size_t i = 0; i < N; i++) {
		uint64_t s = H0 + i * pace, out = 40 * MS + noise(US), work = MS + noise(US);
		uint64_t back = 40 * MS + noise(US);
		h[i] = (struct it_clock_cmd){ 7, s, s + out + work + back };
		t[i] = (struct it_clock_cmd){ 7, tclock(s + out), tclock(s + out + work) };
	}
	truth = (int64_t)true_offset(t[N / 2].start);
	/* the exchange as the netem run had it: within 44 ms, 1.5 ms off */
	ASSERT_EQ(it_clock_coarse(h, N, t, N, truth + 1500 * (int64_t)US, 44 * MS, &off, &slack), 1,
		  "found");
	ASSERT_NEAR((double)off, (double)truth, (double)slack, "the true one, not a pace off");
	ASSERT_LE(slack, 50 * MS, "slack of the order of half the round trip");
}
