#!/usr/bin/env python3
"""A process that holds its mmap lock for writing most of the time (for
bench/syscall_loss.sh STALL=title): it populates MB MiB of anonymous
memory, drops to nice 19 (under busy loops it then holds the lock for long
stretches of wall time: a writer preempted inside mprotect), makes one
read (a traced call: the recorder reads its title, /proc/PID/cmdline, which
waits on that lock), then mprotects the whole region back and forth until
killed. Usage: mmap_holder.py MB"""
import ctypes
import mmap
import os
import sys

size = int(sys.argv[1]) << 20
libc = ctypes.CDLL(None, use_errno=True)
libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
region = mmap.mmap(-1, size, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS)
addr = ctypes.addressof(ctypes.c_char.from_buffer(region))
for off in range(0, size, mmap.PAGESIZE):
    region[off] = 1
os.nice(19)
fd = os.open("/dev/zero", os.O_RDONLY)
os.read(fd, 1)
while True:
    libc.mprotect(addr, size, mmap.PROT_READ)
    libc.mprotect(addr, size, mmap.PROT_READ | mmap.PROT_WRITE)
