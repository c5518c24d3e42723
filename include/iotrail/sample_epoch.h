/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * Per-epoch sampling (`record --sample 100/1s`): the first N I/Os of every
 * epoch are kept, the rest of that epoch are not. Decided in the kernel at
 * an I/O's first event (bpf/scope.bpf.h), and unit-tested in user space:
 * this one function is compiled into both.
 *
 * One 64-bit word holds the current epoch's number (high 40 bits) and how
 * many it kept (low 24 bits), updated by compare-and-swap, so CPUs racing
 * at an epoch's turn can never keep more than N in it: a reset and a count
 * are one write. An I/O whose clock reads an epoch older than the word's
 * (a CPU a little behind) counts in the word's epoch, never resets it.
 * Epochs are of at least 1 ms, so 40 bits of them last 34 years.
 */
#ifndef IOTRAIL_SAMPLE_EPOCH_H
#define IOTRAIL_SAMPLE_EPOCH_H

#define IT_EPOCH_COUNT_BITS 24
#define IT_EPOCH_N_MAX ((1u << IT_EPOCH_COUNT_BITS) - 1)
#define IT_EPOCH_MIN_NS 1000000ull
#define IT_EPOCH_TRIES 4

/* Whether the I/O seen at now_ns is one of the first n of its epoch;
 * *state starts at 0. Lost races beyond IT_EPOCH_TRIES leave the I/O out
 * (the bound holds; the count is then below n). */
static inline int it_epoch_take(unsigned long long *state, unsigned long long now_ns,
				unsigned long long epoch_ns, unsigned int n)
{
	unsigned long long epoch = (now_ns / epoch_ns) & ((1ull << (64 - IT_EPOCH_COUNT_BITS)) - 1);

	for (int i = 0; i < IT_EPOCH_TRIES; i++) {
		unsigned long long old = *(volatile unsigned long long *)state, next;

		if (old >> IT_EPOCH_COUNT_BITS >= epoch && old) {
			if ((old & IT_EPOCH_N_MAX) >= n)
				return 0;
			next = old + 1;
		} else {
			next = epoch << IT_EPOCH_COUNT_BITS | 1;
		}
		if (__sync_val_compare_and_swap(state, old, next) == old)
			return 1;
	}
	return 0;
}

#endif
