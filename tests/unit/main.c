/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Runs every registered unit test; `unit-tests [SUBSTRING]` runs a subset. */
#include "harness.h"

#include <stdlib.h>

static struct it_test *tests;
int it_test_failed;
int it_test_skipped;
const char *it_test_skip_reason;

void it_test_register(struct it_test *t)
{
	/* keep registration order (constructors run in link order) */
	struct it_test **p = &tests;
	while (*p)
		p = &(*p)->next;
	*p = t;
}

int main(int argc, char **argv)
{
	int passed = 0, failed = 0, skipped = 0;

	for (struct it_test *t = tests; t; t = t->next) {
		if (argc > 1 && !strstr(t->name, argv[1]))
			continue;
		it_test_failed = it_test_skipped = 0;
		it_test_skip_reason = NULL;
		t->fn();
		if (it_test_failed) {
			printf("FAIL %s\n", t->name);
			failed++;
		} else if (it_test_skipped) {
			printf("SKIP %s: %s\n", t->name, it_test_skip_reason);
			skipped++;
		} else {
			printf("PASS %s\n", t->name);
			passed++;
		}
		fflush(stdout);
	}
	printf("unit: %d passed, %d failed, %d skipped\n", passed, failed, skipped);
	return failed ? 1 : 0;
}
