// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/* Libraries loaded when first needed (dl.h). */
#include <dlfcn.h>
#include <stdio.h>

#include "dl.h"

int it_dl_load(void **so, const char *soname, const char *what, const char *package,
	       const struct it_dl_sym *syms, size_t nsyms, char *err, size_t errlen)
{
	if (*so)
		return 0;
	*so = dlopen(soname, RTLD_NOW | RTLD_LOCAL);
	if (!*so) {
		snprintf(err, errlen, "cannot load %s (%s): install it (Debian: %s)", what,
			 dlerror(), package);
		return -1;
	}
	/* a handle finds the functions of the libraries it depends on too */
	for (size_t i = 0; i < nsyms; i++) {
		*syms[i].fn = dlsym(*so, syms[i].name);
		if (!*syms[i].fn) {
			snprintf(err, errlen, "%s has no %s: install a newer %s (Debian: %s)", soname,
				 syms[i].name, what, package);
			dlclose(*so);
			*so = NULL;
			return -1;
		}
	}
	return 0;
}
