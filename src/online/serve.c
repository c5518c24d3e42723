// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * `iotrail serve`: the online histograms for Prometheus, on a minimal
 * HTTP/1.1 server (GET /metrics; 404 for other paths; one request per
 * connection, answered with Connection: close). Loopback by default: the
 * metrics name devices and their load, for whoever may read them.
 *
 * One thread, one connection at a time: a scrape is a few milliseconds,
 * and a client that sends nothing is cut off after 2 s (408), so a stuck
 * or hostile client cannot hold the server for longer than that.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "cli.h"
#include "commands.h"
#include "online/collect.h"
#include "online/expo.h"
#include "online/http.h"

static volatile sig_atomic_t stop_signal;

static void on_stop(int sig)
{
	stop_signal = sig;
}

/* "ADDR:PORT", "[ADDR6]:PORT" or ":PORT" (loopback) into ss */
static int parse_listen(const char *spec, struct sockaddr_storage *ss, socklen_t *len)
{
	char host[64];
	const char *colon = strrchr(spec, ':');
	char *end;
	long port;

	if (!colon || (size_t)(colon - spec) >= sizeof(host))
		return -1;
	port = strtol(colon + 1, &end, 10);
	if (!colon[1] || *end || port < 1 || port > 65535)
		return -1;
	memcpy(host, spec, (size_t)(colon - spec));
	host[colon - spec] = 0;
	memset(ss, 0, sizeof(*ss));
	if (host[0] == '[' && host[strlen(host) - 1] == ']') {
		struct sockaddr_in6 *a = (struct sockaddr_in6 *)ss;

		host[strlen(host) - 1] = 0;
		a->sin6_family = AF_INET6;
		a->sin6_port = htons((uint16_t)port);
		*len = sizeof(*a);
		return inet_pton(AF_INET6, host + 1, &a->sin6_addr) == 1 ? 0 : -1;
	}
	struct sockaddr_in *a = (struct sockaddr_in *)ss;

	a->sin_family = AF_INET;
	a->sin_port = htons((uint16_t)port);
	*len = sizeof(*a);
	return inet_pton(AF_INET, host[0] ? host : "127.0.0.1", &a->sin_addr) == 1 ? 0 : -1;
}

static void send_all(int fd, const char *p, size_t n)
{
	while (n) {
		ssize_t w = send(fd, p, n, MSG_NOSIGNAL);

		if (w <= 0) {
			if (w < 0 && errno == EINTR)
				continue;
			return; /* the client went: nothing to tell it */
		}
		p += w;
		n -= (size_t)w;
	}
}

static void respond(int fd, int status, const char *type, const char *body, size_t len,
		    int head_only)
{
	char head[256];
	int n = snprintf(head, sizeof(head),
			 "HTTP/1.1 %d %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\n"
			 "%sConnection: close\r\n\r\n",
			 status, ol_http_reason(status), type, len,
			 status == 405 ? "Allow: GET, HEAD\r\n" : "");

	send_all(fd, head, (size_t)n);
	if (!head_only)
		send_all(fd, body, len);
}

static void respond_error(int fd, int status)
{
	char body[64];
	int n = snprintf(body, sizeof(body), "%d %s\n", status, ol_http_reason(status));

	respond(fd, status, "text/plain; charset=utf-8", body, (size_t)n, 0);
}

static void serve_one(int fd, struct ol_collector *c, struct ol_snapshot *snap, uint64_t *scrapes)
{
	char buf[OL_HTTP_MAX_HEAD];
	size_t len = 0;
	int status = 0, head_only = 0;
	struct timeval tv = { .tv_sec = 2 };

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	while (!status) {
		ssize_t r = recv(fd, buf + len, sizeof(buf) - len, 0);

		if (r < 0 && errno == EINTR && !stop_signal)
			continue;
		if (r < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			respond_error(fd, 408);
			return;
		}
		if (r <= 0)
			return; /* closed before a whole request: nothing to answer */
		len += (size_t)r;
		status = ol_http_parse(buf, len, &head_only);
	}
	if (status != 200) {
		respond_error(fd, status);
		return;
	}
	char *body = NULL;
	size_t body_len = 0;
	FILE *f = open_memstream(&body, &body_len);

	if (!f || ol_collector_read(c, snap)) {
		if (f)
			fclose(f);
		free(body);
		respond_error(fd, 500);
		return;
	}
	ol_expo_write(f, snap, ol_dev_name);
	if (fclose(f)) {
		free(body);
		respond_error(fd, 500);
		return;
	}
	respond(fd, 200, OL_EXPO_CONTENT_TYPE, body, body_len, head_only);
	free(body);
	(*scrapes)++;
}

static int usage(FILE *f)
{
	fprintf(f,
		"usage: iotrail serve [--listen ADDR:PORT] [--dev DEV]...\n"
		"\n"
		"Serves the block layer's in-kernel histograms to Prometheus at\n"
		"http://ADDR:PORT/metrics: per device and op, the requests and bytes\n"
		"completed and the Q2D, D2C and Q2C histograms, counted since start.\n"
		"  --listen ADDR:PORT  default 127.0.0.1:9464 (loopback); [::1]:PORT for IPv6\n"
		"  --dev DEV           only this device (/dev/sda, sda or 8:0); repeatable\n"
		"Stops on Ctrl-C or SIGTERM. doc/prometheus.md has a scrape config and rules.\n");
	return f == stdout ? 0 : 2;
}

int cmd_serve(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "listen", required_argument, NULL, 'l' },
		{ "dev", required_argument, NULL, 'D' },
		{ "help", no_argument, NULL, 'h' },
		{ 0 },
	};
	const char *listen_at = "127.0.0.1:9464";
	struct sockaddr_storage ss;
	socklen_t sslen;
	uint32_t devs[OL_MAX_DEVS];
	size_t ndevs = 0;
	struct ol_collector *c = NULL;
	struct ol_snapshot snap = {};
	uint64_t scrapes = 0;
	char err[256];
	int ch, rc, fd = -1, one = 1;
	struct sigaction sa = { .sa_handler = on_stop };

	opterr = 0;
	optind = 1;
	while ((ch = getopt_long(argc, argv, "l:h", opts, NULL)) != -1) {
		switch (ch) {
		case 'l':
			listen_at = optarg;
			break;
		case 'D':
			if ((rc = ol_add_dev(optarg, devs, &ndevs)))
				return rc;
			break;
		case 'h':
			return usage(stdout);
		default:
			return it_fail_option("serve", "lD", argv);
		}
	}
	if (optind < argc)
		return it_failf(2, "failed to read '%s': serve takes no file or command; "
				"see iotrail serve --help", argv[optind]);
	if (parse_listen(listen_at, &ss, &sslen))
		return it_failf(2, "failed to read --listen '%s': not ADDR:PORT with a numeric "
				"address and a port from 1 to 65535; give e.g. 127.0.0.1:9464",
				listen_at);
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	fd = socket(ss.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) ||
	    bind(fd, (struct sockaddr *)&ss, sslen) || listen(fd, 16)) {
		rc = it_failf(1, "failed to listen on %s: %s; pick a free port with --listen",
			      listen_at, strerror(errno));
		goto out;
	}
	if (ol_collector_open(&c, devs, ndevs, err, sizeof(err))) {
		rc = it_fail(1, "start the online probes", err,
			     "run as root on a kernel with BTF (iotrail probe tells what is missing)");
		goto out;
	}
	fprintf(stderr, "iotrail serve: http://%s/metrics (%s hooks); Ctrl-C to stop\n", listen_at,
		ol_collector_hooks(c));
	rc = 0;
	while (!stop_signal) {
		struct pollfd p = { .fd = fd, .events = POLLIN };
		int conn;

		if (poll(&p, 1, 1000) <= 0)
			continue;
		conn = accept4(fd, NULL, NULL, SOCK_CLOEXEC);
		if (conn < 0)
			continue; /* the client gave up; EMFILE passes with it */
		serve_one(conn, c, &snap, &scrapes);
		close(conn);
	}
	if (!ol_collector_read(c, &snap)) {
		uint64_t ios = 0, missed = snap.nested;

		for (size_t i = 0; i < snap.n; i++)
			ios += snap.series[i].v.ios;
		for (int m = 0; m < OL_NMISS; m++)
			missed += snap.missed[m];
		fprintf(stderr, "iotrail serve: %" PRIu64 " I/Os completed, %" PRIu64
			" not measured whole, %" PRIu64 " scrapes\n", ios, missed, scrapes);
	}
out:
	if (fd >= 0)
		close(fd);
	ol_collector_close(c);
	ol_snapshot_free(&snap);
	return rc;
}
