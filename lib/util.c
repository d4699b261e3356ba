/*
 * util.c - small things every file needs: mmap'd memory, an mmap'd string
 * buffer, writing to a file descriptor, logging.  Nothing here calls
 * malloc, so it is safe inside the hooks.
 */
#include <dlfcn.h>
#include <errno.h>
#include <link.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"

#if __has_include(<valgrind/memcheck.h>)
#include <valgrind/memcheck.h>
#define VG_HIDE(p, n)                                                          \
	do {                                                                   \
		VALGRIND_DISABLE_ADDR_ERROR_REPORTING_IN_RANGE(p, n);          \
		VALGRIND_MAKE_MEM_NOACCESS(p, n);                              \
	} while (0)
#define VG_UNHIDE(p, n) VALGRIND_ENABLE_ADDR_ERROR_REPORTING_IN_RANGE(p, n)
#else
#define VG_HIDE(p, n) ((void)0)
#define VG_UNHIDE(p, n) ((void)0)
#endif

extern char *program_invocation_name;

/* Under valgrind, memcheck's own memory (the live-block table above all,
 * which holds every block's address) must not be a root of valgrind's
 * leak check, or every block is "still reachable".  valgrind's scan
 * skips memory it takes for unaddressable, and fast (it also reads the
 * table's 4 GiB reservation word by word otherwise: 5 s a check); the
 * range's address errors are disabled, so memcheck's own accesses are
 * not reported. */
static void *map_plain(size_t size)
{
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE,
		       MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	return p == MAP_FAILED ? NULL : p;
}

void *mc_map(size_t size)
{
	void *p = map_plain(size);
	if (p)
		VG_HIDE(p, size);
	return p;
}

void mc_unmap(void *p, size_t size)
{
	if (p) {
		VG_UNHIDE(p, size);
		munmap(p, size);
	}
}

/* Memory a system call reads into or writes from (text, no pointers):
 * valgrind checks a read(2) or write(2) buffer whatever the range, so it
 * must not be hidden. */
void *mc_map_io(size_t size)
{
	return map_plain(size);
}

void mc_unmap_io(void *p, size_t size)
{
	if (p)
		munmap(p, size);
}

static bool buf_reserve(struct mc_buf *b, size_t extra)
{
	if (b->oom)
		return false;
	if (b->len + extra + 1 <= b->cap)
		return true;
	size_t cap = b->cap ? b->cap : 4096;
	while (cap < b->len + extra + 1)
		cap *= 2;
	char *s = mc_map_io(cap); /* written out with write(2) */
	if (!s) {
		b->oom = true;
		return false;
	}
	if (b->s) {
		memcpy(s, b->s, b->len);
		mc_unmap_io(b->s, b->cap);
	}
	b->s = s;
	b->cap = cap;
	return true;
}

void mc_buf_put(struct mc_buf *b, const char *s, size_t n)
{
	if (!buf_reserve(b, n))
		return;
	memcpy(b->s + b->len, s, n);
	b->len += n;
	b->s[b->len] = 0;
}

void mc_buf_puts(struct mc_buf *b, const char *s)
{
	mc_buf_put(b, s, strlen(s));
}

void mc_buf_printf(struct mc_buf *b, const char *fmt, ...)
{
	char small[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(small, sizeof small, fmt, ap);
	va_end(ap);
	if (n < 0)
		return;
	if ((size_t)n < sizeof small) {
		mc_buf_put(b, small, (size_t)n);
		return;
	}
	if (!buf_reserve(b, (size_t)n))
		return;
	va_start(ap, fmt);
	vsnprintf(b->s + b->len, (size_t)n + 1, fmt, ap);
	va_end(ap);
	b->len += (size_t)n;
}

/* Length of the valid UTF-8 sequence at p (which ends before end), or 0
 * when there is none: overlong forms, surrogates and code points past
 * U+10FFFF are not valid. */
size_t mc_utf8_len(const unsigned char *p, const unsigned char *end)
{
	size_t n;
	uint32_t min, c;
	if (*p < 0x80)
		return 1;
	if ((*p & 0xe0) == 0xc0)
		n = 2, min = 0x80, c = *p & 0x1f;
	else if ((*p & 0xf0) == 0xe0)
		n = 3, min = 0x800, c = *p & 0x0f;
	else if ((*p & 0xf8) == 0xf0)
		n = 4, min = 0x10000, c = *p & 0x07;
	else
		return 0;
	if ((size_t)(end - p) < n)
		return 0;
	for (size_t i = 1; i < n; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		c = c << 6 | (p[i] & 0x3f);
	}
	if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
		return 0;
	return n;
}

/* A JSON string literal, quotes included.  Names, paths and argv[0] need
 * not be UTF-8; a byte that is not part of valid UTF-8 is written as the
 * code point of the same value (\u00XX), so every record stays JSON. */
void mc_buf_json_str(struct mc_buf *b, const char *s)
{
	mc_buf_put(b, "\"", 1);
	const unsigned char *end = (const unsigned char *)(s ? s + strlen(s) : "");
	for (const unsigned char *p = (const unsigned char *)(s ? s : ""); *p;) {
		char esc[8];
		size_t n = mc_utf8_len(p, end);
		if (n > 1) {
			mc_buf_put(b, (const char *)p, n);
			p += n;
			continue;
		}
		switch (*p) {
		case '"': mc_buf_put(b, "\\\"", 2); break;
		case '\\': mc_buf_put(b, "\\\\", 2); break;
		case '\n': mc_buf_put(b, "\\n", 2); break;
		case '\t': mc_buf_put(b, "\\t", 2); break;
		case '\r': mc_buf_put(b, "\\r", 2); break;
		default:
			if (*p < 0x20 || n == 0) {
				snprintf(esc, sizeof esc, "\\u%04x", *p);
				mc_buf_puts(b, esc);
			} else {
				mc_buf_put(b, (const char *)p, 1);
			}
		}
		p++;
	}
	mc_buf_put(b, "\"", 1);
}

/* Copy a name into a fixed array, cut at a character boundary. */
void mc_copy_name(char *dst, size_t size, const char *src)
{
	size_t n = strlen(src);
	if (n >= size) {
		n = size - 1;
		while (n > 0 && ((unsigned char)src[n] & 0xc0) == 0x80)
			n--;
	}
	memcpy(dst, src, n);
	memset(dst + n, 0, size - n);
}

void mc_buf_free(struct mc_buf *b)
{
	mc_unmap_io(b->s, b->cap);
	b->s = NULL;
	b->len = b->cap = 0;
	b->oom = false;
}

void mc_write_all(int fd, const char *s, size_t n)
{
	int saved = errno;
	while (n > 0) {
		ssize_t w = write(fd, s, n);
		if (w < 0) {
			if (errno == EINTR)
				continue;
			break;
		}
		s += w;
		n -= (size_t)w;
	}
	errno = saved;
}

void mc_log(const char *fmt, ...)
{
	char line[1024];
	int saved = errno;
	int n = snprintf(line, sizeof line, "memcheck[%d] %s: ", (int)getpid(), mc_program());
	if (n < 0 || (size_t)n >= sizeof line / 2)
		n = snprintf(line, sizeof line, "memcheck[%d]: ", (int)getpid());
	va_list ap;
	va_start(ap, fmt);
	int m = vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		m = 0;
	size_t len = (size_t)n + (size_t)m;
	if (len > sizeof line - 2)
		len = sizeof line - 2;
	line[len++] = '\n';
	mc_write_all(2, line, len);
	errno = saved;
}

const char *mc_commas(uint64_t v, char buf[32])
{
	char digits[24];
	int n = snprintf(digits, sizeof digits, "%llu", (unsigned long long)v);
	int out = 0;
	for (int i = 0; i < n; i++) {
		if (i > 0 && (n - i) % 3 == 0)
			buf[out++] = ',';
		buf[out++] = digits[i];
	}
	buf[out] = 0;
	return buf;
}

double mc_now(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

const char *mc_program(void)
{
	return program_invocation_name ? program_invocation_name : "?";
}

/* The load address of the object that contains addr, as dladdr's
 * dli_fbase, or NULL.  dladdr also looks for the nearest symbol, a walk
 * of the object's whole dynamic symbol table (~10 us for the C
 * library's, a dozen times at start-up); glibc's _dl_find_object (2.35)
 * finds the object alone.  If the link map's name is wanted, *name gets
 * it ("" for the main program, where dladdr gives argv[0]). */
const void *mc_object_base(const void *addr, const char **name)
{
#if defined(__GLIBC__) && (__GLIBC__ > 2 || (__GLIBC__ == 2 && __GLIBC_MINOR__ >= 35))
	struct dl_find_object fo;
	if (_dl_find_object((void *)addr, &fo) == 0 && fo.dlfo_link_map) {
		if (name)
			*name = fo.dlfo_link_map->l_name;
		return fo.dlfo_map_start;
	}
#endif
	Dl_info info;
	if (!addr || !dladdr(addr, &info))
		return NULL;
	if (name)
		*name = info.dli_fname;
	return info.dli_fbase;
}
