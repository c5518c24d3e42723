#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
"""Checks `iotrail export --format perfetto`'s JSON trace against the
report's JSON of the same trace, decoding the trace on its own (python's
json, nothing of iotrail's):

  - slices on each thread nest (a lane never holds overlapping I/Os);
  - one block slice per I/O: as many as the report's `ios`;
  - per stage, as many slices as the report's groups count, and the same
    time (the report gives each stage's avg_ns rounded: within 1 ns per I/O);
  - NVMe command slices: the report's nvme.commands;
  - every flow has one start and one end, each inside a slice of its
    track; flows from system calls: the report's owned_ios; flows from
    block I/O to NVMe commands: the report's nvme.linked;
  - NVMe/TCP (the report has a fabric view): one fabric command slice and
    one target command slice per matched command (the report's
    fabric.matched); per fabric stage, as many slices and the same time as
    the report's fabric stages summed over its opcodes (sum_ns: exact);
    flows NVMe command -> fabric command and fabric command -> target
    command: one each per matched command;
  - a file of several machines: machine N's tracks are the processes
    named "... (mN HOST)", HOST its report's host name; the block, stage,
    NVMe, call-flow and counter checks above hold per machine against
    `iotrail report --machine N --json` (REPORT_MN.json, N = 1, 2, ...);
    a machine's tracks without its report fail; each target device I/O of
    the fabric view (tdev.q2d) starts within 1 us of a target machine's
    block slice (its clock moved onto machine 0's as the fabric view's);
  - user-space probes (the report has `uprobes`): per span, as many
    "probe" slices named by it as the report's count, their longest its
    max_ns and their sum within count/2 ns of avg_ns * count (avg_ns is
    the sum divided, rounded); "probe" instants: the hits of the probes that start
    or end no span; every slice and instant on a "probes pid P" process;
  - F2FS (the report has `f2fs`): "gc" slices == the report's GC rounds
    with an end, each the same duration (exact, as multisets); "gc (no
    end)" instants the others; "checkpoint" slices and durations the same
    against its checkpoints; "background gc" instants == its wake-ups.

usage: check_perfetto.py TRACE.json REPORT.json [REPORT_M1.json ...]
Prints one line per check; exit 1 at the first failure.
"""
import bisect
import collections
import json
import re
import sys


def ns(us):
    # "ts"/"dur" are microseconds with three decimals: exact ns
    return round(us * 1000)


def fail(msg):
    print("FAIL: " + msg)
    sys.exit(1)


def check_machine(tag, evs, rep):
    """block, stage and NVMe command slices of one machine's tracks"""
    block = [e for e in evs if e["ph"] == "X" and e["cat"] == "block"]
    if len(block) != rep["ios"]:
        fail(tag + "%d block slices, the report has %d I/Os" % (len(block), rep["ios"]))
    print(tag + "ok: %d block slices == report ios" % len(block))

    want_n = collections.Counter()
    want_ns = collections.Counter()
    for g in rep["groups"]:
        for s in g["stages"]:
            want_n[s["name"]] += s["count"]
            want_ns[s["name"]] += s["count"] * s["avg_ns"]
    got_n = collections.Counter()
    got_ns = collections.Counter()
    for e in evs:
        if e["ph"] == "X" and e["cat"] in ("stage", "block"):
            # an I/O's own slice (named by its op) is its Q2C
            name = e["name"] if e["cat"] == "stage" else "Q2C"
            got_n[name] += 1
            got_ns[name] += ns(e["dur"])
    if set(got_n) != set(want_n):
        fail(tag + "stages %s, the report has %s" % (sorted(got_n), sorted(want_n)))
    for st in sorted(want_n):
        if got_n[st] != want_n[st]:
            fail(tag + "stage %s: %d slices, the report counts %d" % (st, got_n[st], want_n[st]))
        if abs(got_ns[st] - want_ns[st]) > want_n[st]:
            fail(tag + "stage %s: slices sum to %d ns, the report to %d (+-%d)"
                 % (st, got_ns[st], want_ns[st], want_n[st]))
    print(tag + "ok: %d stages, counts and sums == report (%s)"
          % (len(want_n), ", ".join("%s %d" % (s, want_n[s]) for s in sorted(want_n))))

    nvme = [e for e in evs if e["ph"] == "X" and e["cat"] == "nvme"]
    want = rep.get("nvme", {}).get("commands", 0)
    if len(nvme) != want:
        fail(tag + "%d NVMe command slices, the report has %d commands" % (len(nvme), want))
    print(tag + "ok: %d NVMe command slices == report nvme.commands" % len(nvme))


def main():
    trace = json.load(open(sys.argv[1]))
    reps = [json.load(open(f)) for f in sys.argv[2:]]
    rep = reps[0]
    evs = trace["traceEvents"]
    # machine N's processes: "block nullb0 (mN HOST)"
    machine_of = collections.defaultdict(int)
    for e in evs:
        if e["ph"] == "M" and e["name"] == "process_name":
            m = re.search(r" \(m(\d+) (.*)\)$", e["args"]["name"])
            if m:
                n = int(m.group(1))
                if n >= len(reps):
                    fail("process %r of machine %d: give report --machine %d --json"
                         % (e["args"]["name"], n, n))
                host = reps[n]["host"]["hostname"]
                if m.group(2) != host:
                    fail("process %r: machine %d's host is %s" % (e["args"]["name"], n, host))
                machine_of[e["pid"]] = n
    by_track = collections.defaultdict(list)
    for e in evs:
        if e["ph"] == "X":
            if not e.get("name"):
                fail("a %s slice at %s has no name" % (e.get("cat"), e["ts"]))
            by_track[(e["pid"], e["tid"])].append((ns(e["ts"]), ns(e["ts"]) + ns(e["dur"]), e))

    # nesting, per track
    for key, sl in by_track.items():
        sl.sort(key=lambda s: (s[0], -(s[1] - s[0])))
        stack = []
        for a, b, e in sl:
            while stack and stack[-1] <= a:
                stack.pop()
            if stack and b > stack[-1]:
                fail("track %s: slice %s [%d, %d] overlaps its enclosing one (ends %d)"
                     % (key, e["name"], a, b, stack[-1]))
            stack.append(b)
    print("ok: slices nest on all %d tracks" % len(by_track))

    # a point is inside a slice of a track when the slices starting at or
    # before it reach it: per track, starts sorted and the ends' running max
    starts, reach = {}, {}
    for key, sl in by_track.items():
        starts[key] = [a for a, _, _ in sl]
        m, r = 0, []
        for _, b, _ in sl:
            m = max(m, b)
            r.append(m)
        reach[key] = r

    def inside(key, t):
        i = bisect.bisect_right(starts.get(key, []), t) - 1
        return i >= 0 and reach[key][i] >= t

    for n, r in enumerate(reps):
        check_machine("machine %d: " % n if len(reps) > 1 else "",
                      [e for e in evs if machine_of[e.get("pid")] == n], r)

    # flows: one s and one f per id, each inside a slice of its track
    ends = collections.defaultdict(dict)
    for e in evs:
        if e["ph"] in ("s", "f"):
            if e["ph"] in ends[e["id"]]:
                fail("flow %d has two '%s' events" % (e["id"], e["ph"]))
            ends[e["id"]][e["ph"]] = e
    from_calls = collections.Counter()
    to_nvme = collections.Counter()
    to_fabric = to_target = 0
    cats = {key: {x[2]["cat"] for x in sl} for key, sl in by_track.items()}
    for fid, pair in ends.items():
        if set(pair) != {"s", "f"}:
            fail("flow %d has only %s" % (fid, list(pair)))
        for e in pair.values():
            t = ns(e["ts"])
            if not inside((e["pid"], e["tid"]), t):
                fail("flow %d: its '%s' at %d is in no slice of track (%d, %d)"
                     % (fid, e["ph"], t, e["pid"], e["tid"]))
        s, f = pair["s"], pair["f"]
        src = cats[(s["pid"], s["tid"])]
        dst = cats[(f["pid"], f["tid"])]
        m = machine_of[s["pid"]]
        if machine_of[f["pid"]] != m and ("block" in dst or "nvme" in dst):
            fail("flow %d links machine %d to machine %d" % (fid, m, machine_of[f["pid"]]))
        if "syscall" in src and "block" in dst:
            from_calls[m] += 1
        elif "block" in src and "nvme" in dst:
            to_nvme[m] += 1
        elif "nvme" in src and "fabric" in dst:
            to_fabric += 1
        elif "fabric" in src and "nvmet" in dst:
            to_target += 1
        else:
            fail("flow %d links %s to %s" % (fid, sorted(src), sorted(dst)))
    for n, r in enumerate(reps):
        tag = "machine %d: " % n if len(reps) > 1 else ""
        want = r.get("syscall_block", {}).get("owned_ios", 0)
        if from_calls[n] != want:
            fail(tag + "%d flows from system calls, the report's calls own %d I/Os"
                 % (from_calls[n], want))
        want = r.get("nvme", {}).get("linked", 0)
        if to_nvme[n] != want:
            fail(tag + "%d flows to NVMe commands, the report links %d" % (to_nvme[n], want))
        print(tag + "ok: %d flows call -> I/O == owned_ios, %d I/O -> NVMe command == nvme.linked"
              % (from_calls[n], to_nvme[n]))

    fab = rep.get("fabric")
    if fab is None:
        if any(e["ph"] == "X" and e["cat"].startswith(("fabric", "nvmet")) for e in evs):
            fail("fabric slices, the report has no fabric view")
    else:
        matched = fab["matched"]
        for cat in ("fabric", "nvmet"):
            n = sum(1 for e in evs if e["ph"] == "X" and e["cat"] == cat)
            if n != matched:
                fail("%d %s command slices, the report matched %d" % (n, cat, matched))
        want_n = collections.Counter()
        want_ns = collections.Counter()
        for op in fab["by_opcode"].values():
            for s in op["stages"]:
                if s["count"]:
                    want_n[s["name"]] += s["count"]
                    want_ns[s["name"]] += s["sum_ns"]
        got_n = collections.Counter()
        got_ns = collections.Counter()
        own = {"fabric": "command", "nvmet": "target"}  # a command's own slice is its stage
        for e in evs:
            if e["ph"] == "X" and e["cat"] in ("fabric.stage", "fabric", "nvmet"):
                name = own.get(e["cat"], e["name"])
                got_n[name] += 1
                got_ns[name] += ns(e["dur"])
        if set(got_n) != set(want_n):
            fail("fabric stages %s, the report has %s" % (sorted(got_n), sorted(want_n)))
        for st in sorted(want_n):
            if got_n[st] != want_n[st] or got_ns[st] != want_ns[st]:
                fail("fabric stage %s: %d slices summing to %d ns, the report %d summing to %d"
                     % (st, got_n[st], got_ns[st], want_n[st], want_ns[st]))
        if to_fabric != matched or to_target != matched:
            fail("%d flows NVMe -> fabric command, %d fabric -> target command; the report "
                 "matched %d" % (to_fabric, to_target, matched))
        print("ok: %d fabric and target command slices == report fabric.matched; %d fabric "
              "stages, counts and sums == report (%s); flows NVMe -> fabric -> target %d, %d"
              % (matched, len(want_n), ", ".join("%s %d us" % (s, want_ns[s] // 1000)
                                                 for s in sorted(want_n)), to_fabric, to_target))

    check_probes(evs, rep)
    check_f2fs(evs, rep)

    # the target machines' block I/O on machine 0's clock as the fabric view
    # placed their commands: each target device I/O (tdev.q2d starts at its
    # Q) starts where a block slice of a machine 1.. does (within 1 us: the
    # join maps each point, the export shifts each I/O as a whole)
    if len(reps) > 1:
        tq = sorted(ns(e["ts"]) for e in evs if machine_of[e["pid"]] and e["ph"] == "X"
                    and e["cat"] == "block")
        tdev = [ns(e["ts"]) for e in evs if e["ph"] == "X" and e["name"] == "tdev.q2d"]
        for t in tdev:
            i = bisect.bisect_left(tq, t - 1000)
            if i == len(tq) or tq[i] > t + 1000:
                fail("the target device I/O at %d (tdev.q2d) has no block slice of a target "
                     "machine there: its clock not moved onto machine 0's?" % t)
        print("ok: %d target device I/Os (tdev.q2d) start with a target machine's block slice"
              % len(tdev))

    # queue depth: one sample per I/O the report samples at issue, one per
    # NVMe command at submission
    for n, r in enumerate(reps):
        tag = "machine %d: " % n if len(reps) > 1 else ""
        mine = [e for e in evs if e["ph"] == "C" and machine_of[e["pid"]] == n]
        qd = [e for e in mine if e["name"] == "queue depth"]
        want = sum(d["at_issue"]["ios"] for d in r["qd"].values()) + \
            r.get("nvme", {}).get("commands", 0)
        if len(qd) != want:
            fail(tag + "%d queue depth samples, the report samples %d" % (len(qd), want))
        iops = sum(e["args"]["value"] for e in mine if e["name"] == "IOPS")
        if iops != r["ios"] * 10:  # completions per 100 ms, as per second
            fail(tag + "IOPS counters add up to %d I/Os, the report has %d"
                 % (iops // 10, r["ios"]))
        print(tag + "ok: %d queue depth samples == report's; IOPS counters add up to the "
              "report's ios" % len(qd))

SPAN_SUFFIXES = (("__start", "__done"), ("-start", "-done"), ("__begin", "__end"))


def check_probes(evs, rep):
    up = rep.get("uprobes")
    mine = [e for e in evs if e.get("cat") == "probe"]
    if up is None:
        if mine:
            fail("%d probe events, the report has no user-space probes" % len(mine))
        return
    procs = {e["pid"]: e["args"]["name"] for e in evs
             if e["ph"] == "M" and e["name"] == "process_name"}
    for e in mine:
        if not procs.get(e["pid"], "").startswith("probes pid "):
            fail("probe event %s on process %r" % (e["name"], procs.get(e["pid"])))
    span_probes = set()
    for sp in up["spans"]:
        for a, b in SPAN_SUFFIXES:
            span_probes.update((sp["name"] + a, sp["name"] + b))
        sl = [ns(e["dur"]) for e in mine if e["ph"] == "X" and e["name"] == sp["name"]]
        if len(sl) != sp["count"]:
            fail("span %s: %d slices, the report has %d" % (sp["name"], len(sl), sp["count"]))
        total = sum(sl)
        if sl and (max(sl) != sp["max_ns"] or
                   2 * abs(total - sp["avg_ns"] * sp["count"]) > sp["count"]):
            fail("span %s: slices sum to %d ns, longest %d; the report: avg %d x %d, max %d"
                 % (sp["name"], total, max(sl), sp["avg_ns"], sp["count"], sp["max_ns"]))
        print("ok: span %s: %d slices == report count, sum %d ns ~ avg_ns x count, max == "
              "max_ns" % (sp["name"], len(sl), total))
    want = sum(p["hits"] for p in up["probes"] if p["label"] not in span_probes)
    got = sum(1 for e in mine if e["ph"] == "i")
    if got != want:
        fail("%d probe instants, the report has %d hits of probes outside spans" % (got, want))
    print("ok: %d probe instants == the report's hits of probes outside spans" % got)


def check_f2fs(evs, rep):
    f2 = rep.get("f2fs")
    mine = [e for e in evs if e.get("cat") == "f2fs"]
    if f2 is None:
        if mine:
            fail("%d F2FS events, the report has no F2FS section" % len(mine))
        return
    for what, rows in (("gc", f2["gc_rounds"]), ("checkpoint", f2["checkpoints"])):
        want = sorted(r["duration_ns"] for r in rows if "duration_ns" in r)
        got = sorted(ns(e["dur"]) for e in mine if e["ph"] == "X" and e["name"] == what)
        if got != want:
            fail("%s slices of %s ns, the report's %s" % (what, got, want))
        open_ = sum(1 for e in mine if e["ph"] == "i" and e["name"] == what + " (no end)")
        if open_ != len(rows) - len(want):
            fail("%d %s without an end, the report has %d" % (open_, what, len(rows) - len(want)))
        print("ok: %d %s slices, durations == the report's (%s ns); %d without an end"
              % (len(got), what, ", ".join(map(str, got)), open_))
    bg = sum(1 for e in mine if e["ph"] == "i" and e["name"] == "background gc")
    if bg != f2["background_gc_wakeups"]:
        fail("%d background gc instants, the report has %d wake-ups"
             % (bg, f2["background_gc_wakeups"]))
    print("ok: %d background gc instants == the report's wake-ups" % bg)


if __name__ == "__main__":
    main()
