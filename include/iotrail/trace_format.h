/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The trace file on disk (see doc/trace-format.md). Little-endian, as
 * written by the recording host; the reader rejects anything else.
 *
 *   file header | HOST | DEVICES | LAYERS | [NVMF]
 *               | [HOST, DEVICES, CLOCK, NVMF, CLOCK_EST, CLOCK_WINDOWS of other machines]
 *               | chunk | chunk | ... | DROPS, MISSED per layer | END
 *
 * Every chunk is a 40-byte header (32 bytes in versions 1 and 2) and a
 * payload, packed, compressed with zstd or stored. Each chunk header names
 * the machine (0: the recording one) and the layer (enum it_layer in
 * event.h; 0: the file's own chunks) its records belong to. A file cut short (crash, full disk, kill -9) is readable up to its
 * last complete chunk: each chunk carries its own lengths and CRCs, so the
 * reader stops cleanly at the first incomplete or damaged one.
 */
#ifndef IOTRAIL_TRACE_FORMAT_H
#define IOTRAIL_TRACE_FORMAT_H

#include <stdint.h>

#define IT_TRACE_MAGIC   "IOTRAIL\0"   /* 8 bytes */
#define IT_TRACE_VERSION 4u
#define IT_CHUNK_MAGIC   0x4b435449u   /* "ITCK" */

struct it_file_header {
	char     magic[8];
	uint32_t version;
	uint32_t header_size;   /* sizeof(struct it_file_header) */
	uint32_t event_size;    /* sizeof(struct it_event) when written */
	uint32_t reserved[3];
};

/*
 * Chunk types. The file's own (HOST, DEVICES, DROPS, END, MISSED, CLOCK,
 * LAYERS) are read by src/tracefile.c; the others hold a layer's records,
 * as that layer's entry in the LAYERS manifest describes them.
 */
enum it_chunk_type {
	IT_CHUNK_HOST = 1,      /* one struct it_host_rec, of the chunk's machine */
	IT_CHUNK_DEVICES = 2,   /* array of struct it_device_rec */
	IT_CHUNK_EVENTS = 3,    /* array of struct it_event (event.h) */
	IT_CHUNK_DROPS = 4,     /* array of uint64_t: records of the chunk's layer lost, per CPU */
	IT_CHUNK_END = 5,       /* one struct it_end_rec: the file was closed cleanly */
	/* syscall layer (include/iotrail/syscall.h) */
	IT_CHUNK_SYSCALLS = 6,  /* array of struct it_sys_event: one per system call */
	IT_CHUNK_SYSSIDE = 7,   /* its side records (paths, names, comms), each padded to 8 bytes */
	IT_CHUNK_SYSDROPS = 8,  /* versions 1-2: the syscall layer's DROPS (version 3: DROPS, layer 3) */
	IT_CHUNK_MISSED = 9,    /* one uint64_t: probe runs of the chunk's layer the kernel skipped */
	IT_CHUNK_CLOCK = 10,    /* one struct it_clock_rec (version 3) */
	IT_CHUNK_LAYERS = 11,   /* array of struct it_layer_rec: the layers manifest (version 3) */
	IT_CHUNK_NOTE = 12,     /* one struct it_note_rec: a warning about a machine's data (head) */
	IT_CHUNK_NVMF = 13,     /* array of struct it_nvmf_rec: a machine's NVMe-oF endpoints (head) */
	IT_CHUNK_CLOCK_EST = 14, /* one struct it_clock_est_rec: the clock from matched I/Os (head) */
	IT_CHUNK_CLOCK_WINDOWS = 15, /* array of struct it_clock_window_rec: its windows (head) */
	/* uprobe layer (src/layers/uprobe/uprobe.h) */
	IT_CHUNK_UPROBE_DEFS = 16, /* array of struct it_uprobe_def: the probes asked for */
	IT_CHUNK_UPROBE_HITS = 17, /* array of struct it_uprobe_hit: one per probe hit */
	/* fs layer (src/extents/snapshot.h) */
	IT_CHUNK_FS_EXTENTS = 18, /* variable records: extents snapshots (record --extents) */
	IT_CHUNK_FS_F2FS = 19,    /* array of struct it_f2fs_event (src/layers/fs/f2fs.h) */
};

enum it_compression {
	IT_COMP_NONE = 0,
	IT_COMP_ZSTD = 1,
	IT_COMP_PACK = 2,       /* struct it_event records only: src/evpack.c's encoding (version 2+) */
	IT_COMP_WORDS = 3,      /* other fixed-size records of up to 16 64-bit words, packed
				 * word by word (src/evpack.c; version 4+) */
};

struct it_chunk_header {
	uint32_t magic;         /* IT_CHUNK_MAGIC */
	uint16_t type;          /* enum it_chunk_type */
	uint16_t compression;   /* enum it_compression */
	uint32_t raw_len;       /* payload bytes after decompression */
	uint32_t stored_len;    /* payload bytes in the file */
	uint32_t count;         /* records in the payload */
	uint32_t payload_crc;   /* crc32 (zlib) of this header (this field as 0), then the stored payload */
	uint64_t dropped_total; /* records of this layer lost so far, all CPUs (cumulative) */
	/* version 3 */
	uint16_t machine;       /* 0: the recording machine; others: merged in */
	uint16_t layer;         /* enum it_layer; 0: the file's own chunks */
	uint32_t reserved;      /* 0 */
};
/* Versions 1 and 2: the header ends after dropped_total. */
#define IT_CHUNK_HEADER_V2_SIZE 32u

/* Host facts: everything a report needs besides the events. */
struct it_host_rec {
	char     hostname[64];
	char     kernel[64];        /* uname -r */
	char     boot_id[40];       /* /proc/sys/kernel/random/boot_id */
	char     clock[16];         /* clock of it_event.ts_ns: "monotonic" */
	uint32_t ncpus;             /* possible CPUs (size of the drops array) */
	uint32_t page_size;
	uint64_t start_realtime_ns; /* both clocks read together at start */
	uint64_t start_monotonic_ns;
	char     command[256];      /* the iotrail command line that recorded */
	char     layers[64];        /* layers recorded, e.g. "block" */
	char     hooks[256];        /* hook used per layer, e.g. "block=tp_btf" */
};

struct it_device_rec {
	uint32_t dev;               /* kernel encoding, as in it_event.dev */
	char     name[32];          /* e.g. "loop0", "nvme0n1" */
	char     model[64];         /* device/model, "" when absent */
	char     scheduler[32];     /* active I/O scheduler, "none", or "" (bio-based) */
	uint32_t logical_block_size;
	uint32_t physical_block_size;
	uint32_t max_sectors_kb;
	uint32_t max_hw_sectors_kb; /* MDTS for NVMe */
	uint32_t nr_requests;       /* 0 for bio-based devices */
	uint32_t optimal_io_size;   /* bytes, 0 when the device gives none */
	uint32_t rotational;
	uint32_t zoned;             /* 0 none, 1 host-aware, 2 host-managed */
	uint32_t nr_zones;
	uint32_t blk_mq;            /* 1 request-based (blk-mq), 0 bio-based */
	uint64_t size_sectors;
	uint64_t zone_sectors;
};

/*
 * The layers manifest (LAYERS chunk, written at open): one record per layer
 * in the recording, with the record types its chunks hold. A reader tells
 * which layers a file has, and the size and encoding of each chunk type of
 * each layer, from it alone.
 */
#define IT_LAYER_MAX_RECORDS 6
struct it_record_type {
	uint16_t chunk_type;        /* enum it_chunk_type (not one of the file's own) */
	uint16_t encoding;          /* IT_COMP_PACK (struct it_event, 64 bytes), IT_COMP_WORDS
				     * (a size of 8 to 128, a multiple of 8) or IT_COMP_ZSTD */
	uint32_t size;              /* bytes per record; 0: variable, each padded to 8 bytes */
	char     name[24];          /* e.g. "it_sys_event" */
};
struct it_layer_rec {
	uint16_t id;                /* enum it_layer, never 0 */
	uint16_t version;           /* of the layer's record layouts; 0 for v1/v2 files */
	uint16_t nrecords;          /* entries used in records[] */
	uint16_t reserved;
	char     name[24];          /* e.g. "block" */
	struct it_record_type records[IT_LAYER_MAX_RECORDS];
};

/*
 * How one machine's clock relates to another's (CLOCK chunk): a timestamp
 * t of machine is t + offset_ns on ref_machine's clock, give or take
 * uncertainty_ns.
 */
struct it_clock_rec {
	uint16_t machine;
	uint16_t ref_machine;
	uint32_t reserved;
	int64_t  offset_ns;
	uint64_t uncertainty_ns;
	char     method[72];        /* e.g. "ntp-like 4-timestamp exchange, 16 samples" */
};

/*
 * The estimate of how a target machine's clock relates to machine 0's,
 * made by `record --target` at its end from the matched I/Os (the report's
 * own code, src/layers/fabric/clock.h: it_clock_est) and stored so that a
 * reader needs no join to place the machine's events; the report uses it
 * when present (and says so). CLOCK_EST (one record) and CLOCK_WINDOWS
 * (each window's fastest I/O: the drift over time) are chunks of the
 * target machine, in the head after its CLOCK.
 */
enum it_clock_est_flags {
	IT_CLOCK_EST_DRIFT_KNOWN = 1,     /* two windows or more, a second apart */
	IT_CLOCK_EST_ALL_BOUNDS_MEET = 2, /* one line meets every I/O's bound */
};
struct it_clock_est_rec {
	uint16_t machine;
	uint16_t ref_machine;       /* 0 */
	uint16_t method;            /* 1: matched I/Os, 2: the agent exchange alone (clock.h) */
	uint16_t flags;             /* enum it_clock_est_flags */
	int64_t  offset_ns;         /* at ref_ns of machine's clock: ref_machine = machine + offset */
	uint64_t ref_ns;
	double   slope;             /* offset change per ns of machine's clock (drift = -slope) */
	double   drift_bound_ppm;
	uint64_t uncertainty_ns;    /* anywhere in the trace */
	uint64_t uncertainty_mid_ns; /* at its middle I/O; 0: not known apart */
	uint64_t samples, rejected, windows;
	uint64_t min_rtt_ns, max_rtt_ns;
};
struct it_clock_window_rec {
	uint64_t at_ns;             /* machine's clock */
	int64_t  offset_ns;
	uint64_t rtt_ns;
};

/*
 * A machine's NVMe over Fabrics endpoints (NVMF chunk, in the head, at most
 * one per machine; files without one are read as before): what joins an
 * initiator's controller to the target machine serving it. An initiator's
 * controller (/sys/class/nvme/nvmeN: transport, address, subsysnqn) and a
 * target's port with a subsystem it exports (configfs nvmet/ports/N:
 * addr_trtype, addr_traddr, addr_trsvcid, and each link in subsystems/).
 */
enum it_nvmf_role {
	IT_NVMF_HOST_CTRL = 1,      /* id: the controller instance N of nvmeN */
	IT_NVMF_TARGET_PORT = 2,    /* id: the nvmet port number; nqn: one subsystem it exports */
};
struct it_nvmf_rec {
	uint16_t role;              /* enum it_nvmf_role */
	uint16_t reserved;          /* 0 */
	uint32_t id;
	char     transport[8];      /* "tcp", "rdma", "fc", "loop" */
	char     traddr[64];        /* "10.0.9.2"; a target port may listen on 0.0.0.0 or :: */
	char     trsvcid[16];       /* "4420" */
	char     nqn[224];          /* the subsystem's NQN (223 characters at most) */
};

/*
 * A warning about one machine's data that a report must show (NOTE chunk,
 * in the head): e.g. the target's agent was lost mid-run, so its records
 * end at its last pull.
 */
enum it_note_kind {
	IT_NOTE_LOST = 1,           /* the machine's data ends early: its agent was lost */
	IT_NOTE_TASK = 2,           /* a piece of the task's resolved settings (INI text) */
	IT_NOTE_TASK_FILE = 3,      /* a piece of the task file's text, as given */
	IT_NOTE_OVERWRITTEN = 4,    /* a flight file: events the memory bound overwrote (text: N) */
};
struct it_note_rec {
	uint16_t machine;
	uint16_t kind;              /* enum it_note_kind */
	uint32_t reserved;          /* 0 */
	uint64_t at_ns;             /* IT_NOTE_LOST: when it was lost, machine 0's clock */
	char     text[112];         /* one line, e.g. "agent 10.0.0.2:4790 lost: connection reset" */
};

struct it_end_rec {
	uint64_t end_monotonic_ns;
	uint64_t events_total;      /* events written (EVENTS chunks, every machine) */
	uint64_t dropped_total;     /* events lost: the event layer's DROPS on machine 0 */
	uint64_t chunks;            /* chunks before this one */
};

#endif
