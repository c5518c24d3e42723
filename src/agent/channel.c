// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * The agent channel over TLS 1.3 with an external pre-shared key
 * (RFC 8446 §2.2; OpenSSL's psk_use_session / psk_find_session callbacks,
 * as `openssl s_server -psk` does). The key file's 32 bytes are the PSK,
 * used with TLS_AES_128_GCM_SHA256 under a fixed identity: both ends must
 * hold the same file, and a wrong key fails the handshake's binder check
 * (the agent sees "bad PSK binder", the initiator a decrypt_error alert).
 * Blocking sockets with timeouts: a peer that stops answering is an error
 * after timeout_ms, not a hang.
 */
#include "agent/channel.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <arpa/inet.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/sha.h>
#include <openssl/ssl.h>

#include "dl.h"

#define PSK_IDENTITY "iotrail-agent-key-v1"

/* OpenSSL, loaded when a channel or a key id is first needed (dl.h):
 * linked, libssl and libcrypto kept 1.7 MB resident in every iotrail
 * process for the agent and record --target. The headers stay for the
 * types and constants; the functions are called through this table
 * (ossl.NAME, with NAME's own type). */
#define OSSL_FUNCS(X)                                                                      \
	X(ERR_clear_error) X(ERR_peek_last_error) X(ERR_reason_error_string) X(SHA256)        \
	X(SSL_CIPHER_find) X(SSL_CTX_ctrl) X(SSL_CTX_free) X(SSL_CTX_new)                     \
	X(SSL_CTX_set_ciphersuites) X(SSL_CTX_set_num_tickets)                                \
	X(SSL_CTX_set_psk_find_session_callback) X(SSL_CTX_set_psk_use_session_callback)      \
	X(SSL_SESSION_free) X(SSL_SESSION_new) X(SSL_SESSION_set1_master_key)                 \
	X(SSL_SESSION_set_cipher) X(SSL_SESSION_set_protocol_version) X(SSL_accept)           \
	X(SSL_connect) X(SSL_free) X(SSL_get_error) X(SSL_new) X(SSL_read_ex) X(SSL_set_fd)   \
	X(SSL_shutdown) X(SSL_write_ex) X(TLS_client_method) X(TLS_server_method)

#define OSSL_MEMBER(name) __typeof__(name) *name;
static struct {
	OSSL_FUNCS(OSSL_MEMBER)
} ossl;

/* 0 once OpenSSL is loaded, or -1 with why in err */
static int ossl_load(char *err, size_t errlen)
{
	static void *so;
#define OSSL_SYM(name) { (void **)&ossl.name, #name },
	const struct it_dl_sym syms[] = { OSSL_FUNCS(OSSL_SYM) };
#undef OSSL_SYM

	/* libssl's handle finds libcrypto's functions too: it depends on it */
	return it_dl_load(&so, "libssl.so.3", "OpenSSL", "libssl3", syms,
			  sizeof(syms) / sizeof(syms[0]), err, errlen);
}

struct it_chan {
	int fd;
	SSL_CTX *ctx;
	SSL *ssl;
	uint8_t *buf;       /* the message being received */
	size_t cap;
	char peer[80];
};

static uint8_t chan_key[IT_AGENT_KEY_LEN]; /* one handshake at a time per process */
/* the agent's side: its keys, the one the initiator's key id named, and
 * an id that named none (for the reason) */
static const struct it_keyring *chan_ring;
static size_t chan_which;
static char chan_unknown_id[17];

int it_key_load(const char *path, uint8_t key[IT_AGENT_KEY_LEN], char *err, size_t errlen)
{
	char text[2 * IT_AGENT_KEY_LEN + 4];
	struct stat st;
	ssize_t n;
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW);

	if (fd < 0) {
		snprintf(err, errlen, "cannot open key file %s: %s; create one with `iotrail agent "
			 "--new-key %s` and copy it to both machines", path, strerror(errno), path);
		return -1;
	}
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (st.st_mode & 077)) {
		snprintf(err, errlen, "key file %s is mode %04o, readable by others than its owner; "
			 "chmod 600 %s (and make a new key if others may have read it)", path,
			 (unsigned)(st.st_mode & 07777), path);
		close(fd);
		return -1;
	}
	n = read(fd, text, sizeof(text));
	close(fd);
	while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == '\r'))
		n--;
	for (ssize_t i = 0; n == 2 * IT_AGENT_KEY_LEN && i < IT_AGENT_KEY_LEN; i++) {
		unsigned v;

		if (sscanf(text + 2 * i, "%2x", &v) != 1) {
			n = -1;
			break;
		}
		key[i] = (uint8_t)v;
	}
	if (n != 2 * IT_AGENT_KEY_LEN) {
		snprintf(err, errlen, "key file %s does not hold 64 hex digits; make one with "
			 "`iotrail agent --new-key FILE`", path);
		return -1;
	}
	return 0;
}

int it_key_new(const char *path, char *err, size_t errlen)
{
	uint8_t key[IT_AGENT_KEY_LEN];
	char text[2 * IT_AGENT_KEY_LEN + 2];
	int fd;

	if (getrandom(key, sizeof(key), 0) != (ssize_t)sizeof(key)) {
		snprintf(err, errlen, "cannot get random bytes: %s", strerror(errno));
		return -1;
	}
	for (int i = 0; i < IT_AGENT_KEY_LEN; i++)
		sprintf(text + 2 * i, "%02x", key[i]);
	text[2 * IT_AGENT_KEY_LEN] = '\n';
	fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
	if (fd < 0) {
		snprintf(err, errlen, "cannot create %s: %s%s", path, strerror(errno),
			 errno == EEXIST ? "; remove it first or give another path" : "");
		return -1;
	}
	if (fchmod(fd, 0600) || write(fd, text, 2 * IT_AGENT_KEY_LEN + 1) != 2 * IT_AGENT_KEY_LEN + 1 ||
	    close(fd)) {
		snprintf(err, errlen, "cannot write %s: %s", path, strerror(errno));
		unlink(path);
		return -1;
	}
	return 0;
}

void it_key_id(const uint8_t key[IT_AGENT_KEY_LEN], char id[17])
{
	uint8_t md[SHA256_DIGEST_LENGTH];
	char why[160];

	if (ossl_load(why, sizeof(why))) { /* the channel, opened next, says why */
		snprintf(id, 17, "????????????????");
		return;
	}
	ossl.SHA256(key, IT_AGENT_KEY_LEN, md);
	for (int i = 0; i < 8; i++)
		sprintf(id + 2 * i, "%02x", md[i]);
}

static int ring_add_file(struct it_keyring *ring, const char *path, char *err, size_t errlen)
{
	uint8_t key[IT_AGENT_KEY_LEN];

	if (ring->n == IT_AGENT_MAX_KEYS) {
		snprintf(err, errlen, "more than %d keys; give at most %d", IT_AGENT_MAX_KEYS,
			 IT_AGENT_MAX_KEYS);
		return -1;
	}
	if (it_key_load(path, key, err, errlen))
		return -1;
	for (size_t i = 0; i < ring->n; i++)
		if (!memcmp(ring->key[i], key, sizeof(key))) {
			snprintf(err, errlen, "key files %s and %s hold the same key; give each "
				 "initiator its own key, once", ring->path[i], path);
			return -1;
		}
	memcpy(ring->key[ring->n], key, sizeof(key));
	snprintf(ring->path[ring->n++], sizeof(ring->path[0]), "%s", path);
	return 0;
}

int it_keyring_add(struct it_keyring *ring, const char *path, char *err, size_t errlen)
{
	struct dirent **names;
	struct stat st;
	int n, rc = 0;

	if (stat(path, &st) || !S_ISDIR(st.st_mode))
		return ring_add_file(ring, path, err, errlen);
	if ((n = scandir(path, &names, NULL, alphasort)) < 0) {
		snprintf(err, errlen, "cannot read the key directory %s: %s", path, strerror(errno));
		return -1;
	}
	size_t before = ring->n;
	for (int i = 0; i < n; i++) {
		char file[512];

		snprintf(file, sizeof(file), "%s/%s", path, names[i]->d_name);
		if (!rc && names[i]->d_name[0] != '.' && !stat(file, &st) && S_ISREG(st.st_mode))
			rc = ring_add_file(ring, file, err, errlen);
		free(names[i]);
	}
	free(names);
	if (!rc && ring->n == before) {
		snprintf(err, errlen, "the key directory %s holds no key file; make one with "
			 "`iotrail agent --new-key %s/NAME.key`", path, path);
		rc = -1;
	}
	return rc;
}

/* The PSK as a TLS 1.3 session OpenSSL can use or find. */
static SSL_SESSION *psk_session(SSL *ssl)
{
	static const unsigned char aes128gcmsha256[] = { 0x13, 0x01 };
	const SSL_CIPHER *cipher = ossl.SSL_CIPHER_find(ssl, aes128gcmsha256);
	SSL_SESSION *s = cipher ? ossl.SSL_SESSION_new() : NULL;

	if (s && (!ossl.SSL_SESSION_set1_master_key(s, chan_key, sizeof(chan_key)) ||
		  !ossl.SSL_SESSION_set_cipher(s, cipher) ||
		  !ossl.SSL_SESSION_set_protocol_version(s, TLS1_3_VERSION))) {
		ossl.SSL_SESSION_free(s);
		s = NULL;
	}
	return s;
}

/* The initiator's identity: PSK_IDENTITY ":" its key id. */
static int use_session(SSL *ssl, const EVP_MD *md, const unsigned char **id, size_t *idlen,
		       SSL_SESSION **sess)
{
	static char identity[sizeof(PSK_IDENTITY) + 17];

	(void)md;
	snprintf(identity, sizeof(identity), "%s:", PSK_IDENTITY);
	it_key_id(chan_key, identity + strlen(identity));
	*sess = psk_session(ssl);
	*id = (const unsigned char *)identity;
	*idlen = strlen(identity);
	return *sess != NULL;
}

/* The agent's key for the identity: the one its key id names; the bare
 * PSK_IDENTITY of an initiator before key ids, when the agent has one key. */
static int find_session(SSL *ssl, const unsigned char *id, size_t idlen, SSL_SESSION **sess)
{
	size_t plen = strlen(PSK_IDENTITY);

	*sess = NULL;
	if (idlen < plen || memcmp(id, PSK_IDENTITY, plen))
		return 1; /* not ours: the handshake fails for want of a PSK */
	if (idlen == plen && chan_ring->n == 1) {
		chan_which = 0;
	} else if (idlen == plen + 17 && id[plen] == ':') {
		char want[17], have[17];

		memcpy(want, id + plen + 1, 16);
		want[16] = '\0';
		for (chan_which = 0; chan_which < chan_ring->n; chan_which++) {
			it_key_id(chan_ring->key[chan_which], have);
			if (!strcmp(have, want))
				break;
		}
		if (chan_which == chan_ring->n) {
			memcpy(chan_unknown_id, want, sizeof(want));
			return 1;
		}
	} else {
		return 1;
	}
	memcpy(chan_key, chan_ring->key[chan_which], sizeof(chan_key));
	*sess = psk_session(ssl);
	return *sess != NULL;
}

/* OpenSSL's reason, made plain for the two cases people meet. */
static void tls_reason(char *out, size_t len, bool server)
{
	unsigned long e = ossl.ERR_peek_last_error();
	const char *r = e ? ossl.ERR_reason_error_string(e) : NULL;

	if (!r)
		r = "connection closed during the handshake";
	if (server && chan_unknown_id[0])
		snprintf(out, len, "the keys differ: its key (key id %s) is none of this agent's "
			 "keys; give the agent that initiator's key file with --key, or the "
			 "initiator one of them", chan_unknown_id);
	else if (strstr(r, "binder") || strstr(r, "decrypt error") || strstr(r, "bad record mac"))
		snprintf(out, len, "the keys differ (TLS: %s); use the same key file on both "
			 "machines", r);
	else if (!server && strstr(r, "handshake failure"))
		/* what OpenSSL's server answers when no key of its has our key id */
		snprintf(out, len, "the agent has no key of ours (TLS: %s): the keys differ; give "
			 "the agent this key file with --key, or use one of its keys", r);
	else if (!server && strstr(r, "illegal parameter"))
		/* what OpenSSL's server answers to a PSK binder made with another key */
		snprintf(out, len, "the agent refused our key (TLS: %s): the keys differ; use the "
			 "same key file on both machines", r);
	else if (server && (strstr(r, "no shared cipher") || strstr(r, "certificate") ||
			    strstr(r, "wrong version") || strstr(r, "http")))
		snprintf(out, len, "the peer is not an iotrail initiator with a key (TLS: %s)", r);
	else
		snprintf(out, len, "TLS handshake failed: %s", r);
	ossl.ERR_clear_error();
}

static void set_timeouts(int fd, int ms)
{
	struct timeval tv = { .tv_sec = ms / 1000, .tv_usec = (ms % 1000) * 1000 };
	int one = 1;

	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
}

void it_chan_set_timeout(struct it_chan *c, int timeout_ms)
{
	set_timeouts(c->fd, timeout_ms);
}

static struct it_chan *chan_new(int fd, const uint8_t *key, bool server, int timeout_ms,
				char *err, size_t errlen)
{
	struct it_chan *c = calloc(1, sizeof(*c));
	int rc;

	if (!c) {
		snprintf(err, errlen, "out of memory");
		close(fd);
		return NULL;
	}
	c->fd = fd;
	if (ossl_load(err, errlen))
		goto fail;
	memcpy(chan_key, key, sizeof(chan_key));
	set_timeouts(fd, timeout_ms);
	c->ctx = ossl.SSL_CTX_new(server ? ossl.TLS_server_method() : ossl.TLS_client_method());
	if (!c->ctx || !ossl.SSL_CTX_ctrl(c->ctx, SSL_CTRL_SET_MIN_PROTO_VERSION, TLS1_3_VERSION, NULL) ||
	    !ossl.SSL_CTX_set_ciphersuites(c->ctx, "TLS_AES_128_GCM_SHA256")) {
		snprintf(err, errlen, "cannot set up TLS 1.3 (OpenSSL)");
		goto fail;
	}
	ossl.SSL_CTX_set_num_tickets(c->ctx, 0);
	if (server)
		ossl.SSL_CTX_set_psk_find_session_callback(c->ctx, find_session);
	else
		ossl.SSL_CTX_set_psk_use_session_callback(c->ctx, use_session);
	if (!(c->ssl = ossl.SSL_new(c->ctx)) || !ossl.SSL_set_fd(c->ssl, fd)) {
		snprintf(err, errlen, "cannot set up TLS 1.3 (OpenSSL)");
		goto fail;
	}
	ossl.ERR_clear_error();
	rc = server ? ossl.SSL_accept(c->ssl) : ossl.SSL_connect(c->ssl);
	if (rc != 1) {
		if (errno == EAGAIN && !ossl.ERR_peek_last_error())
			snprintf(err, errlen, "no answer in %d ms during the TLS handshake",
				 timeout_ms);
		else
			tls_reason(err, errlen, server);
		goto fail;
	}
	return c;
fail:
	it_chan_close(c);
	return NULL;
}

int it_hostport_split(const char *s, char *host, size_t hostlen, char *port, size_t portlen,
		      char *err, size_t errlen)
{
	const char *colon = strrchr(s, ':');
	const char *h = s, *p = colon ? colon + 1 : s;
	size_t hl = colon ? (size_t)(colon - s) : 0;
	char *end;
	long v = strtol(p, &end, 10);

	if (hl >= 2 && h[0] == '[' && h[hl - 1] == ']') {
		h++;
		hl -= 2;
	}
	if (!*p || *end || v < 1 || v > 65535 || hl >= hostlen) {
		snprintf(err, errlen, "'%s' is not HOST:PORT (a port from 1 to 65535)", s);
		return -1;
	}
	snprintf(host, hostlen, "%.*s", (int)hl, hl ? h : "127.0.0.1");
	snprintf(port, portlen, "%ld", v);
	return 0;
}

struct it_chan *it_chan_connect(const char *hostport, const uint8_t *key, int timeout_ms,
				char *err, size_t errlen)
{
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM }, *ai = NULL, *a;
	char host[256], port[8], why[160] = "no address";
	struct it_chan *c;
	int fd = -1, rc;

	if (it_hostport_split(hostport, host, sizeof(host), port, sizeof(port), err, errlen))
		return NULL;
	if ((rc = getaddrinfo(host, port, &hints, &ai))) {
		snprintf(err, errlen, "cannot resolve %s: %s", host, gai_strerror(rc));
		return NULL;
	}
	for (a = ai; a; a = a->ai_next) {
		fd = socket(a->ai_family, a->ai_socktype | SOCK_CLOEXEC, a->ai_protocol);
		if (fd < 0)
			continue;
		set_timeouts(fd, timeout_ms);
		if (!connect(fd, a->ai_addr, a->ai_addrlen))
			break;
		snprintf(why, sizeof(why), "%s", strerror(errno));
		close(fd);
		fd = -1;
	}
	freeaddrinfo(ai);
	if (fd < 0) {
		snprintf(err, errlen, "cannot connect to %s: %s; is `iotrail agent` running there "
			 "and listening on that address (--listen)?", hostport, why);
		return NULL;
	}
	c = chan_new(fd, key, false, timeout_ms, err, errlen);
	if (c)
		snprintf(c->peer, sizeof(c->peer), "%s", hostport);
	return c;
}

struct it_chan *it_chan_accept(int fd, const struct it_keyring *ring, size_t *which,
			       int timeout_ms, char *err, size_t errlen)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[64] = "?", peer[80];
	struct it_chan *c;
	int port = 0;

	if (!getpeername(fd, (struct sockaddr *)&ss, &sl)) {
		if (ss.ss_family == AF_INET) {
			inet_ntop(AF_INET, &((struct sockaddr_in *)&ss)->sin_addr, host, sizeof(host));
			port = ntohs(((struct sockaddr_in *)&ss)->sin_port);
		} else if (ss.ss_family == AF_INET6) {
			inet_ntop(AF_INET6, &((struct sockaddr_in6 *)&ss)->sin6_addr, host, sizeof(host));
			port = ntohs(((struct sockaddr_in6 *)&ss)->sin6_port);
		}
	}
	snprintf(peer, sizeof(peer), "%s:%d", host, port);
	chan_ring = ring;
	chan_which = 0;
	chan_unknown_id[0] = '\0';
	c = chan_new(fd, ring->key[0], true, timeout_ms, err, errlen);
	*which = chan_which;
	if (c)
		snprintf(c->peer, sizeof(c->peer), "%s", peer);
	else if (strlen(err) + strlen(peer) + 3 < errlen) {
		memmove(err + strlen(peer) + 2, err, strlen(err) + 1);
		memcpy(err, peer, strlen(peer));
		memcpy(err + strlen(peer), ": ", 2);
	}
	return c;
}

static int io_fail(struct it_chan *c, int rc, const char *what, char *err, size_t errlen)
{
	int e = ossl.SSL_get_error(c->ssl, rc);

	if (e == SSL_ERROR_ZERO_RETURN)
		snprintf(err, errlen, "%s: the peer closed the connection", what);
	else if (e == SSL_ERROR_WANT_READ || e == SSL_ERROR_WANT_WRITE ||
		 (e == SSL_ERROR_SYSCALL && (errno == EAGAIN || errno == EWOULDBLOCK)))
		/* a socket timeout: OpenSSL 3 reports EAGAIN as a retry */
		snprintf(err, errlen, "%s: no answer from the peer (timed out)", what);
	else if (e == SSL_ERROR_SYSCALL)
		snprintf(err, errlen, "%s: %s", what, errno ? strerror(errno) :
			 "the connection was cut");
	else if (ERR_GET_REASON(ossl.ERR_peek_last_error()) == SSL_R_UNEXPECTED_EOF_WHILE_READING)
		snprintf(err, errlen, "%s: the connection was cut (the peer died?)", what);
	else
		snprintf(err, errlen, "%s: TLS error %s", what,
			 ossl.ERR_reason_error_string(ossl.ERR_peek_last_error()) ?: "(unknown)");
	ossl.ERR_clear_error();
	return -1;
}

static int write_all(struct it_chan *c, const void *p, size_t n, char *err, size_t errlen)
{
	while (n) {
		size_t done = 0;
		int rc = ossl.SSL_write_ex(c->ssl, p, n, &done);

		if (rc <= 0)
			return io_fail(c, rc, "send", err, errlen);
		p = (const char *)p + done;
		n -= done;
	}
	return 0;
}

int it_chan_send(struct it_chan *c, const struct it_agent_msg *m, char *err, size_t errlen)
{
	uint8_t out[IT_AGENT_HDR + IT_AGENT_MAX_MSG];
	size_t n = it_agent_encode(m, out, sizeof(out));

	if (!n) {
		snprintf(err, errlen, "message too large to send");
		return -1;
	}
	if (write_all(c, out, n, err, errlen))
		return -1;
	if (m->type == IT_MSG_DATA && m->u.data.len)
		return write_all(c, m->u.data.bytes, m->u.data.len, err, errlen);
	return 0;
}

/* Reads exactly n bytes at c->buf + at: 1, 0 on a clean close before any, -1. */
static int read_n(struct it_chan *c, size_t at, size_t n, char *err, size_t errlen)
{
	size_t got = 0;

	while (got < n) {
		size_t done = 0;
		int rc = ossl.SSL_read_ex(c->ssl, c->buf + at + got, n - got, &done);

		if (rc <= 0) {
			if (!got && !at && ossl.SSL_get_error(c->ssl, rc) == SSL_ERROR_ZERO_RETURN)
				return 0;
			return io_fail(c, rc, "receive", err, errlen);
		}
		got += done;
	}
	return 1;
}

int it_chan_recv(struct it_chan *c, struct it_agent_msg *m, char *err, size_t errlen)
{
	long flen;
	int rc;

	if (c->cap < IT_AGENT_HDR + IT_AGENT_MAX_MSG) {
		free(c->buf);
		if (!(c->buf = malloc(IT_AGENT_HDR + IT_AGENT_MAX_MSG))) {
			c->cap = 0;
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		c->cap = IT_AGENT_HDR + IT_AGENT_MAX_MSG;
	}
	if ((rc = read_n(c, 0, IT_AGENT_HDR, err, errlen)) <= 0)
		return rc;
	if ((flen = it_agent_frame_len(c->buf, IT_AGENT_HDR, err, errlen)) < 0)
		return -1;
	if ((size_t)flen > c->cap) {
		uint8_t *p = realloc(c->buf, (size_t)flen);

		if (!p) {
			snprintf(err, errlen, "out of memory");
			return -1;
		}
		c->buf = p;
		c->cap = (size_t)flen;
	}
	if (flen > IT_AGENT_HDR && read_n(c, IT_AGENT_HDR, (size_t)flen - IT_AGENT_HDR, err,
					  errlen) < 0)
		return -1;
	return it_agent_parse(c->buf, (size_t)flen, m, err, errlen) > 0 ? 1 : -1;
}

const char *it_chan_peer(const struct it_chan *c)
{
	return c->peer;
}

void it_chan_close(struct it_chan *c)
{
	if (!c)
		return;
	if (c->ssl) {
		ossl.SSL_shutdown(c->ssl);
		ossl.SSL_free(c->ssl);
	}
	if (c->ctx) /* none when OpenSSL did not load */
		ossl.SSL_CTX_free(c->ctx);
	if (c->fd >= 0)
		close(c->fd);
	free(c->buf);
	free(c);
}
