// SPDX-License-Identifier: GPL-2.0 OR BSD-3-Clause
/*
 * NVMe-oF endpoints (nvmf.h). The initiator's side of a controller is in
 * sysfs: /sys/class/nvme/nvmeN/{transport, address, subsysnqn}, address
 * being "traddr=10.0.9.2,trsvcid=4420[,src_addr=...]". The target's side
 * is in configfs: /sys/kernel/config/nvmet/ports/P/{addr_trtype,
 * addr_traddr, addr_trsvcid} and P/subsystems/NQN (links to the exported
 * subsystems). A controller and a port meet on the transport, the address
 * the controller connected to, the service id and the subsystem: exactly
 * what the kernel's connect matched, so no guess is involved unless the
 * port listens on every address of its machine.
 */
#include "nvmf.h"

#include <dirent.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first line of dir/name into buf ("" when unreadable). */
static void read_line(const char *dir, const char *name, char *buf, size_t len)
{
	char path[512];
	FILE *f;

	*buf = '\0';
	snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (!(f = fopen(path, "re")))
		return;
	if (fgets(buf, (int)len, f))
		buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* KEY=VALUE out of "k1=v1,k2=v2": its value into out ("" when absent). */
static void address_field(const char *addr, const char *key, char *out, size_t len)
{
	size_t k = strlen(key);

	*out = '\0';
	for (const char *p = addr; p && *p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL) {
		if (!strncmp(p, key, k) && p[k] == '=') {
			size_t n = strcspn(p + k + 1, ",");
			snprintf(out, len, "%.*s", (int)(n < len ? n : len - 1), p + k + 1);
			return;
		}
	}
}

static int push(struct it_nvmf_rec **v, size_t *n, size_t *cap, const struct it_nvmf_rec *r)
{
	if (*n == *cap) {
		size_t c = *cap ? 2 * *cap : 8;
		struct it_nvmf_rec *p = realloc(*v, c * sizeof(*p));

		if (!p)
			return -1;
		*v = p;
		*cap = c;
	}
	(*v)[(*n)++] = *r;
	return 0;
}

/* nvmeN (not nvme-subsysN, not nvmeNcMnK): N */
static bool ctrl_name(const char *name, uint32_t *instance)
{
	char *end;
	unsigned long v;

	if (strncmp(name, "nvme", 4) || name[4] < '0' || name[4] > '9')
		return false;
	v = strtoul(name + 4, &end, 10);
	*instance = (uint32_t)v;
	return !*end && v <= UINT32_MAX;
}

static int host_ctrls(const char *root, struct it_nvmf_rec **v, size_t *n, size_t *cap)
{
	DIR *d = opendir(root);
	struct dirent *de;
	int rc = 0;

	if (!d)
		return 0;
	while (!rc && (de = readdir(d))) {
		struct it_nvmf_rec r = { .role = IT_NVMF_HOST_CTRL };
		char dir[512], addr[256];

		if (!ctrl_name(de->d_name, &r.id))
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", root, de->d_name);
		read_line(dir, "transport", r.transport, sizeof(r.transport));
		if (!r.transport[0] || !strcmp(r.transport, "pcie"))
			continue;
		read_line(dir, "address", addr, sizeof(addr));
		address_field(addr, "traddr", r.traddr, sizeof(r.traddr));
		address_field(addr, "trsvcid", r.trsvcid, sizeof(r.trsvcid));
		read_line(dir, "subsysnqn", r.nqn, sizeof(r.nqn));
		rc = push(v, n, cap, &r);
	}
	closedir(d);
	return rc;
}

static int target_ports(const char *root, struct it_nvmf_rec **v, size_t *n, size_t *cap)
{
	DIR *d = opendir(root), *sd;
	struct dirent *de, *se;
	int rc = 0;

	if (!d)
		return 0;
	while (!rc && (de = readdir(d))) {
		struct it_nvmf_rec r = { .role = IT_NVMF_TARGET_PORT };
		char dir[512], subs[600], *end;

		if (de->d_name[0] == '.')
			continue;
		r.id = (uint32_t)strtoul(de->d_name, &end, 10);
		if (*end)
			continue;
		snprintf(dir, sizeof(dir), "%s/%s", root, de->d_name);
		read_line(dir, "addr_trtype", r.transport, sizeof(r.transport));
		read_line(dir, "addr_traddr", r.traddr, sizeof(r.traddr));
		read_line(dir, "addr_trsvcid", r.trsvcid, sizeof(r.trsvcid));
		snprintf(subs, sizeof(subs), "%s/subsystems", dir);
		if (!(sd = opendir(subs)))
			continue;
		while (!rc && (se = readdir(sd))) {
			if (se->d_name[0] == '.')
				continue;
			if (strlen(se->d_name) >= sizeof(r.nqn))
				continue; /* not an NQN (at most 223 characters) */
			memcpy(r.nqn, se->d_name, strlen(se->d_name) + 1);
			rc = push(v, n, cap, &r);
		}
		closedir(sd);
	}
	closedir(d);
	return rc;
}

long it_nvmf_collect(const char *sysfs_nvme, const char *nvmet_ports, struct it_nvmf_rec **out)
{
	size_t n = 0, cap = 0;

	*out = NULL;
	if (host_ctrls(sysfs_nvme, out, &n, &cap) || target_ports(nvmet_ports, out, &n, &cap)) {
		free(*out);
		*out = NULL;
		return -1;
	}
	return (long)n;
}

static bool wildcard(const char *traddr)
{
	return !strcmp(traddr, "0.0.0.0") || !strcmp(traddr, "::") || !*traddr;
}

/* Whether port p can serve controller c; *exact: by its own address. */
static bool serves(const struct it_nvmf_rec *p, const struct it_nvmf_rec *c, bool *exact)
{
	if (p->role != IT_NVMF_TARGET_PORT || strcmp(p->transport, c->transport) ||
	    strcmp(p->trsvcid, c->trsvcid) || strcmp(p->nqn, c->nqn))
		return false;
	*exact = !strcmp(p->traddr, c->traddr);
	return *exact || wildcard(p->traddr);
}

int it_nvmf_map(const struct it_nvmf_rec *c, const struct it_nvmf_machine *ms, size_t n)
{
	int exact_id = IT_NVMF_UNKNOWN, wild_id = IT_NVMF_UNKNOWN;
	size_t nexact = 0, nwild = 0;

	if (c->role != IT_NVMF_HOST_CTRL)
		return IT_NVMF_UNKNOWN;
	for (size_t i = 0; i < n; i++) {
		bool any_exact = false, any_wild = false;

		if (!ms[i].id)
			continue; /* the initiator: a loopback target is not another machine */
		for (size_t k = 0; k < ms[i].n; k++) {
			bool exact;

			if (serves(&ms[i].recs[k], c, &exact)) {
				any_exact |= exact;
				any_wild |= !exact;
			}
		}
		if (any_exact) {
			nexact++;
			exact_id = ms[i].id;
		} else if (any_wild) {
			nwild++;
			wild_id = ms[i].id;
		}
	}
	if (nexact)
		return nexact == 1 ? exact_id : IT_NVMF_AMBIGUOUS;
	if (nwild)
		return nwild == 1 ? wild_id : IT_NVMF_AMBIGUOUS;
	return IT_NVMF_UNKNOWN;
}
