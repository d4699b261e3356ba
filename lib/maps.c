/*
 * maps.c - /proc/self/maps, read without malloc: what is mapped where,
 * for the scan (the end of each thread's stack, which of the program's
 * own mappings are readable and writable now), and which pages of a
 * range are resident (mincore), so that the scan never walks a sparse
 * reservation page by page nor reads a hole of a shared mapping, which
 * would allocate it.  A device mapping is never read (valgrind skips
 * them too): reading one may have effects.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "internal.h"

/* Parse one line: "lo-hi perms offset dev inode   path". */
static bool parse_line(char *line, struct mc_mapping *m)
{
	char *end;
	m->lo = strtoull(line, &end, 16);
	if (*end != '-')
		return false;
	m->hi = strtoull(end + 1, &end, 16);
	if (*end != ' ' || !end[1] || !end[2] || !end[3] || !end[4])
		return false;
	m->prot = (end[1] == 'r' ? PROT_READ : 0) | (end[2] == 'w' ? PROT_WRITE : 0) |
		  (end[3] == 'x' ? PROT_EXEC : 0);
	m->shared = end[4] == 's';
	/* the path: after offset, device and inode */
	char *p = end + 5;
	for (int field = 0; field < 3 && *p; field++) {
		while (*p == ' ')
			p++;
		while (*p && *p != ' ')
			p++;
	}
	while (*p == ' ')
		p++;
	m->kind = MC_MAP_ANON;
	if (!strncmp(p, "[stack]", 7))
		m->kind = MC_MAP_STACK;
	else if (*p == '[')
		m->kind = MC_MAP_SPECIAL; /* [heap], [vvar], [vdso], [anon:...] */
	else if (!strncmp(p, "/dev/", 5) && strncmp(p, "/dev/zero", 9) && strncmp(p, "/dev/shm/", 9))
		m->kind = MC_MAP_DEVICE;
	else if (*p)
		m->kind = MC_MAP_FILE;
	return m->hi > m->lo;
}

bool mc_maps_read(struct mc_maps *out)
{
	memset(out, 0, sizeof *out);
	size_t bufcap = 64 << 10; /* grown for a process with many mappings */
	char *buf = mc_map_io(bufcap);
	if (!buf)
		return false;
	int fd = open("/proc/self/maps", O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		mc_unmap_io(buf, bufcap);
		return false;
	}
	size_t len = 0;
	for (;;) {
		if (len + 4096 > bufcap) {
			/* Grow: the table of a process with many mappings. */
			char *n = mc_map_io(bufcap * 4);
			if (!n)
				break;
			memcpy(n, buf, len);
			mc_unmap_io(buf, bufcap);
			buf = n;
			bufcap *= 4;
		}
		ssize_t r = read(fd, buf + len, bufcap - 1 - len);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		len += (size_t)r;
	}
	close(fd);
	buf[len] = 0;
	size_t lines = 0;
	for (size_t i = 0; i < len; i++)
		lines += buf[i] == '\n';
	out->cap = lines + 1;
	out->v = mc_map(out->cap * sizeof *out->v);
	if (out->v) {
		for (char *line = buf; line && *line && out->n < out->cap;) {
			char *nl = strchr(line, '\n');
			if (nl)
				*nl = 0;
			if (parse_line(line, &out->v[out->n]))
				out->n++;
			line = nl ? nl + 1 : NULL;
		}
	}
	mc_unmap_io(buf, bufcap);
	return out->v != NULL;
}

void mc_maps_free(struct mc_maps *m)
{
	if (m->v)
		mc_unmap(m->v, m->cap * sizeof *m->v);
	memset(m, 0, sizeof *m);
}

const struct mc_mapping *mc_maps_find(const struct mc_maps *m, uintptr_t addr)
{
	size_t lo = 0, hi = m->n;
	while (lo < hi) {
		size_t mid = (lo + hi) / 2;
		if (m->v[mid].hi <= addr)
			lo = mid + 1;
		else if (m->v[mid].lo > addr)
			hi = mid;
		else
			return &m->v[mid];
	}
	return NULL;
}

/* The resident pages of [lo, hi), in runs, to fn. */
#define CHUNK 4096 /* pages per mincore call (16 MiB): vec's size */
static void resident_runs(uintptr_t lo, uintptr_t hi, unsigned char *vec,
			  void (*fn)(uintptr_t, uintptr_t, void *), void *arg)
{
	const size_t chunk = CHUNK;
	for (uintptr_t at = lo; at < hi;) {
		size_t pages = (hi - at) / 4096;
		if (pages > chunk)
			pages = chunk;
		if (mincore((void *)at, pages * 4096, vec) != 0) {
			fn(at, at + pages * 4096, arg); /* cannot tell: read it */
			at += pages * 4096;
			continue;
		}
		for (size_t i = 0; i < pages;) {
			if (!(vec[i] & 1)) {
				i++;
				continue;
			}
			size_t j = i;
			while (j < pages && (vec[j] & 1))
				j++;
			fn(at + i * 4096, at + j * 4096, arg);
			i = j;
		}
		at += pages * 4096;
	}
}

void mc_maps_roots(const struct mc_maps *m, const struct mc_ranges *r,
		   void (*fn)(uintptr_t lo, uintptr_t hi, void *arg), void *arg)
{
	unsigned char *vec = r->n ? mc_map_io(CHUNK) : NULL; /* the kernel writes it */
	for (size_t i = 0; vec && i < r->n; i++) {
		for (const struct mc_mapping *mp = m->v; mp < m->v + m->n && mp->lo < r->v[i].hi;
		     mp++) {
			if (mp->hi <= r->v[i].lo)
				continue;
			if ((mp->prot & (PROT_READ | PROT_WRITE)) != (PROT_READ | PROT_WRITE) ||
			    mp->kind == MC_MAP_DEVICE)
				continue;
			uintptr_t lo = mp->lo > r->v[i].lo ? mp->lo : r->v[i].lo;
			uintptr_t hi = mp->hi < r->v[i].hi ? mp->hi : r->v[i].hi;
			resident_runs(lo, hi, vec, fn, arg);
		}
	}
	if (vec)
		mc_unmap_io(vec, CHUNK);
}
