/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/*
 * The agent channel: the shared key file, TLS 1.3 with that key as an
 * external pre-shared key (OpenSSL; no certificates, no home-made
 * cryptography), and whole protocol messages over it (proto.h).
 */
#ifndef IOTRAIL_AGENT_CHANNEL_H
#define IOTRAIL_AGENT_CHANNEL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "agent/proto.h"

#define IT_AGENT_KEY_DEFAULT "/etc/iotrail/agent.key"
#define IT_AGENT_KEY_LEN 32

/* Reads a key file: 64 hex digits (a newline may follow), mode 0600 or
 * stricter, a regular file. 0, or -1 with the one-line reason in err
 * ("WHY; WHAT TO DO"). */
int it_key_load(const char *path, uint8_t key[IT_AGENT_KEY_LEN], char *err, size_t errlen);
/* Creates path (it must not exist) with 32 random bytes in hex, mode 0600. */
int it_key_new(const char *path, char *err, size_t errlen);

/* The agent's keys: one per initiator (or one for all), each with the
 * file it came from. An initiator names its key by a key id (the first 8
 * bytes of SHA-256 of the key, in hex: public, it tells nothing of the
 * key) in its PSK identity; the agent takes the key of that id. */
#define IT_AGENT_MAX_KEYS 64
struct it_keyring {
	size_t n;
	uint8_t key[IT_AGENT_MAX_KEYS][IT_AGENT_KEY_LEN];
	char path[IT_AGENT_MAX_KEYS][256];
};
/* Adds the key file at path (it_key_load's checks), or every regular file
 * of the directory at path. 0, or -1 with the one-line reason (a key
 * given twice under two names is refused: which one authenticated a
 * session would be unknown). */
int it_keyring_add(struct it_keyring *ring, const char *path, char *err, size_t errlen);
/* key's id: 16 hex digits and a NUL. */
void it_key_id(const uint8_t key[IT_AGENT_KEY_LEN], char id[17]);

struct it_chan;
/* Connects to host:port (the agent's side: it_chan_accept on an accepted
 * fd) and completes the TLS handshake with key. NULL with a one-line
 * reason on failure; a wrong key fails here, on both ends. */
struct it_chan *it_chan_connect(const char *hostport, const uint8_t *key, int timeout_ms,
				char *err, size_t errlen);
/* The agent's side, with any key of ring; *which: the index of the key
 * that authenticated the initiator. */
struct it_chan *it_chan_accept(int fd, const struct it_keyring *ring, size_t *which,
			       int timeout_ms, char *err, size_t errlen);
/* Sends one message (DATA: its bytes follow the header). 0 or -1. */
int it_chan_send(struct it_chan *c, const struct it_agent_msg *m, char *err, size_t errlen);
/* Receives one message into *m (valid until the next call). 1, 0 when the
 * peer closed cleanly, -1 with a reason. */
int it_chan_recv(struct it_chan *c, struct it_agent_msg *m, char *err, size_t errlen);
/* The peer's address, "10.0.0.1:41234". */
const char *it_chan_peer(const struct it_chan *c);
/* How long a send or a receive may wait for the peer from now on. */
void it_chan_set_timeout(struct it_chan *c, int timeout_ms);
void it_chan_close(struct it_chan *c);

/* host:port, or :port / port alone (127.0.0.1), into a sockaddr string
 * pair. 0 or -1 with a reason. */
int it_hostport_split(const char *s, char *host, size_t hostlen, char *port, size_t portlen,
		      char *err, size_t errlen);

#endif
