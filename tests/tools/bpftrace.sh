# Sourced by the tools beside it that count with bpftrace too.
# bt_start PROGRAM OUT: runs `bpftrace -e PROGRAM` in the background, its
# output into OUT, its pid in bt_pid; returns once bpftrace says it is
# attaching (seconds under an emulated CPU), and a moment later.
bt_start() {
	bpftrace -e "$1" > "$2" 2>&1 &
	bt_pid=$!
	for _ in $(seq 120); do grep -q "^Attaching" "$2" && break; sleep 0.5; done
	sleep 1
}
