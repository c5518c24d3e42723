#!/usr/bin/env python3
# For test_syscall.sh's syscall_ppid_cgroup_follow: a child that opens DIR/a,
# moves itself into the cgroup CGDIR (cgroup v2), opens DIR/b, waits until
# its parent (this script's first process) has exited and it is
# reparented, opens DIR/c, and writes what the kernel says at each open
# (its parent's pid, its cgroup's inode number: the cgroup id) into
# DIR/truth, one line per file: NAME PPID CGROUP_ID. DIR/done last.
import os
import sys
import time

d, cgdir = sys.argv[1], sys.argv[2]
root = sys.argv[3]  # the cgroup v2 mount


def cgroup_id():
    with open("/proc/self/cgroup") as f:
        path = next(l.split(":", 2)[2].strip() for l in f if l.startswith("0::"))
    return os.stat(root + path).st_ino


r, w = os.pipe()
pid = os.fork()
if pid:
    os.close(w)
    os.read(r, 1)  # the child has opened b: exit, so that it is reparented
    os._exit(0)
os.close(r)
truth = []
first_parent = os.getppid()
for name in ("a", "b", "c"):
    if name == "b":
        with open(os.path.join(cgdir, "cgroup.procs"), "w") as f:
            f.write(str(os.getpid()))
    if name == "c":
        os.write(w, b"x")
        while os.getppid() == first_parent:
            time.sleep(0.01)
    with open(os.path.join(d, name)) as f:
        f.read()
    truth.append("%s %d %d" % (name, os.getppid(), cgroup_id()))
with open(os.path.join(d, "truth"), "w") as f:
    f.write("\n".join(truth) + "\n")
open(os.path.join(d, "done"), "w").close()
