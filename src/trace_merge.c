// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The merged file of `iotrail record --target`. The head must come first
 * (HOST, DEVICES, LAYERS of machine 0, then each target machine's HOST,
 * DEVICES, CLOCK and any NOTE), so the merge happens at the end, from
 * finished files: chunks are copied as they are stored (packed, zstd),
 * only their machine changes, so nothing is decoded and re-encoded. The
 * manifest is the union of every file's layers (one build writes them
 * all: a layer id means the same records on every side). A target's file
 * without END (its agent was lost) gives a NOTE naming it that the report
 * shows; the other machines are unaffected.
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
		    h.type == IT_CHUNK_LAYERS || h.type == IT_CHUNK_CLOCK || h.type == IT_CHUNK_NOTE ||
		    h.type == IT_CHUNK_NVMF || h.type == IT_CHUNK_CLOCK_EST ||
		    h.type == IT_CHUNK_CLOCK_WINDOWS)
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

/* Adds b's layers that out[0..n) lacks; the new count. */
static size_t union_layers(size_t n, const struct it_reader *b, struct it_layer_rec *out,
			   size_t max)
{
	size_t nb, have = n;
	const struct it_layer_rec *lb = it_reader_layers(b, &nb);

	for (size_t i = 0; i < nb && n < max; i++) {
		size_t k = 0;

		while (k < have && out[k].id != lb[i].id)
			k++;
		if (k == have)
			out[n++] = lb[i];
		have = n;
	}
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

static int write_head(struct it_writer *w, uint16_t machine, const struct it_reader *rt,
		      const struct it_merge_target *t, int ended)
{
	const struct it_host_rec *th = it_reader_host(rt);
	struct it_clock_rec clock = t->clock;
	size_t ndevs;
	const struct it_device_rec *devs = it_reader_devices(rt, &ndevs);
	int rc;

	clock.machine = machine;
	clock.ref_machine = 0;
	rc = it_writer_add_machine(w, machine, th);
	if (!rc)
		rc = it_writer_add_devices(w, machine, devs, ndevs);
	if (!rc)
		rc = it_writer_add_clock(w, &clock);
	if (!rc && (t->lost || !ended)) {
		struct it_note_rec note = { .machine = machine, .kind = IT_NOTE_LOST,
					    .at_ns = t->lost_at_ns };

		snprintf(note.text, sizeof(note.text), "%s",
			 t->lost ? t->lost : "its recording ends without its END chunk");
		rc = it_writer_add_note(w, &note);
	}
	return rc;
}

/* The head's newer chunks, after every machine's HOST, DEVICES, CLOCK and
 * NOTE: a reader older than them ends its head at the first one, so they
 * come last, where it has read every machine already. */
static int write_head_extras(struct it_writer *w, struct it_reader *rl, struct it_reader **rt,
			     const struct it_merge_target *t, size_t nt)
{
	size_t nm;
	const struct it_machine *ms = it_reader_machines(rl, &nm);
	int rc = ms[0].nvmf ? it_writer_add_nvmf(w, 0, ms[0].nvmf, ms[0].nnvmf) : 0;

	for (size_t i = 0; !rc && i < nt; i++) {
		uint16_t machine = (uint16_t)(i + 1);
		const struct it_machine *own = it_reader_machines(rt[i], &nm);

		if (own[0].nvmf)
			rc = it_writer_add_nvmf(w, machine, own[0].nvmf, own[0].nnvmf);
		if (!rc && t[i].est) {
			struct it_clock_est_rec est = *t[i].est;

			est.machine = machine;
			est.ref_machine = 0;
			rc = it_writer_add_clock_est(w, &est, t[i].windows, t[i].nwindows);
		}
	}
	return rc;
}

int it_trace_merge(const char *out, const char *local, const struct it_merge_target *t,
		   size_t nt, struct it_merge_result *res, char *err, size_t errlen)
{
	struct it_reader *rl = NULL, **rt = calloc(nt ? nt : 1, sizeof(*rt));
	struct it_writer *w = NULL;
	struct it_layer_rec layers[32];
	struct it_trace_head head;
	struct copy cl, ct;
	uint64_t dropped, end_ns;
	char tmp[4096], why[256] = "";
	int rc = -1, e, ended;

	memset(res, 0, nt * sizeof(*res));
	*err = '\0';
	snprintf(tmp, sizeof(tmp), "%s.merge", out);
	if (!rt) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (nt > UINT16_MAX - 1) {
		snprintf(err, errlen, "%zu targets: at most %u machines fit", nt, UINT16_MAX - 1);
		goto out;
	}
	if (!(rl = it_reader_open(local, why, sizeof(why)))) {
		snprintf(err, errlen, "cannot read the local recording %s: %s", local, why);
		goto out;
	}
	head = (struct it_trace_head){ .host = it_reader_host(rl), .layers = layers };
	head.devs = it_reader_devices(rl, &head.ndevs);
	head.nlayers = union_layers(0, rl, layers, sizeof(layers) / sizeof(*layers));
	for (size_t i = 0; i < nt; i++) {
		if (!(rt[i] = it_reader_open(t[i].path, why, sizeof(why)))) {
			snprintf(err, errlen, "cannot read the recording of machine %zu: %s", i + 1, why);
			goto out;
		}
		head.nlayers = union_layers(head.nlayers, rt[i], layers,
					    sizeof(layers) / sizeof(*layers));
	}
	if (!(w = it_writer_open(tmp, &head, why, sizeof(why)))) {
		snprintf(err, errlen, "%s", why);
		goto out;
	}
	for (size_t i = 0; i < nt; i++) {
		ended = ends_whole(t[i].path);
		if (ended < 0 || (e = write_head(w, (uint16_t)(i + 1), rt[i], &t[i], ended))) {
			snprintf(err, errlen, "cannot write %s: %s", tmp,
				 strerror(ended < 0 ? errno : -e));
			goto out;
		}
	}
	if ((e = write_head_extras(w, rl, rt, t, nt))) {
		snprintf(err, errlen, "cannot write %s: %s", tmp, strerror(-e));
		goto out;
	}
	if (copy_body(w, local, 0, &cl, err, errlen))
		goto out;
	for (size_t i = 0; i < nt; i++) {
		if (copy_body(w, t[i].path, (uint16_t)(i + 1), &ct, err, errlen))
			goto out;
		res[i].target_chunks = ct.chunks;
		res[i].target_events = ct.events;
		res[i].target_complete = ct.ended;
	}
	local_end(local, &dropped, &end_ns);
	it_writer_set_lost(w, 0, event_layer(layers, head.nlayers), dropped);
	e = it_writer_close(w, end_ns);
	w = NULL;
	if (e || rename(tmp, out)) {
		snprintf(err, errlen, "cannot write %s: %s", out, strerror(e ? -e : errno));
		goto out;
	}
	rc = 0;
out:
	it_writer_abort(w);
	it_reader_close(rl);
	for (size_t i = 0; i < nt; i++)
		it_reader_close(rt[i]);
	free(rt);
	if (rc)
		unlink(tmp);
	return rc;
}
