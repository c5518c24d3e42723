/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * A plain test harness in the spirit of the kernel's BPF selftests: each
 * TEST registers itself; ASSERT_* print both values and fail the test
 * without stopping the run; SKIP ends a test as skipped with a reason.
 * tests/unit/main.c runs them and prints `N passed, N failed, N skipped`.
 * Each result is also one line "PASS name" / "FAIL name" / "SKIP name: why",
 * which tests/run counts together with the other suites.
 */
#ifndef IOTRAIL_HARNESS_H
#define IOTRAIL_HARNESS_H

#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

struct it_test {
	const char *name;
	void (*fn)(void);
	struct it_test *next;
};

void it_test_register(struct it_test *t);
/* State of the running test. */
extern int it_test_failed;
extern int it_test_skipped;
extern const char *it_test_skip_reason;

#define TEST(name)                                                     \
	static void test_##name(void);                                 \
	static struct it_test it_test_##name = { #name, test_##name, 0 }; \
	__attribute__((constructor)) static void it_reg_##name(void)   \
	{ it_test_register(&it_test_##name); }                         \
	static void test_##name(void)

#define IT_FAIL_AT(fmt, ...)                                                   \
	do {                                                                   \
		fprintf(stderr, "  %s:%d: " fmt "\n", __FILE__, __LINE__, __VA_ARGS__); \
		it_test_failed = 1;                                            \
	} while (0)

#define ASSERT_TRUE(cond, label)                                               \
	({ bool ok_ = (cond); if (!ok_) { IT_FAIL_AT("%s: expected true: %s", label, #cond); } ok_; })

#define ASSERT_EQ(got, want, label)                                            \
	({ long long g_ = (long long)(got), w_ = (long long)(want); bool ok_ = g_ == w_; \
	   if (!ok_) { IT_FAIL_AT("%s: got %lld, want %lld", label, g_, w_); } ok_; })

#define ASSERT_U64_EQ(got, want, label)                                        \
	({ uint64_t g_ = (uint64_t)(got), w_ = (uint64_t)(want); bool ok_ = g_ == w_; \
	   if (!ok_) { IT_FAIL_AT("%s: got %" PRIu64 ", want %" PRIu64, label, g_, w_); } ok_; })

#define ASSERT_LE(got, bound, label)                                           \
	({ double g_ = (double)(got), b_ = (double)(bound); bool ok_ = g_ <= b_; \
	   if (!ok_) { IT_FAIL_AT("%s: got %g, want <= %g", label, g_, b_); } ok_; })

#define ASSERT_GE(got, bound, label)                                           \
	({ double g_ = (double)(got), b_ = (double)(bound); bool ok_ = g_ >= b_; \
	   if (!ok_) { IT_FAIL_AT("%s: got %g, want >= %g", label, g_, b_); } ok_; })

#define ASSERT_NEAR(got, want, tol, label)                                     \
	({ double g_ = (double)(got), w_ = (double)(want), t_ = (double)(tol); \
	   bool ok_ = g_ - w_ <= t_ && w_ - g_ <= t_;                          \
	   if (!ok_) { IT_FAIL_AT("%s: got %g, want %g +- %g", label, g_, w_, t_); } ok_; })

#define ASSERT_STREQ(got, want, label)                                         \
	({ const char *g_ = (got), *w_ = (want);                               \
	   bool ok_ = g_ && w_ && strcmp(g_, w_) == 0;                          \
	   if (!ok_) { IT_FAIL_AT("%s: got \"%s\", want \"%s\"", label, g_ ? g_ : "(null)", w_); } ok_; })

#define ASSERT_NOT_NULL(p, label)                                              \
	({ bool ok_ = (p) != NULL; if (!ok_) { IT_FAIL_AT("%s: unexpected NULL", label); } ok_; })

#define SKIP(reason)                                                           \
	do { it_test_skipped = 1; it_test_skip_reason = (reason); return; } while (0)

#endif
