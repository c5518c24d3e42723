// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * iotrail agent: runs on a target machine and records it for an initiator
 * (`iotrail record --target`). It listens (loopback unless --listen says
 * otherwise), authenticates each connection with the shared key (TLS 1.3
 * PSK, channel.c), and serves one recording session at a time: a second
 * initiator is told the agent is busy.
 *
 * A connection may instead (or as well) ask queries (LOAD, STORE, RESET:
 * query.h): they are answered from the running session's spool, or from a
 * recorder of the connection's own when no session runs, and never make the
 * agent busy. Settings and reset times are the agent's, shared by every
 * connection's child through one shared mapping.
 *
 * Each connection is served by a child process; a session's recorder is
 * `iotrail record` itself (this binary, /proc/self/exe), run into a spool
 * file with a periodic flush, so the target is recorded by the very code
 * that records the initiator. PULL ships the spool's new whole chunks:
 * the initiator's copy is always a readable trace, however the agent ends.
 */
#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <netdb.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/channel.h"
#include "agent/query.h"
#include "cli.h"
#include "commands.h"
#include "tracefile.h"

#define TIMEOUT_MS 60000          /* a silent initiator ends its session */
#define START_WAIT_NS 120000000000ull /* the recorder's probes load within this, even on a slow, loaded machine */
#define FLUSH_EVERY "0.25"        /* the recorder's flush period, seconds */
#define FRESH_WAIT_NS 5000000000ull /* a query's own recording: its first window at most */

static volatile sig_atomic_t stopping;

static void on_stop(int sig)
{
	(void)sig;
	stopping = 1;
}

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

__attribute__((format(printf, 1, 2))) static void logf_(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	fprintf(stderr, "iotrail agent: ");
	vfprintf(stderr, fmt, ap);
	fputc('\n', stderr);
	va_end(ap);
}

static void usage(FILE *f)
{
	fprintf(f,
		"usage: iotrail agent [--listen ADDR:PORT] [--key FILE|DIR]...\n"
		"       iotrail agent --new-key FILE\n"
		"\n"
		"Run on a target machine: record it for `iotrail record --target` on an\n"
		"initiator, one session at a time, over TLS 1.3 authenticated by a shared key.\n"
		"Runs in the foreground, logs to stderr, stops on SIGTERM or Ctrl-C.\n"
		"\n"
		"  --listen ADDR:PORT  where to listen (default 127.0.0.1:%d; give the\n"
		"                      address of the storage network to serve initiators)\n"
		"  --key FILE|DIR      the shared key, mode 0600 (default %s); repeat it,\n"
		"                      or give a directory of key files, for a key per\n"
		"                      initiator (the log names the key of each session)\n"
		"  --new-key FILE      write a new random key to FILE (mode 0600) and exit;\n"
		"                      copy it to the initiators over a channel you trust\n"
		"\n"
		"example:\n"
		"  target#    iotrail agent --new-key /etc/iotrail/agent.key\n"
		"  target#    iotrail agent --listen 10.0.0.2:%d\n"
		"  initiator# iotrail record --target 10.0.0.2:%d --key agent.key -- fio job.fio\n",
		IT_AGENT_PORT, IT_AGENT_KEY_DEFAULT, IT_AGENT_PORT, IT_AGENT_PORT);
}

/* ---- what every connection's child shares ---- */

/* One mapping made before the first fork: the recording slot (one session
 * for an initiator at a time) and the query settings, per switch. */
struct agent_shared {
	pthread_mutex_t lock;     /* robust: a child killed inside does not wedge the rest */
	pid_t recording;          /* the child serving the recording session; 0: none */
	char dir[PATH_MAX - 64];  /* the agent's spool directory */
	struct {
		struct it_query_settings set;
		uint64_t reset_ns;
	} sw[];                   /* it_nswitches of them, in it_switches[] order */
};

static struct agent_shared *shared_new(const char *dir)
{
	size_t size = sizeof(struct agent_shared) + it_nswitches * sizeof(((struct agent_shared *)0)->sw[0]);
	struct agent_shared *sh = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				       -1, 0);
	pthread_mutexattr_t ma;

	if (sh == MAP_FAILED)
		return NULL;
	pthread_mutexattr_init(&ma);
	pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED);
	pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST);
	pthread_mutex_init(&sh->lock, &ma);
	pthread_mutexattr_destroy(&ma);
	snprintf(sh->dir, sizeof(sh->dir), "%s", dir);
	for (size_t i = 0; i < it_nswitches; i++)
		it_query_settings_default(&sh->sw[i].set);
	return sh;
}

static void shared_lock(struct agent_shared *sh)
{
	if (pthread_mutex_lock(&sh->lock) == EOWNERDEAD)
		pthread_mutex_consistent(&sh->lock); /* its holder only copied a few words */
}

/* ---- one session: the recorder and its spool ---- */

struct session {
	struct it_chan *c;
	const char *keyfile;      /* the key file that authenticated the initiator */
	struct agent_shared *sh;
	char spool[PATH_MAX];
	char log[PATH_MAX];
	bool recording;           /* START done: this connection holds the recording slot */
	bool own_query_recorder;  /* the recorder runs for this connection's queries */
	pid_t recorder;           /* 0: none running */
	int status;               /* its exit status, once reaped */
	bool stopped;             /* STOP done: the spool is final */
	uint64_t shipped;         /* bytes of the spool sent */
	int fd;                   /* the spool, for reading */
	void *buf;
	size_t cap;
};

/* The last line of the recorder's log: its error, if it failed. */
static void last_line(const char *path, char *out, size_t len)
{
	char line[512];
	FILE *f = fopen(path, "r");

	snprintf(out, len, "the recorder exited without a message");
	while (f && fgets(line, sizeof(line), f))
		if (line[0] != '\n') {
			line[strcspn(line, "\n")] = '\0';
			snprintf(out, len, "%s", line);
		}
	if (f)
		fclose(f);
}

static int send_error(struct it_chan *c, uint32_t code, const char *text)
{
	struct it_agent_msg m = { .type = IT_MSG_ERROR, .u.error.code = code };
	char err[256];

	snprintf(m.u.error.text, sizeof(m.u.error.text), "%.250s", text);
	return it_chan_send(c, &m, err, sizeof(err));
}

/* Counts the whole chunks of the spool: the head (HOST, DEVICES, LAYERS) is
 * in once the recorder's probes are attached. */
static int spool_chunks(struct session *s, int max)
{
	struct it_chunk_header h;
	uint64_t off = sizeof(struct it_file_header);
	int n = 0;

	if (s->fd < 0 && (s->fd = open(s->spool, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	while (n < max && it_chunk_scan(s->fd, &off, &h, &s->buf, &s->cap) == 1)
		n++;
	return n;
}

/* Runs `iotrail record` into the spool; waits until its head is written
 * (its probes are attached) or it fails. 0, or -1 with the reason. */
static int start_recorder(struct session *s, const char *layers, const char *devlist, char *why,
			  size_t len)
{
	char *argv[64], devs[IT_AGENT_TEXT], *save = NULL;
	int argc = 0, lfd;
	uint64_t deadline;

	argv[argc++] = "iotrail";
	argv[argc++] = "record";
	argv[argc++] = "-o";
	argv[argc++] = s->spool;
	argv[argc++] = "--flush-every";
	argv[argc++] = FLUSH_EVERY;
	if (layers[0]) {
		argv[argc++] = "--layers";
		argv[argc++] = (char *)layers;
	}
	snprintf(devs, sizeof(devs), "%s", devlist);
	for (char *d = strtok_r(devs, ",", &save); d && argc < 60; d = strtok_r(NULL, ",", &save)) {
		argv[argc++] = "--dev";
		argv[argc++] = d;
	}
	argv[argc] = NULL;
	lfd = open(s->log, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	s->recorder = fork();
	if (s->recorder < 0) {
		snprintf(why, len, "cannot start the recorder: %s", strerror(errno));
		s->recorder = 0;
		return -1;
	}
	if (!s->recorder) {
		signal(SIGTERM, SIG_DFL);
		signal(SIGINT, SIG_DFL);
		/* a session killed outright must not leave its recorder running */
		prctl(PR_SET_PDEATHSIG, SIGTERM);
		if (lfd >= 0)
			dup2(lfd, 2);
		execv("/proc/self/exe", argv);
		fprintf(stderr, "cannot run /proc/self/exe: %s\n", strerror(errno));
		_exit(127);
	}
	if (lfd >= 0)
		close(lfd);
	deadline = now_ns() + START_WAIT_NS;
	while (now_ns() < deadline && !stopping) {
		if (waitpid(s->recorder, &s->status, WNOHANG) == s->recorder) {
			s->recorder = 0;
			last_line(s->log, why, len);
			return -1;
		}
		if (spool_chunks(s, 3) == 3)
			return 0;
		usleep(20000);
	}
	snprintf(why, len, "the recorder did not start within %llu s",
		 START_WAIT_NS / 1000000000ull);
	return -1;
}

/* Stops the recorder (SIGTERM: it closes its file whole), waits for it. */
static void stop_recorder(struct session *s)
{
	uint64_t deadline = now_ns() + 10000000000ull;

	if (!s->recorder)
		return;
	kill(s->recorder, SIGTERM);
	while (waitpid(s->recorder, &s->status, WNOHANG) == 0) {
		if (now_ns() > deadline) {
			kill(s->recorder, SIGKILL);
			waitpid(s->recorder, &s->status, 0);
			break;
		}
		usleep(10000);
	}
	s->recorder = 0;
}

/* DATA: the spool's whole chunks since the last pull (the file header
 * first), at most IT_AGENT_MAX_DATA bytes; FINAL once the recorder has
 * stopped and everything is sent. */
static int pull(struct session *s, char *err, size_t errlen)
{
	struct it_agent_msg m = { .type = IT_MSG_DATA };
	struct it_chunk_header h;
	uint64_t off = s->shipped ? s->shipped : sizeof(struct it_file_header), end = off;
	struct stat st;
	uint8_t *out;
	int rc;

	if (s->fd < 0 && (s->fd = open(s->spool, O_RDONLY | O_CLOEXEC)) < 0) {
		snprintf(err, errlen, "cannot open the spool: %s", strerror(errno));
		return -1;
	}
	while ((rc = it_chunk_scan(s->fd, &end, &h, &s->buf, &s->cap)) == 1 &&
	       end - (s->shipped ? s->shipped : 0) <= IT_AGENT_MAX_DATA)
		off = end;
	if (!(out = malloc(off - s->shipped ? off - s->shipped : 1)) ||
	    pread(s->fd, out, off - s->shipped, (off_t)s->shipped) != (ssize_t)(off - s->shipped)) {
		free(out);
		snprintf(err, errlen, "cannot read the spool: %s", strerror(errno));
		return -1;
	}
	m.u.data.bytes = out;
	m.u.data.len = off - s->shipped;
	if (s->stopped && !fstat(s->fd, &st) && (uint64_t)st.st_size == off)
		m.u.data.flags = IT_DATA_FINAL;
	rc = it_chan_send(s->c, &m, err, errlen);
	free(out);
	if (!rc)
		s->shipped = off;
	return rc;
}

/* The recorder gone, its files removed; the recording slot freed. */
static void drop_recording(struct session *s)
{
	pid_t me = getpid();

	stop_recorder(s);
	if (s->fd >= 0)
		close(s->fd);
	s->fd = -1;
	if (s->spool[0])
		unlink(s->spool);
	if (s->log[0])
		unlink(s->log);
	s->spool[0] = s->log[0] = '\0';
	if (s->recording)
		__atomic_compare_exchange_n(&s->sh->recording, &me, 0, false, __ATOMIC_SEQ_CST,
					    __ATOMIC_SEQ_CST);
	s->recording = s->own_query_recorder = false;
}

static void session_cleanup(struct session *s)
{
	drop_recording(s);
	free(s->buf);
}

static int hello(struct session *s, const struct it_agent_msg *m)
{
	struct it_agent_msg r = { .type = IT_MSG_HELLO, .u.hello.version = IT_AGENT_VERSION };
	char err[256], text[200];

	if (m->type != IT_MSG_HELLO || m->version != IT_AGENT_VERSION ||
	    m->u.hello.version != IT_AGENT_VERSION) {
		snprintf(text, sizeof(text), "unsupported protocol version %u (this agent speaks "
			 "version %u); run the same iotrail version on both machines",
			 m->version != IT_AGENT_VERSION ? m->version : m->u.hello.version,
			 IT_AGENT_VERSION);
		logf_("%s: refused: %s", it_chan_peer(s->c), text);
		send_error(s->c, IT_AERR_VERSION, text);
		return -1;
	}
	snprintf(r.u.hello.software, sizeof(r.u.hello.software), "iotrail");
	gethostname(r.u.hello.host, sizeof(r.u.hello.host) - 1);
	if (it_chan_send(s->c, &r, err, sizeof(err)))
		return -1;
	logf_("%s: connected (initiator %s, key %s)", it_chan_peer(s->c), m->u.hello.host,
	      s->keyfile);
	return 0;
}

/* Takes the recording slot: one initiator's session at a time. A session
 * that just ended may still be cleaning up: give it a moment, so the
 * initiator that ends one and starts another is not refused. */
static bool claim_recording(struct session *s)
{
	for (int i = 0; i < 100; i++) {
		pid_t none = 0;

		if (__atomic_compare_exchange_n(&s->sh->recording, &none, getpid(), false,
						__ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST))
			return true;
		usleep(10000);
	}
	return false;
}

static int on_start(struct session *s, const struct it_agent_msg *m)
{
	struct it_agent_msg r = { .type = IT_MSG_START };
	char why[512], err[256];
	struct it_reader *rd;

	if (s->recording || s->stopped)
		return send_error(s->c, IT_AERR_STATE, "a recording was already started in this "
				  "session; connect again for another"), -1;
	if (!claim_recording(s)) {
		logf_("%s: refused: a recording session is running", it_chan_peer(s->c));
		send_error(s->c, IT_AERR_BUSY, "the agent is busy: another initiator's recording "
			   "session is running; wait until it ends");
		return -1;
	}
	drop_recording(s); /* the one for this connection's queries, if any: START's replaces it */
	s->recording = true;
	snprintf(s->spool, sizeof(s->spool), "%s/target.trail", s->sh->dir);
	snprintf(s->log, sizeof(s->log), "%s/record.log", s->sh->dir);
	if (start_recorder(s, m->u.start.layers, m->u.start.devs, why, sizeof(why)))
		goto fail;
	if ((rd = it_reader_open(s->spool, err, sizeof(err)))) {
		snprintf(r.u.start.layers, sizeof(r.u.start.layers), "%s", it_reader_host(rd)->hooks);
		it_reader_close(rd);
	}
	logf_("%s: recording (hooks %s)", it_chan_peer(s->c), r.u.start.layers);
	return it_chan_send(s->c, &r, err, sizeof(err));
fail:
	logf_("%s: cannot record: %s", it_chan_peer(s->c), why);
	send_error(s->c, IT_AERR_RECORD, why);
	return -1;
}

/* ---- queries ---- */

/* The spool a LOAD reads: this connection's, else the running session's,
 * else a recorder started now for this connection (the agent's default
 * layers, as START with none; *fresh set), stopped when the connection
 * ends. */
static int query_spool(struct session *s, char *path, size_t len, bool *fresh, char *why,
		       size_t whylen)
{
	char log[PATH_MAX];

	if (s->spool[0] && (s->recorder || s->stopped)) {
		snprintf(path, len, "%s", s->spool);
		return 0;
	}
	snprintf(path, len, "%s/target.trail", s->sh->dir);
	if (__atomic_load_n(&s->sh->recording, __ATOMIC_SEQ_CST) && !access(path, R_OK))
		return 0;
	snprintf(s->spool, sizeof(s->spool), "%s/query-%d.trail", s->sh->dir, (int)getpid());
	snprintf(log, sizeof(log), "%s/query-%d.log", s->sh->dir, (int)getpid());
	snprintf(s->log, sizeof(s->log), "%s", log);
	s->own_query_recorder = true;
	if (start_recorder(s, "", "", why, whylen)) {
		logf_("%s: cannot record for queries: %s", it_chan_peer(s->c), why);
		return -1;
	}
	logf_("%s: recording for queries (no session was running)", it_chan_peer(s->c));
	snprintf(path, len, "%s", s->spool);
	*fresh = true;
	return 0;
}

/* The switches a STORE or RESET names: one, or "all". */
static bool switch_range(const char *name, size_t *from, size_t *to)
{
	const struct it_switch *sw = it_switch_find(name);

	*from = sw ? (size_t)(sw - it_switches) : 0;
	*to = sw ? *from + 1 : it_nswitches;
	return sw || !strcmp(name, "all");
}

static int on_load(struct session *s, const struct it_agent_msg *m)
{
	const struct it_switch *sw = it_switch_find(m->u.load.sw);
	struct it_query_settings set;
	struct it_agent_msg r;
	char path[PATH_MAX], why[400], err[256];
	uint64_t reset, wait;
	bool fresh = false;

	if (!sw) {
		snprintf(why, sizeof(why), "unknown switch '%s'", m->u.load.sw);
		return send_error(s->c, IT_AERR_QUERY, why);
	}
	if (query_spool(s, path, sizeof(path), &fresh, why, sizeof(why)))
		return send_error(s->c, IT_AERR_RECORD, why), -1;
	shared_lock(s->sh);
	set = s->sh->sw[sw - it_switches].set;
	reset = s->sh->sw[sw - it_switches].reset_ns;
	pthread_mutex_unlock(&s->sh->lock);
	if (fresh) {
		/* a recording that just started has no window yet: let one pass
		 * (the answer's start and end say how long it got), within the
		 * initiator's patience */
		wait = m->u.load.window_ns ? m->u.load.window_ns : set.window_ns;
		wait = (wait < FRESH_WAIT_NS ? wait : FRESH_WAIT_NS) + IT_QUERY_LAG_NS;
		nanosleep(&(struct timespec){ .tv_sec = (time_t)(wait / 1000000000ull),
					      .tv_nsec = (long)(wait % 1000000000ull) }, NULL);
	}
	if (it_query_load(path, m, &set, reset, now_ns(), &r, why, sizeof(why)))
		return send_error(s->c, IT_AERR_QUERY, why);
	return it_chan_send(s->c, &r, err, sizeof(err));
}

static int on_store(struct session *s, const struct it_agent_msg *m)
{
	struct it_agent_msg r = *m;
	struct it_query_settings set;
	size_t from, to;
	uint32_t code;
	char why[300], err[256];

	if (!switch_range(m->u.store.sw, &from, &to))
		return send_error(s->c, IT_AERR_QUERY, "unknown switch");
	shared_lock(s->sh);
	set = s->sh->sw[from].set;
	if (!it_query_store(&set, m->u.store.name, m->u.store.value, &code, why, sizeof(why)))
		for (size_t i = from; i < to; i++)
			it_query_store(&s->sh->sw[i].set, m->u.store.name, m->u.store.value, &code,
				       why, sizeof(why));
	else
		to = 0;
	pthread_mutex_unlock(&s->sh->lock);
	if (!to) {
		logf_("%s: refused store %s %s=%s: %s", it_chan_peer(s->c), m->u.store.sw,
		      m->u.store.name, m->u.store.value, why);
		return send_error(s->c, code, why);
	}
	it_query_setting_text(&set, m->u.store.name, r.u.store.value, sizeof(r.u.store.value));
	logf_("%s: store %s %s=%s", it_chan_peer(s->c), m->u.store.sw, m->u.store.name,
	      r.u.store.value);
	return it_chan_send(s->c, &r, err, sizeof(err));
}

static int on_reset(struct session *s, const struct it_agent_msg *m)
{
	struct it_agent_msg r = *m;
	size_t from, to;
	char err[256];

	if (!switch_range(m->u.reset.sw, &from, &to))
		return send_error(s->c, IT_AERR_QUERY, "unknown switch");
	r.u.reset.reply = true;
	r.u.reset.at_ns = now_ns();
	shared_lock(s->sh);
	for (size_t i = from; i < to; i++)
		s->sh->sw[i].reset_ns = r.u.reset.at_ns;
	pthread_mutex_unlock(&s->sh->lock);
	logf_("%s: reset %s", it_chan_peer(s->c), m->u.reset.sw);
	return it_chan_send(s->c, &r, err, sizeof(err));
}

/* The messages of one session until STOP's last PULL, a close or an error. */
static int serve(struct session *s)
{
	struct it_agent_msg m, r;
	char err[256];
	int rc;

	while (!stopping) {
		uint64_t t2;

		rc = it_chan_recv(s->c, &m, err, sizeof(err));
		t2 = now_ns();
		if (rc <= 0) {
			if (rc < 0)
				logf_("%s: session ended: %s", it_chan_peer(s->c), err);
			else
				logf_("%s: session ended by the initiator", it_chan_peer(s->c));
			return rc;
		}
		if (s->recorder && waitpid(s->recorder, &s->status, WNOHANG) == s->recorder) {
			char why[300];

			s->recorder = 0;
			last_line(s->log, why, sizeof(why));
			logf_("%s: the recorder stopped: %s", it_chan_peer(s->c), why);
			s->stopped = true; /* what it wrote is still shipped */
		}
		switch (m.type) {
		case IT_MSG_CLOCK:
			r = (struct it_agent_msg){ .type = IT_MSG_CLOCK };
			r.u.clock.t1 = m.u.clock.t1;
			r.u.clock.t2 = t2;
			r.u.clock.reply = true;
			r.u.clock.t3 = now_ns();
			rc = it_chan_send(s->c, &r, err, sizeof(err));
			break;
		case IT_MSG_START:
			rc = on_start(s, &m);
			break;
		case IT_MSG_PULL:
			rc = s->recording ? pull(s, err, sizeof(err)) :
			     send_error(s->c, IT_AERR_STATE, "PULL before START");
			break;
		case IT_MSG_STOP:
			stop_recorder(s);
			s->stopped = true;
			logf_("%s: recording stopped", it_chan_peer(s->c));
			r = (struct it_agent_msg){ .type = IT_MSG_STOP };
			rc = it_chan_send(s->c, &r, err, sizeof(err));
			break;
		case IT_MSG_LOAD:
			rc = on_load(s, &m);
			break;
		case IT_MSG_STORE:
			rc = on_store(s, &m);
			break;
		case IT_MSG_RESET:
			rc = on_reset(s, &m);
			break;
		default:
			rc = send_error(s->c, IT_AERR_STATE, "unexpected message");
		}
		if (rc) {
			if (m.type != IT_MSG_START && m.type != IT_MSG_LOAD) /* they said why */
				logf_("%s: session ended: %s", it_chan_peer(s->c), err);
			return -1;
		}
	}
	return 0;
}

/* A connection's child: handshake, HELLO, then the session. */
static int connection(int fd, const struct it_keyring *ring, struct agent_shared *sh)
{
	struct session s = { .fd = -1, .sh = sh };
	struct it_agent_msg m;
	char err[512];
	size_t which;
	int rc = 1;

	if (!(s.c = it_chan_accept(fd, ring, &which, TIMEOUT_MS, err, sizeof(err)))) {
		logf_("refused a connection from %s", err);
		return 1;
	}
	s.keyfile = ring->path[which];
	if (it_chan_recv(s.c, &m, err, sizeof(err)) <= 0) {
		logf_("%s: no HELLO: %s", it_chan_peer(s.c), err);
	} else if (!hello(&s, &m)) {
		rc = serve(&s) < 0;
	}
	session_cleanup(&s);
	it_chan_close(s.c);
	return rc;
}

/* ---- the listener ---- */

static int listen_on(const char *addr, char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *ai;
	char host[256], port[8];
	int fd, one = 1, rc;

	if (it_hostport_split(addr, host, sizeof(host), port, sizeof(port), err, errlen))
		return -1;
	if ((rc = getaddrinfo(host, port, &hints, &ai))) {
		snprintf(err, errlen, "cannot resolve %s: %s", host, gai_strerror(rc));
		return -1;
	}
	fd = socket(ai->ai_family, ai->ai_socktype | SOCK_CLOEXEC, ai->ai_protocol);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, ai->ai_addr, ai->ai_addrlen) || listen(fd, 8)) {
		snprintf(err, errlen, "cannot listen on %.200s: %s", addr, strerror(errno));
		if (fd >= 0)
			close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	return fd;
}

/* The agent's directory for spools: the session's and the queries'. */
static int make_dir(char *dir, size_t len, char *err, size_t errlen)
{
	const char *tmp = getenv("TMPDIR");

	snprintf(dir, len, "%s/iotrail-agent.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (mkdtemp(dir))
		return 0;
	snprintf(err, errlen, "cannot make a spool directory in %s: %s; set TMPDIR to a "
		 "writable directory", tmp && *tmp ? tmp : "/tmp", strerror(errno));
	return -1;
}

static int run(const char *addr, const struct it_keyring *ring)
{
	struct sigaction sa = { .sa_handler = on_stop };
	struct agent_shared *sh;
	pid_t kids[64];
	size_t nkids = 0;
	char err[512], dir[PATH_MAX - 64];
	int lfd;

	if (make_dir(dir, sizeof(dir), err, sizeof(err)))
		return it_failf(1, "failed to start: %s", err);
	if (!(sh = shared_new(dir))) {
		rmdir(dir);
		return it_failf(1, "failed to start: cannot map the shared state: %s",
				strerror(errno));
	}
	if ((lfd = listen_on(addr, err, sizeof(err))) < 0) {
		rmdir(dir);
		return it_failf(1, "failed to start: %s; give a free local address with --listen",
				err);
	}
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	if (ring->n > 1)
		logf_("listening on %s (TLS 1.3, pre-shared keys: %zu, one per initiator); SIGTERM "
		      "or Ctrl-C stops", addr, ring->n);
	else
		logf_("listening on %s (TLS 1.3, pre-shared key); SIGTERM or Ctrl-C stops", addr);
	while (!stopping) {
		struct pollfd p = { .fd = lfd, .events = POLLIN };
		pid_t pid;
		int st, fd;

		while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
			pid_t held = pid;

			/* a child killed outright frees the recording slot it held */
			__atomic_compare_exchange_n(&sh->recording, &held, 0, false,
						    __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
			for (size_t i = 0; i < nkids; i++)
				if (kids[i] == pid)
					kids[i] = kids[--nkids];
		}
		if (poll(&p, 1, 200) <= 0)
			continue;
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		if (nkids == sizeof(kids) / sizeof(*kids)) {
			close(fd); /* a flood of connections: the ones being served go on */
			continue;
		}
		pid = fork();
		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGTERM);
			close(lfd);
			_exit(connection(fd, ring, sh));
		}
		close(fd);
		if (pid > 0)
			kids[nkids++] = pid;
	}
	close(lfd);
	/* each child stops its recorder on the signal and closes its session */
	for (size_t i = 0; i < nkids; i++)
		kill(kids[i], SIGTERM);
	while (wait(NULL) > 0)
		;
	rmdir(dir);
	logf_("stopped");
	return 0;
}

int cmd_agent(int argc, char **argv)
{
	static const struct option longopts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "key", required_argument, NULL, 'k' },
		{ "new-key", required_argument, NULL, 'n' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	char addr[300], err[512];
	const char *listen_addr = NULL, *keyfiles[IT_AGENT_MAX_KEYS], *newkey = NULL;
	static struct it_keyring ring;
	size_t nkeyfiles = 0;
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'l': listen_addr = optarg; break;
		case 'k':
			if (nkeyfiles == IT_AGENT_MAX_KEYS)
				return it_failf(2, "failed to parse --key: more than %d; give a "
						"directory of key files instead", IT_AGENT_MAX_KEYS);
			keyfiles[nkeyfiles++] = optarg;
			break;
		case 'n': newkey = optarg; break;
		case 'h': usage(stdout); return 0;
		default: return it_fail_option("agent", "", argv);
		}
	}
	if (optind < argc)
		return it_failf(2, "failed to parse the arguments: unexpected '%s'; see iotrail "
				"agent --help", argv[optind]);
	if (newkey) {
		if (it_key_new(newkey, err, sizeof(err)))
			return it_failf(1, "failed to make a key: %s", err);
		fprintf(stderr, "iotrail agent: new key in %s (mode 0600); copy it to the "
			"initiators over a channel you trust\n", newkey);
		return 0;
	}
	if (!nkeyfiles)
		keyfiles[nkeyfiles++] = IT_AGENT_KEY_DEFAULT;
	ring.n = 0;
	for (size_t i = 0; i < nkeyfiles; i++)
		if (it_keyring_add(&ring, keyfiles[i], err, sizeof(err)))
			return it_failf(1, "failed to start without a key: %s", err);
	if (!listen_addr)
		snprintf(addr, sizeof(addr), "127.0.0.1:%d", IT_AGENT_PORT);
	else if (!strchr(listen_addr, ':'))
		snprintf(addr, sizeof(addr), "%s:%d", listen_addr, IT_AGENT_PORT);
	else
		snprintf(addr, sizeof(addr), "%s", listen_addr);
	return run(addr, &ring);
}
