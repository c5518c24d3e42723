/* SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause */
/* Libraries loaded when a command first needs them (dlopen), not linked:
 * libcurl (src/http.c) and OpenSSL (src/agent/channel.c). Linked, they and
 * what they pull in stayed resident in every iotrail process, the
 * recorder's among them, for the few commands that use them. */
#ifndef IOTRAIL_DL_H
#define IOTRAIL_DL_H

#include <stddef.h>

struct it_dl_sym {
	void **fn;        /* where the function's address goes */
	const char *name;
};

/* Loads soname once (*so keeps it) and fills every symbol: 0, or -1 with
 * why in err, naming what (the library) and the package that provides it. */
int it_dl_load(void **so, const char *soname, const char *what, const char *package,
	       const struct it_dl_sym *syms, size_t nsyms, char *err, size_t errlen);

#endif
