# iotrail build. `make` builds build/iotrail; `make test` runs every test;
# `make demo` traces a short fio job on a loop device and prints the report.
# Missing Debian packages are installed first by scripts/install-deps.sh.

# Builds run one job per core unless -j is given (sub-makes share the top
# one's jobs): a fresh clone's build, the fuzz targets' sanitizer build
# included, takes 72 s instead of 123 on two cores, a minute of the time
# `make test` is kept within.
ifeq ($(MAKELEVEL)$(filter -j%,$(MAKEFLAGS)),0)
MAKEFLAGS += -j$(shell nproc)
endif

CC       ?= gcc
CLANG    ?= clang
BPFTOOL  ?= bpftool
LLVM_STRIP ?= llvm-strip
BUILD    := build
ARCH     := $(shell uname -m | sed -e 's/x86_64/x86/' -e 's/aarch64/arm64/')

CFLAGS   ?= -O2 -g
CFLAGS   += -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -Iinclude -Isrc -I$(BUILD)
BPF_CFLAGS := -g -O2 -target bpf -D__TARGET_ARCH_$(ARCH) -Wall -Werror \
	      -I$(BUILD) -Iinclude -Ibpf
LDLIBS_CORE := -lzstd -lz -lpthread -lm -linih
LDLIBS   := -lbpf -lelf -ljson-c $(LDLIBS_CORE)

# A layer's folder, src/layers/NAME/: NAME.bpf.c (its BPF program, a
# skeleton), record.c and record_*.c (its recording side: libbpf), every
# other .c pure C (records, analysis, report: in the core library with the
# trace file).
LAYER_DIRS := $(wildcard src/layers/*)
# the online mode, src/online/: its own BPF program (online.bpf.c), loader
# and commands (libbpf), the rest pure C (snapshots, exposition, HTTP)
ONLINE_APP := src/online/collect.c src/online/top.c src/online/serve.c
# src/untraced/: `iotrail probe --untraced`, the threads this kernel runs no
# probe for (its BPF program on sched_switch and its loader)
BPF_SRCS  := $(wildcard src/layers/*/*.bpf.c) src/online/online.bpf.c src/untraced/untraced.bpf.c
SKELS     := $(patsubst %.bpf.c,$(BUILD)/%.skel.h,$(notdir $(BPF_SRCS))) $(BUILD)/syscall_compat.skel.h
LAYER_RECORD := $(wildcard src/layers/*/record.c src/layers/*/record_*.c)
# pure C: trace file, analysis, exporters (no libbpf; unit-tested)
CORE_SRCS := src/tracefile.c src/writeq.c src/evring.c src/evpack.c src/layer_table.c src/scope_ids.c src/nvmf.c \
	     src/trace_merge.c src/task.c src/flight.c src/agent/proto.c src/agent/query.c src/agent/query_target.c \
	     $(filter-out %.bpf.c $(LAYER_RECORD),$(wildcard src/layers/*/*.c)) \
	     $(wildcard src/analyze/*.c) $(wildcard src/export/*.c) $(wildcard src/extents/*.c) \
	     $(wildcard src/usdt/*.c) $(filter-out %.bpf.c $(ONLINE_APP),$(wildcard src/online/*.c)) \
	     src/cost/cost_model.c src/cost/cost_output.c
# user space that needs libbpf: the commands, the hook engine, recording
APP_SRCS  := $(filter-out $(CORE_SRCS),$(wildcard src/*.c src/agent/*.c)) $(LAYER_RECORD) $(ONLINE_APP) \
	     src/cost/cost.c src/untraced/untraced.c
APP_OBJS  := $(patsubst %.c,$(BUILD)/obj/%.o,$(APP_SRCS))
CORE_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(CORE_SRCS))
UNIT_SRCS := $(wildcard tests/unit/*.c)
UNIT_OBJS := $(patsubst %.c,$(BUILD)/obj/%.o,$(UNIT_SRCS))
BENCH_SRCS := $(filter-out bench/hook_floor%,$(wildcard bench/*.c))
BENCH_BINS := $(patsubst bench/%.c,$(BUILD)/bench/%,$(BENCH_SRCS)) \
	      $(BUILD)/bench/hook_floor $(BUILD)/bench/hook_floor.bpf.o
# programs the integration tests run (build/tests/NAME)
PROG_BINS := $(patsubst tests/progs/%.c,$(BUILD)/tests/%,$(wildcard tests/progs/*.c))

# keep the BPF objects and bench objects make sees as intermediate
.SECONDARY:

.PHONY: all deps test test-unit test-host test-vm demo bench clean fuzz fuzz-build fuzz-agent test-cost
all: deps $(BUILD)/iotrail $(BUILD)/unit-tests $(BENCH_BINS) $(PROG_BINS) $(BUILD)/tests/slowfs \
	$(BUILD)/tests/split_trace $(BUILD)/tests/many_devices $(BUILD)/tests/cost_spin

deps:
	@scripts/install-deps.sh

# order-only on deps: with make -j the tools must be installed before anything builds
$(BUILD)/vmlinux.h: | deps
	@mkdir -p $(@D)
	@test -r /sys/kernel/btf/vmlinux || { echo "make: /sys/kernel/btf/vmlinux is missing: this kernel has no BTF (CONFIG_DEBUG_INFO_BTF=y is needed to build the BPF programs)" >&2; exit 1; }
	$(BPFTOOL) btf dump file /sys/kernel/btf/vmlinux format c > $@.tmp && mv $@.tmp $@

vpath %.bpf.c $(LAYER_DIRS) src/online src/untraced
$(BUILD)/bpf/%.bpf.o: %.bpf.c $(BUILD)/vmlinux.h $(wildcard bpf/*.bpf.h) $(wildcard include/iotrail/*.h)
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@
	$(LLVM_STRIP) -g $@

# the syscall layer again for kernels without bpf_rdonly_cast (before 6.2):
# the same source with probe reads where it loads through typed pointers
$(BUILD)/bpf/syscall_compat.bpf.o: src/layers/syscall/syscall.bpf.c $(BUILD)/vmlinux.h $(wildcard bpf/*.bpf.h) $(wildcard include/iotrail/*.h)
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -DIT_SYS_COMPAT -c $< -o $@
	$(LLVM_STRIP) -g $@

# libbpf's usdt.bpf.h includes <linux/errno.h>, which needs the multiarch asm/
$(BUILD)/bpf/uprobe.bpf.o: BPF_CFLAGS += -idirafter /usr/include/$(shell $(CC) -dumpmachine)

$(BUILD)/%.skel.h: $(BUILD)/bpf/%.bpf.o
	$(BPFTOOL) gen skeleton $< > $@.tmp && mv $@.tmp $@

$(BUILD)/obj/%.o: %.c | deps
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) -MMD -MP -c $< -o $@

# the loader includes the skeletons
$(APP_OBJS): $(SKELS)

# rebuilt whole: a member whose source moved away must not linger
$(BUILD)/libitcore.a: $(CORE_OBJS)
	rm -f $@
	ar rcs $@ $^

$(BUILD)/iotrail: $(APP_OBJS) $(BUILD)/libitcore.a
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS)

$(BUILD)/unit-tests: $(UNIT_OBJS) $(BUILD)/libitcore.a
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS_CORE)

$(BUILD)/obj/tests/%.o: CFLAGS += -Itests
$(BUILD)/obj/bench/%.o: CFLAGS += -Itests

$(BUILD)/bench/%: $(BUILD)/obj/bench/%.o $(BUILD)/libitcore.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS_CORE)

# the floor under the block probes (bench/overhead.sh): libbpf, no skeleton
$(BUILD)/bench/hook_floor.bpf.o: bench/hook_floor.bpf.c $(BUILD)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/bench/hook_floor: bench/hook_floor.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< -o $@ -lbpf -lelf

# test tool: one FUSE file whose reads and writes sleep a fixed delay
$(BUILD)/tests/slowfs: tests/tools/slowfs.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< -o $@ $$(pkg-config --cflags --libs fuse3)

# test tool: a loopback NVMe/TCP trace as two machines with a known clock
$(BUILD)/tests/split_trace: tests/tools/split_trace.c $(BUILD)/libitcore.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS_CORE)

# test tool: a trace naming many block devices (test_errors.sh)
$(BUILD)/tests/many_devices: tests/tools/many_devices.c $(BUILD)/libitcore.a
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS_CORE)

# test tool: a BPF operator of known cost per I/O (bench/cost_truth.sh)
$(BUILD)/tests/cost_spin.bpf.o: tests/tools/cost_spin.bpf.c $(BUILD)/vmlinux.h
	@mkdir -p $(@D)
	$(CLANG) $(BPF_CFLAGS) -c $< -o $@

$(BUILD)/tests/cost_spin.skel.h: $(BUILD)/tests/cost_spin.bpf.o
	$(BPFTOOL) gen skeleton $< name cost_spin_bpf > $@.tmp && mv $@.tmp $@

$(BUILD)/tests/cost_spin: tests/tools/cost_spin.c $(BUILD)/tests/cost_spin.skel.h
	$(CC) $(CFLAGS) -I$(BUILD)/tests $< -o $@ -lbpf -lelf

$(BUILD)/tests/%: tests/progs/%.c
	@mkdir -p $(@D)
	$(CC) $(CFLAGS) $< -o $@

# ---- fuzzing: libFuzzer targets with ASan and UBSan (tests/fuzz/) ----
# build/fuzz/fuzz_NAME for each tests/fuzz/fuzz_NAME.c: the sources are
# compiled again with clang and the sanitizers into build/fuzz/obj/.
# `make fuzz` runs each target (or FUZZ_TARGETS="trace args") FUZZ_SECONDS,
# one at a time; `make test` runs each a few
# seconds on its corpus (tests/fuzz/run-tests). Without libFuzzer's runtime
# (libclang-rt-dev) the targets are not built and those tests say SKIP.
FUZZ_SECONDS ?= 60
FUZZ_CFLAGS := -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined \
	       -fno-sanitize-recover=undefined -fsanitize=fuzzer-no-link \
	       -std=gnu11 -Wall -Wextra -Werror -D_GNU_SOURCE -Iinclude -Isrc -I$(BUILD)
FUZZ_RT   = $(shell $(CLANG) -print-resource-dir 2>/dev/null)/lib/linux/libclang_rt.fuzzer-$(shell uname -m).a
FUZZ_BINS := $(patsubst tests/fuzz/%.c,$(BUILD)/fuzz/%,$(wildcard tests/fuzz/fuzz_*.c))
FUZZ_CORE_OBJS := $(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$(CORE_SRCS))
FUZZ_APP_OBJS  := $(patsubst %.c,$(BUILD)/fuzz/obj/%.o,$(filter-out src/main.c,$(APP_SRCS)))

$(BUILD)/fuzz/obj/%.o: %.c | deps
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_CFLAGS) -MMD -MP -c $< -o $@

$(FUZZ_APP_OBJS): $(SKELS)

# the trace file and the analysis: pure C
$(BUILD)/fuzz/fuzz_trace: $(BUILD)/fuzz/obj/tests/fuzz/fuzz_trace.o $(FUZZ_CORE_OBJS)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $^ -o $@ $(LDLIBS_CORE)

# the query instructions' text parser (src/agent/query.c): pure C
$(BUILD)/fuzz/fuzz_query: $(BUILD)/fuzz/obj/tests/fuzz/fuzz_query.o $(FUZZ_CORE_OBJS)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $^ -o $@ $(LDLIBS_CORE)

# the HTTP request parser of iotrail serve (src/online/http.c): pure C
$(BUILD)/fuzz/fuzz_http: $(BUILD)/fuzz/obj/tests/fuzz/fuzz_http.o $(FUZZ_CORE_OBJS)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $^ -o $@ $(LDLIBS_CORE)

# the task file and the filter's parser (src/task.c, libinih): pure C
$(BUILD)/fuzz/fuzz_task: $(BUILD)/fuzz/obj/tests/fuzz/fuzz_task.o $(FUZZ_CORE_OBJS)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $^ -o $@ $(LDLIBS_CORE)

# record's options: the commands' objects (libbpf), main.c left out
$(BUILD)/fuzz/fuzz_args: $(BUILD)/fuzz/obj/tests/fuzz/fuzz_args.o $(FUZZ_APP_OBJS) $(FUZZ_CORE_OBJS)
	$(CLANG) $(FUZZ_CFLAGS) -fsanitize=fuzzer $^ -o $@ $(LDLIBS)

# the generator of the seed tests/fuzz/corpus/trace/v3-two-machines (plain build)
$(BUILD)/fuzz/seed_machines: $(BUILD)/obj/tests/fuzz/seed_machines.o $(BUILD)/libitcore.a
	$(CC) $(CFLAGS) $^ -o $@ $(LDLIBS_CORE)

# builds the targets where libFuzzer's runtime is installed, else says why not.
# After the library and the skeletons: the sub-make shares them, and `make
# test` builds `all` beside it (-j): both rebuilt them at once (rm + ar of
# libitcore.a while another target linked it: a CI run failed so).
fuzz-build: | deps $(BUILD)/libitcore.a $(SKELS)
	@if [ -r "$(FUZZ_RT)" ]; then $(MAKE) --no-print-directory $(FUZZ_BINS) $(BUILD)/fuzz/seed_machines; \
	else echo "make: fuzz targets not built: libFuzzer's runtime $(FUZZ_RT) is missing (Debian: libclang-rt-dev)"; fi

fuzz: fuzz-build
	@tests/fuzz/run $(FUZZ_SECONDS) $(FUZZ_TARGETS)

# Every suite; prints one closing line "N passed, N failed, N skipped".
test: all fuzz-build
	@scripts/install-deps.sh --vm
	@tests/run

test-unit: all fuzz-build
	@tests/run unit

test-host: all
	@tests/run host

test-vm: all
	@scripts/install-deps.sh --vm
	@tests/run vm

demo: all
	@scripts/demo.sh

# The agent protocol's parser under libFuzzer with ASan and UBSan, from the
# seeds in tests/fuzz/corpus/agent_msg (copied: the run adds to its copy).
# FUZZ_SECONDS bounds the run; `make test` fuzzes it 5 s with the other
# targets (tests/fuzz/run --test, in the unit suite).
FUZZ_SECONDS ?= 60
FUZZ_FLAGS := -g -O1 -fsanitize=fuzzer,address,undefined -fno-sanitize-recover=undefined \
	      -std=gnu11 -D_GNU_SOURCE -Iinclude -Isrc
$(BUILD)/fuzz/fuzz_agent_msg: tests/fuzz/fuzz_agent_msg.c src/agent/proto.c src/agent/proto.h | deps
	@mkdir -p $(@D)
	$(CLANG) $(FUZZ_FLAGS) tests/fuzz/fuzz_agent_msg.c src/agent/proto.c -o $@

fuzz-agent: $(BUILD)/fuzz/fuzz_agent_msg
	@rm -rf $(BUILD)/fuzz/corpus-agent && mkdir -p $(BUILD)/fuzz/corpus-agent
	@cp tests/fuzz/corpus/agent_msg/* $(BUILD)/fuzz/corpus-agent/
	cd $(BUILD)/fuzz && ./fuzz_agent_msg -max_total_time=$(FUZZ_SECONDS) -max_len=20000 \
		corpus-agent

bench: all
	@bench/run

# `iotrail cost` against a BPF operator of known cost (bench/cost_truth.sh):
# saturation runs of ~10 minutes under the heavy lock, so not in `make test`
test-cost: all
	@bench/cost_truth.sh

clean:
	rm -rf $(BUILD)

# Man pages (from the binary's --help: doc/man/mkman.sh) and `make install`:
# the binary, the pages and the bash completion under $(DESTDIR)$(PREFIX).
PREFIX ?= /usr/local
MANDIR ?= $(PREFIX)/share/man
BASHCOMPDIR ?= $(PREFIX)/share/bash-completion/completions
.PHONY: man install uninstall
man: $(BUILD)/man/iotrail.1
$(BUILD)/man/iotrail.1: $(BUILD)/iotrail doc/man/mkman.sh
	doc/man/mkman.sh $(BUILD)/iotrail $(BUILD)/man

install: $(BUILD)/iotrail $(BUILD)/man/iotrail.1
	install -d $(DESTDIR)$(PREFIX)/bin $(DESTDIR)$(MANDIR)/man1 $(DESTDIR)$(BASHCOMPDIR)
	install -m 0755 $(BUILD)/iotrail $(DESTDIR)$(PREFIX)/bin/iotrail
	install -m 0644 $(BUILD)/man/*.1 $(DESTDIR)$(MANDIR)/man1/
	install -m 0644 dist/bash-completion/iotrail $(DESTDIR)$(BASHCOMPDIR)/iotrail

uninstall:
	rm -f $(DESTDIR)$(PREFIX)/bin/iotrail $(DESTDIR)$(BASHCOMPDIR)/iotrail \
	      $(DESTDIR)$(MANDIR)/man1/iotrail.1 $(DESTDIR)$(MANDIR)/man1/iotrail-*.1

-include $(shell find $(BUILD)/obj $(BUILD)/fuzz/obj -name '*.d' 2>/dev/null)
