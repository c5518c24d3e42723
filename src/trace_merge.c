// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The merged file of `iotrail record --target`. The head must come first
 * (HOST, DEVICES, LAYERS of machine 0, then machine 1's HOST, DEVICES,
 * CLOCK and any NOTE), so the merge happens at the end, from two finished
 * files: chunks are copied as they are stored (packed, zstd), only their
 * machine changes, so nothing is decoded and re-encoded. The manifest is
 * the union of both files' layers (one build writes both: a layer id
 * means the same records on both sides). A target's file without END (its
 * agent was lost) gives a NOTE that the report shows.
 */
#include "trace_merge.h"
#include "tracefile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

struct copy {
	uint64_t chunks, events;
	int ended;            /* END met */
};

/* The body of src (after its head) into w as chunks of machine. */
static int copy_body(struct it_writer *w, const char *src, uint16_t machine, struct copy *c,
		     char *err, size_t errlen)
{
	struct it_chunk_header h;
	uint64_t off = sizeof(struct it_file_header);
	void *buf = NULL;
	size_t cap = 0;
	int fd = open(src, O_RDONLY | O_CLOEXEC), rc;

	memset(c, 0, sizeof(*c));
	if (fd < 0) {
		snprintf(err, errlen, "cannot open %s: %s", src, strerror(errno));
		return -1;
	}
	while ((rc = it_chunk_scan(fd, &off, &h, &buf, &cap)) == 1) {
		if (h.type == IT_CHUNK_END) {
			c->ended = 1;
			break;
		}
		if (h.type == IT_CHUNK_HOST || h.type == IT_CHUNK_DEVICES ||
		    h.type == IT_CHUNK_LAYERS || h.type == IT_CHUNK_CLOCK || h.type == IT_CHUNK_NOTE)
			continue; /* the head: written anew */
		if (h.machine) /* a merged file is not merged again */
			continue;
		rc = it_writer_copy_chunk(w, machine, &h, buf);
		if (rc) {
			snprintf(err, errlen, "cannot copy a chunk of %s: %s", src, strerror(-rc));
			break;
		}
		c->chunks++;
		if (h.type == IT_CHUNK_EVENTS)
			c->events += h.count;
	}
	if (rc < 0 && !*err)
		snprintf(err, errlen, "cannot read %s: %s", src, strerror(errno));
	free(buf);
	close(fd);
	return rc < 0 ? -1 : 0;
}

/* The union of two manifests, a's first. */
static size_t union_layers(const struct it_reader *a, const struct it_reader *b,
			   struct it_layer_rec *out, size_t max)
{
	size_t na, nb, n = 0;
	const struct it_layer_rec *la = it_reader_layers(a, &na), *lb = it_reader_layers(b, &nb);

	for (size_t i = 0; i < na && n < max; i++)
		out[n++] = la[i];
	for (size_t i = 0; i < nb && n < max; i++)
		if (!it_reader_layer(a, lb[i].id))
			out[n++] = lb[i];
	return n;
}

/* Machine 0's losses of its event layer and its end time, for the END
 * chunk: the reader reads DROPS and END while stepping over the rest. */
static void local_end(const char *path, uint64_t *dropped, uint64_t *end_ns)
{
	const struct it_select none = { IT_ANY - 1, IT_ANY, IT_CHUNK_EVENTS };
	struct it_reader_status st;
	struct it_chunk c;
	char err[256];
	struct it_reader *r = it_reader_open_select(path, &none, 1, err, sizeof(err));

	*dropped = *end_ns = 0;
	if (!r)
		return;
	while (it_reader_next_chunk(r, &c) == 1)
		;
	it_reader_status(r, &st);
	*dropped = st.dropped_total;
	*end_ns = st.end_monotonic_ns;
	it_reader_close(r);
}

/* Whether the file's whole chunks end with END: 1, 0, or -1. */
static int ends_whole(const char *path)
{
	struct it_chunk_header h;
	uint64_t off = sizeof(struct it_file_header);
	void *buf = NULL;
	size_t cap = 0;
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc, ended = 0;

	if (fd < 0)
		return -1;
	while ((rc = it_chunk_scan(fd, &off, &h, &buf, &cap)) == 1)
		if (h.type == IT_CHUNK_END) {
			ended = 1;
			break;
		}
	free(buf);
	close(fd);
	return rc < 0 ? -1 : ended;
}

/* The first layer with EVENTS records: whose losses END carries. */
static uint16_t event_layer(const struct it_layer_rec *l, size_t n)
{
	for (size_t i = 0; i < n; i++)
		for (uint16_t k = 0; k < l[i].nrecords; k++)
			if (l[i].records[k].chunk_type == IT_CHUNK_EVENTS)
				return l[i].id;
	return 0;
}

static int write_head(struct it_writer *w, const struct it_reader *rt,
		      const struct it_merge_target *t, int ended)
{
	const struct it_host_rec *th = it_reader_host(rt);
	struct it_clock_rec clock = t->clock;
	size_t ndevs;
	const struct it_device_rec *devs = it_reader_devices(rt, &ndevs);
	int rc;

	clock.machine = 1;
	clock.ref_machine = 0;
	rc = it_writer_add_machine(w, 1, th);
	if (!rc)
		rc = it_writer_add_devices(w, 1, devs, ndevs);
	if (!rc)
		rc = it_writer_add_clock(w, &clock);
	if (!rc && (t->lost || !ended)) {
		struct it_note_rec note = { .machine = 1, .kind = IT_NOTE_LOST,
					    .at_ns = t->lost_at_ns };

		snprintf(note.text, sizeof(note.text), "%s",
			 t->lost ? t->lost : "its recording ends without its END chunk");
		rc = it_writer_add_note(w, &note);
	}
	return rc;
}

int it_trace_merge(const char *out, const char *local, const struct it_merge_target *t,
		   struct it_merge_result *res, char *err, size_t errlen)
{
	struct it_reader *rl = NULL, *rt = NULL;
	struct it_writer *w = NULL;
	struct it_layer_rec layers[32];
	struct it_trace_head head;
	struct copy cl, ct;
	uint64_t dropped, end_ns;
	char tmp[4096], why[256] = "";
	int rc = -1, e, ended;

	memset(res, 0, sizeof(*res));
	*err = '\0';
	snprintf(tmp, sizeof(tmp), "%s.merge", out);
	if (!(rl = it_reader_open(local, why, sizeof(why)))) {
		snprintf(err, errlen, "cannot read the local recording %s: %s", local, why);
		goto out;
	}
	if (!(rt = it_reader_open(t->path, why, sizeof(why)))) {
		snprintf(err, errlen, "cannot read the target's recording: %s", why);
		goto out;
	}
	head = (struct it_trace_head){ .host = it_reader_host(rl), .layers = layers };
	head.devs = it_reader_devices(rl, &head.ndevs);
	head.nlayers = union_layers(rl, rt, layers, sizeof(layers) / sizeof(*layers));
	if (!(w = it_writer_open(tmp, &head, why, sizeof(why)))) {
		snprintf(err, errlen, "%s", why);
		goto out;
	}
	ended = ends_whole(t->path);
	if (ended < 0 || (e = write_head(w, rt, t, ended))) {
		snprintf(err, errlen, "cannot write %s: %s", tmp,
			 strerror(ended < 0 ? errno : -e));
		goto out;
	}
	if (copy_body(w, local, 0, &cl, err, errlen) || copy_body(w, t->path, 1, &ct, err, errlen))
		goto out;
	local_end(local, &dropped, &end_ns);
	it_writer_set_lost(w, 0, event_layer(layers, head.nlayers), dropped);
	e = it_writer_close(w, end_ns);
	w = NULL;
	if (e || rename(tmp, out)) {
		snprintf(err, errlen, "cannot write %s: %s", out, strerror(e ? -e : errno));
		goto out;
	}
	res->target_chunks = ct.chunks;
	res->target_events = ct.events;
	res->target_complete = ct.ended;
	rc = 0;
out:
	it_writer_abort(w);
	it_reader_close(rl);
	it_reader_close(rt);
	if (rc)
		unlink(tmp);
	return rc;
}
