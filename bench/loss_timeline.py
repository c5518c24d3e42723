#!/usr/bin/env python3
# Where in a trace its layers lost records: every chunk header carries its
# layer's cumulative loss count so far (dropped_total; the block and
# syscall layers update it every DROPS_EVERY_NS while recording), so the
# chunks where it grows say where the losses happened. Printed per step:
# the chunk's offset, that offset as a share of the file and of the
# recording's seconds (SECONDS: the file grows about evenly with time under
# steady load; an estimate, not a timestamp), the layer and the count.
#   bench/loss_timeline.py TRACE [SECONDS]
# Layers: 1 block, 3 syscall (include/iotrail/event.h).
import os
import struct
import sys

if len(sys.argv) < 2:
    sys.exit("usage: bench/loss_timeline.py TRACE [SECONDS]")
path = sys.argv[1]
secs = float(sys.argv[2]) if len(sys.argv) > 2 else 0.0
size = os.path.getsize(path)
with open(path, "rb") as f:
    head = f.read(32)
    if head[:8] != b"IOTRAIL\0":
        sys.exit(f"loss_timeline: {path} is not an iotrail trace")
    version, hsize = struct.unpack_from("<II", head, 8)
    if version < 3:
        sys.exit(f"loss_timeline: {path} is version {version}; chunk layers need 3")
    f.seek(hsize)
    last, steps = {}, 0
    while True:
        off = f.tell()
        h = f.read(40)
        if len(h) < 40:
            break
        magic, _typ, _comp, _raw, stored, _count, _crc, dropped, machine, layer, _r = \
            struct.unpack("<IHHIIIIQHHI", h)
        if magic != 0x4B435449:
            print(f"loss_timeline: no chunk at offset {off}: the file is cut there")
            break
        key = (machine, layer)
        if dropped != last.get(key, 0):
            share = off / size
            when = f", ~{share * secs:.0f} s" if secs else ""
            print(f"offset {off} ({share:.1%} of the file{when}): machine {machine} layer {layer} "
                  f"+{dropped - last.get(key, 0)} (so far {dropped})")
            last[key] = dropped
            steps += 1
        f.seek(stored, 1)
    if not steps:
        print("loss_timeline: no chunk header counts a loss")
