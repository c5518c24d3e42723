// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The fs layer's F2FS tracepoints on the recording side (f2fs.h,
 * f2fs.bpf.c): loaded only on a kernel with F2FS (it is a module whose
 * BTF the program's CO-RE reads need), attached as raw tracepoints, each
 * event one FS_F2FS record; at the end the page-write counters and the
 * ring's losses.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <sys/vfs.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "cli.h"
#include "hooks.h"
#include "layer.h"
#include "tracefile.h"
#include "layers/fs/f2fs.h"
#include "layers/fs/record_f2fs.h"
#include "f2fs.skel.h"

#define F2FS_SUPER_MAGIC 0xF2F52010

static struct {
	struct f2fs_bpf *skel;
	uint64_t events, dropped;
} ff;

bool it_fs_f2fs_path(const char *path)
{
	struct statfs st;
	return !statfs(path, &st) && (unsigned long)st.f_type == F2FS_SUPER_MAGIC;
}

/* F2FS registered (module loaded, or built in) */
static bool f2fs_in_kernel(void)
{
	char line[128];
	bool found = false;
	FILE *f = fopen("/proc/filesystems", "r");

	while (f && !found && fgets(line, sizeof(line), f))
		found = !strcmp(line, "\tf2fs\n");
	if (f)
		fclose(f);
	return found;
}

static int on_event(void *ctx, void *data, size_t size)
{
	struct it_session *s = ctx;
	int err;

	if (size < sizeof(struct it_f2fs_event))
		return 0;
	ff.events++;
	s->consumed++;
	if (!s->w)
		return 0;
	err = it_writer_add_record(s->w, 0, IT_LAYER_FS, IT_CHUNK_FS_F2FS, data,
				   sizeof(struct it_f2fs_event));
	if (err && !s->err)
		s->err = err;
	return err;
}

/* PAGE_PRIVATE_ONGOING_MIGRATION's value in F2FS's BTF (the bit of
 * page->private a background GC round sets on a page to move: f2fs.bpf.c,
 * gc_marked), or 64 when it is not there. Its enum has no name, which
 * CO-RE needs, and its value moved (3 in 6.1, before PAGE_PRIVATE_ATOMIC_WRITE
 * was dropped). */
static uint32_t gcing_bit(void)
{
	const struct btf *base = it_vmlinux_btf();
	struct btf *mod = base ? btf__load_module_btf("f2fs", (struct btf *)base) : NULL;
	uint32_t bit = 64;

	for (uint32_t id = mod ? btf__type_cnt(base) : 0; mod && id < btf__type_cnt(mod) && bit == 64;
	     id++) {
		const struct btf_type *t = btf__type_by_id(mod, id);
		const struct btf_enum *e;

		if (!btf_is_enum(t))
			continue;
		e = btf_enum(t);
		for (int i = 0; i < btf_vlen(t); i++)
			if (!strcmp(btf__name_by_offset(mod, e[i].name_off),
				    "PAGE_PRIVATE_ONGOING_MIGRATION") &&
			    e[i].val >= 0 && e[i].val < 64)
				bit = (uint32_t)e[i].val;
	}
	btf__free(mod);
	return bit;
}

int it_fs_f2fs_load(struct it_session *s)
{
	int err;

	if (!f2fs_in_kernel())
		return it_failf(-1, "failed to record F2FS's tracepoints: this kernel has no F2FS "
				"(not in /proc/filesystems); load its module (modprobe f2fs) or mount "
				"an F2FS file system first");
	if (!(ff.skel = f2fs_bpf__open()))
		return it_failf(-1, "failed to open the F2FS BPF object: %s", strerror(errno));
	bpf_map__set_max_entries(ff.skel->maps.f2fs_events, (s->ringbuf_mb ? s->ringbuf_mb : 4) << 20);
	ff.skel->rodata->gcing_bit = gcing_bit();
	/* libbpf parses the kernel BTF again for the load: ours goes first, as
	 * before the hook engine's loads (hooks.c) */
	it_vmlinux_btf_release();
	if ((err = f2fs_bpf__load(ff.skel)))
		return it_failf(-1, "failed to load the F2FS tracepoint programs: %s (does the f2fs "
				"module have BTF? /sys/kernel/btf/f2fs)", strerror(-err));
	err = it_ring_join(&s->rb, bpf_map__fd(ff.skel->maps.f2fs_events), on_event, s);
	if (err)
		return it_failf(-1, "failed to open the F2FS ring buffer: %s", strerror(-err));
	return 0;
}

int it_fs_f2fs_attach(char *why, size_t wlen)
{
	int err = f2fs_bpf__attach(ff.skel);

	if (err)
		snprintf(why, wlen, "failed to attach F2FS's tracepoints (f2fs_gc_begin, f2fs_gc_end, "
			 "f2fs_background_gc, f2fs_write_checkpoint, f2fs_submit_page_write): %s",
			 strerror(-err));
	return err;
}

void it_fs_f2fs_detach(void)
{
	if (ff.skel)
		f2fs_bpf__detach(ff.skel);
}

/* the page-write counters as IT_F2FS_PAGES records, then the losses */
int it_fs_f2fs_finish(struct it_session *s)
{
	uint64_t per_cpu[s->ncpu], n[s->ncpu];
	int err = 0;

	if (!ff.skel || !s->w)
		return 0;
	for (uint32_t k = 0; k < IT_F2FS_PAGE_KINDS && !err; k++) {
		struct it_f2fs_event e = { .ts_ns = 0, .kind = IT_F2FS_PAGES, .b = k / 3, .c = k % 3 };
		if (bpf_map_lookup_elem(bpf_map__fd(ff.skel->maps.f2fs_pages), &k, n))
			continue;
		for (unsigned c = 0; c < s->ncpu; c++)
			e.a += n[c];
		if (e.a)
			err = it_writer_add_record(s->w, 0, IT_LAYER_FS, IT_CHUNK_FS_F2FS, &e, sizeof(e));
	}
	memset(per_cpu, 0, sizeof(per_cpu));
	ff.dropped = it_percpu_counter(ff.skel->maps.f2fs_drops, per_cpu, s->ncpu);
	return err ? err : it_writer_set_drops(s->w, 0, IT_LAYER_FS, per_cpu, s->ncpu);
}

void it_fs_f2fs_summary(char *out, size_t len)
{
	if (ff.skel)
		snprintf(out, len, ", %llu F2FS events (%llu lost)", (unsigned long long)ff.events,
			 (unsigned long long)ff.dropped);
	else if (len)
		*out = 0;
}

void it_fs_f2fs_free(void)
{
	f2fs_bpf__destroy(ff.skel);
	ff.skel = NULL;
}
