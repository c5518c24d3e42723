// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * Joining the shared struct it_event stream (layer.h): a layer part of the
 * block layer (NVMe driver, NVMe target) writes into the block object's
 * ring, drop counter and -p table, so that the events of one I/O, whatever
 * layer saw them, are in causal order in one stream.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <bpf/libbpf.h>

#include "evring.h"
#include "layer.h"

int it_session_share_events(const struct it_session *s, struct bpf_map *events,
			    struct bpf_map *drops, struct bpf_map *tracked)
{
	int err = bpf_map__reuse_fd(events, bpf_map__fd(s->ev.events));

	if (!err)
		err = bpf_map__reuse_fd(drops, bpf_map__fd(s->ev.drops));
	if (!err)
		err = bpf_map__reuse_fd(tracked, bpf_map__fd(s->ev.tracked));
	return err;
}

int it_session_share_bufs(const struct it_session *s, struct bpf_map *bufs, __u64 *mask,
			  __u64 *wakeup)
{
	*mask = s->ev.buf_mask;
	*wakeup = s->ev.buf_wakeup;
	return bpf_map__reuse_fd(bufs, bpf_map__fd(s->ev.bufs));
}

void *it_session_start_in_events(const struct it_session *s, const struct it_hook_load *l,
				 char *hooks, size_t hlen, char *why, size_t wlen)
{
	enum it_hook_kind kinds[l->nhooks];
	int err;

	if (!s->ev.events) {
		snprintf(why, wlen, "the block layer is not recorded");
		return NULL;
	}
	return it_hooks_load(l, kinds, hooks, hlen, why, wlen, &err);
}

int it_session_attach_skel(const struct it_skel_ops *ops, void *skel, const char *layer,
			   char *why, size_t wlen)
{
	int err = ops->attach(skel);

	if (err)
		snprintf(why, wlen, "attaching the %s probes failed: %s", layer, strerror(-err));
	return !err;
}

int it_session_add_evring(struct it_session *s, struct it_evring *r)
{
	if (s->nevr >= sizeof(s->evr) / sizeof(s->evr[0])) {
		it_evring_free(r);
		return -ENOSPC;
	}
	s->evr[s->nevr++] = r;
	return 0;
}
