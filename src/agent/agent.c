// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * iotrail agent: runs on a target machine and records it for an initiator
 * (`iotrail record --target`). It listens (loopback unless --listen says
 * otherwise), authenticates each connection with the shared key (TLS 1.3
 * PSK, channel.c), and serves one recording session at a time: a second
 * initiator is told the agent is busy.
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
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "agent/channel.h"
#include "cli.h"
#include "commands.h"
#include "tracefile.h"

#define TIMEOUT_MS 60000          /* a silent initiator ends its session */
#define START_WAIT_NS 120000000000ull /* the recorder's probes load within this, even on a slow, loaded machine */
#define FLUSH_EVERY "0.25"        /* the recorder's flush period, seconds */

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
		"usage: iotrail agent [--listen ADDR:PORT] [--key FILE]\n"
		"       iotrail agent --new-key FILE\n"
		"\n"
		"Run on a target machine: record it for `iotrail record --target` on an\n"
		"initiator, one session at a time, over TLS 1.3 authenticated by a shared key.\n"
		"Runs in the foreground, logs to stderr, stops on SIGTERM or Ctrl-C.\n"
		"\n"
		"  --listen ADDR:PORT  where to listen (default 127.0.0.1:%d; give the\n"
		"                      address of the storage network to serve initiators)\n"
		"  --key FILE          the shared key, mode 0600 (default %s)\n"
		"  --new-key FILE      write a new random key to FILE (mode 0600) and exit;\n"
		"                      copy it to the initiators over a channel you trust\n"
		"\n"
		"example:\n"
		"  target#    iotrail agent --new-key /etc/iotrail/agent.key\n"
		"  target#    iotrail agent --listen 10.0.0.2:%d\n"
		"  initiator# iotrail record --target 10.0.0.2:%d --key agent.key -- fio job.fio\n",
		IT_AGENT_PORT, IT_AGENT_KEY_DEFAULT, IT_AGENT_PORT, IT_AGENT_PORT);
}

/* ---- one session: the recorder and its spool ---- */

struct session {
	struct it_chan *c;
	char dir[PATH_MAX - 64];  /* the spool's directory */
	char spool[PATH_MAX];
	char log[PATH_MAX];
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
static int start_recorder(struct session *s, const struct it_agent_msg *m, char *why, size_t len)
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
	if (m->u.start.layers[0]) {
		argv[argc++] = "--layers";
		argv[argc++] = (char *)m->u.start.layers;
	}
	snprintf(devs, sizeof(devs), "%s", m->u.start.devs);
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

static void session_cleanup(struct session *s)
{
	stop_recorder(s);
	if (s->fd >= 0)
		close(s->fd);
	free(s->buf);
	if (s->spool[0])
		unlink(s->spool);
	if (s->log[0])
		unlink(s->log);
	if (s->dir[0])
		rmdir(s->dir);
}

static int hello(struct session *s, const struct it_agent_msg *m, bool busy)
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
	if (busy) {
		logf_("%s: refused: a recording session is running", it_chan_peer(s->c));
		send_error(s->c, IT_AERR_BUSY, "the agent is busy: another initiator's recording "
			   "session is running; wait until it ends");
		return -1;
	}
	snprintf(r.u.hello.software, sizeof(r.u.hello.software), "iotrail");
	gethostname(r.u.hello.host, sizeof(r.u.hello.host) - 1);
	if (it_chan_send(s->c, &r, err, sizeof(err)))
		return -1;
	logf_("%s: connected (initiator %s)", it_chan_peer(s->c), m->u.hello.host);
	return 0;
}

static int on_start(struct session *s, const struct it_agent_msg *m)
{
	struct it_agent_msg r = { .type = IT_MSG_START };
	char why[512], err[256];
	const char *tmp = getenv("TMPDIR");
	struct it_reader *rd;

	if (s->recorder || s->stopped)
		return send_error(s->c, IT_AERR_STATE, "a recording was already started in this "
				  "session; connect again for another"), -1;
	snprintf(s->dir, sizeof(s->dir), "%s/iotrail-agent.XXXXXX", tmp && *tmp ? tmp : "/tmp");
	if (!mkdtemp(s->dir)) {
		snprintf(why, sizeof(why), "cannot make a spool directory in %s: %s",
			 tmp && *tmp ? tmp : "/tmp", strerror(errno));
		s->dir[0] = '\0';
		goto fail;
	}
	snprintf(s->spool, sizeof(s->spool), "%s/target.trail", s->dir);
	snprintf(s->log, sizeof(s->log), "%s/record.log", s->dir);
	if (start_recorder(s, m, why, sizeof(why)))
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
			rc = s->dir[0] ? pull(s, err, sizeof(err)) :
			     send_error(s->c, IT_AERR_STATE, "PULL before START");
			break;
		case IT_MSG_STOP:
			stop_recorder(s);
			s->stopped = true;
			logf_("%s: recording stopped", it_chan_peer(s->c));
			r = (struct it_agent_msg){ .type = IT_MSG_STOP };
			rc = it_chan_send(s->c, &r, err, sizeof(err));
			break;
		default:
			rc = send_error(s->c, IT_AERR_STATE, "unexpected message");
		}
		if (rc) {
			if (m.type != IT_MSG_START) /* on_start said why */
				logf_("%s: session ended: %s", it_chan_peer(s->c), err);
			return -1;
		}
	}
	return 0;
}

/* A connection's child: handshake, HELLO, then the session. */
static int connection(int fd, const uint8_t *key, bool busy)
{
	struct session s = { .fd = -1 };
	struct it_agent_msg m;
	char err[512];
	int rc = 1;

	if (!(s.c = it_chan_accept(fd, key, TIMEOUT_MS, err, sizeof(err)))) {
		logf_("refused a connection from %s", err);
		return 1;
	}
	if (it_chan_recv(s.c, &m, err, sizeof(err)) <= 0) {
		logf_("%s: no HELLO: %s", it_chan_peer(s.c), err);
	} else if (!hello(&s, &m, busy)) {
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

static int run(const char *addr, const uint8_t *key)
{
	struct sigaction sa = { .sa_handler = on_stop };
	pid_t session = 0, kids[64];
	size_t nkids = 0;
	char err[512];
	int lfd = listen_on(addr, err, sizeof(err));

	if (lfd < 0)
		return it_failf(1, "failed to start: %s; give a free local address with --listen",
				err);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	logf_("listening on %s (TLS 1.3, pre-shared key); SIGTERM or Ctrl-C stops", addr);
	while (!stopping) {
		struct pollfd p = { .fd = lfd, .events = POLLIN };
		pid_t pid;
		int st, fd;

		while ((pid = waitpid(-1, &st, WNOHANG)) > 0) {
			if (pid == session)
				session = 0;
			for (size_t i = 0; i < nkids; i++)
				if (kids[i] == pid)
					kids[i] = kids[--nkids];
		}
		if (poll(&p, 1, 200) <= 0)
			continue;
		fd = accept4(lfd, NULL, NULL, SOCK_CLOEXEC);
		if (fd < 0)
			continue;
		/* a session that just ended may still be cleaning up: give it a moment,
		 * so the initiator that ends it and starts another is not refused */
		for (int i = 0; session && i < 100; i++) {
			if (waitpid(session, &st, WNOHANG) == session) {
				for (size_t k = 0; k < nkids; k++)
					if (kids[k] == session)
						kids[k] = kids[--nkids];
				session = 0;
				break;
			}
			usleep(10000);
		}
		if (nkids == sizeof(kids) / sizeof(*kids)) {
			close(fd); /* a flood of connections: the ones being served go on */
			continue;
		}
		pid = fork();
		if (pid == 0) {
			prctl(PR_SET_PDEATHSIG, SIGTERM);
			close(lfd);
			_exit(connection(fd, key, session != 0));
		}
		close(fd);
		if (pid > 0)
			kids[nkids++] = pid;
		if (pid > 0 && !session)
			session = pid;
	}
	close(lfd);
	/* each child stops its recorder on the signal and closes its session */
	for (size_t i = 0; i < nkids; i++)
		kill(kids[i], SIGTERM);
	while (wait(NULL) > 0)
		;
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
	const char *listen_addr = NULL, *keyfile = NULL, *newkey = NULL;
	uint8_t key[IT_AGENT_KEY_LEN];
	int c;

	optind = 1;
	opterr = 0;
	while ((c = getopt_long(argc, argv, "h", longopts, NULL)) != -1) {
		switch (c) {
		case 'l': listen_addr = optarg; break;
		case 'k': keyfile = optarg; break;
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
	if (!keyfile)
		keyfile = IT_AGENT_KEY_DEFAULT;
	if (it_key_load(keyfile, key, err, sizeof(err)))
		return it_failf(1, "failed to start without a key: %s", err);
	if (!listen_addr)
		snprintf(addr, sizeof(addr), "127.0.0.1:%d", IT_AGENT_PORT);
	else if (!strchr(listen_addr, ':'))
		snprintf(addr, sizeof(addr), "%s:%d", listen_addr, IT_AGENT_PORT);
	else
		snprintf(addr, sizeof(addr), "%s", listen_addr);
	return run(addr, key);
}
