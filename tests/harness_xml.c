/*
 * harness_xml.c - the harness's strict little XML reader (harness.h).
 *
 * Enough of XML 1.0 to refuse what a JUnit consumer would: one root
 * element after an optional declaration, balanced and properly nested
 * tags, attributes quoted and not repeated, text and attribute values
 * with only the five named entities and character references, no
 * characters XML forbids, valid UTF-8.  Comments, CDATA and processing
 * instructions (other than the declaration) are refused: memcheck
 * writes none.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

struct xp {
	const char *s, *p, *end;
	char err[256];
};

static bool xfail(struct xp *x, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static bool xfail(struct xp *x, const char *fmt, ...)
{
	if (x->err[0])
		return false;
	int n = snprintf(x->err, sizeof x->err, "offset %td: ", x->p - x->s);
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(x->err + n, sizeof x->err - (size_t)n, fmt, ap);
	va_end(ap);
	return false;
}

static void xws(struct xp *x)
{
	while (x->p < x->end && strchr(" \t\r\n", *x->p))
		x->p++;
}

static bool xname_char(char c, bool first)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' ||
	       (!first && ((c >= '0' && c <= '9') || c == '-' || c == '.'));
}

static char *xname(struct xp *x)
{
	const char *b = x->p;
	if (x->p >= x->end || !xname_char(*x->p, true))
		return xfail(x, "expected a name"), NULL;
	while (x->p < x->end && xname_char(*x->p, false))
		x->p++;
	return strndup(b, (size_t)(x->p - b));
}

static bool xml_char_ok(unsigned long c)
{
	return c == 0x9 || c == 0xa || c == 0xd || (c >= 0x20 && c <= 0xd7ff) ||
	       (c >= 0xe000 && c <= 0xfffd) || (c >= 0x10000 && c <= 0x10ffff);
}

/* One character of text or of an attribute value, decoded into out;
 * stop (returns false without error) at stop or '<'. */
static bool xchar(struct xp *x, char stop, char *out, size_t *n)
{
	if (x->p >= x->end)
		return xfail(x, "unexpected end");
	unsigned char c = (unsigned char)*x->p;
	if (c == (unsigned char)stop || c == '<')
		return false;
	if (c == '&') {
		static const char *const names[] = { "amp;&", "lt;<", "gt;>", "quot;\"", "apos;'" };
		x->p++;
		for (size_t i = 0; i < 5; i++) {
			size_t len = strchr(names[i], ';') - names[i] + 1;
			if ((size_t)(x->end - x->p) >= len && !strncmp(x->p, names[i], len)) {
				out[(*n)++] = names[i][len];
				x->p += len;
				return true;
			}
		}
		if (x->p < x->end && *x->p == '#') {
			char *e;
			unsigned long v;
			bool hex = x->p + 1 < x->end && x->p[1] == 'x';
			const char *digits = x->p + (hex ? 2 : 1);
			if (strspn(digits, hex ? "0123456789abcdefABCDEF" : "0123456789") == 0)
				return xfail(x, "bad character reference");
			v = strtoul(digits, &e, hex ? 16 : 10);
			if (e >= x->end || *e != ';' || !xml_char_ok(v))
				return xfail(x, "bad character reference");
			x->p = e + 1;
			out[(*n)++] = v < 0x80 ? (char)v : '?';
			return true;
		}
		return xfail(x, "'&' that starts no entity");
	}
	if (c < 0x20 && c != '\t' && c != '\n' && c != '\r')
		return xfail(x, "control character 0x%02x", c);
	if (c == '>' && x->p - x->s >= 2 && !strncmp(x->p - 2, "]]", 2) && stop == '<')
		return xfail(x, "']]>' in text");
	size_t len = c < 0x80 ? 1 : (c & 0xe0) == 0xc0 ? 2 : (c & 0xf0) == 0xe0 ? 3 :
		     (c & 0xf8) == 0xf0 ? 4 : 0;
	if (!len || (size_t)(x->end - x->p) < len)
		return xfail(x, "bad UTF-8");
	for (size_t i = 1; i < len; i++)
		if (((unsigned char)x->p[i] & 0xc0) != 0x80)
			return xfail(x, "bad UTF-8");
	memcpy(out + *n, x->p, len);
	*n += len;
	x->p += len;
	return true;
}

void h_xml_free(struct h_xml *e)
{
	if (!e)
		return;
	free(e->name);
	free(e->text);
	for (int i = 0; i < e->nattr; i++) {
		free(e->attr[i].name);
		free(e->attr[i].value);
	}
	for (int i = 0; i < e->nkids; i++)
		h_xml_free(e->kid[i]);
	free(e);
}

static struct h_xml *xelement(struct xp *x, int depth)
{
	if (depth > 32)
		return xfail(x, "too deep"), NULL;
	if (x->p >= x->end || *x->p != '<')
		return xfail(x, "expected '<'"), NULL;
	x->p++;
	struct h_xml *e = calloc(1, sizeof *e);
	size_t tcap = 64, tn = 0;
	e->text = calloc(1, tcap);
	if (!(e->name = xname(x)))
		goto bad;
	for (;;) {
		const char *before = x->p;
		xws(x);
		if (x->p < x->end && (*x->p == '/' || *x->p == '>'))
			break;
		if (x->p == before) {
			xfail(x, "expected a space before an attribute");
			goto bad;
		}
		if (e->nattr == 16) {
			xfail(x, "too many attributes");
			goto bad;
		}
		struct h_xml_attr *a = &e->attr[e->nattr];
		if (!(a->name = xname(x)))
			goto bad;
		e->nattr++;
		for (int i = 0; i < e->nattr - 1; i++)
			if (!strcmp(e->attr[i].name, a->name)) {
				xfail(x, "attribute %s twice", a->name);
				goto bad;
			}
		xws(x);
		if (x->p >= x->end || *x->p != '=') {
			xfail(x, "expected '=' after attribute %s", a->name);
			goto bad;
		}
		x->p++;
		xws(x);
		if (x->p >= x->end || (*x->p != '"' && *x->p != '\'')) {
			xfail(x, "attribute %s not quoted", a->name);
			goto bad;
		}
		char q = *x->p++;
		size_t cap = strlen(x->p) + 1, n = 0;
		a->value = calloc(1, cap + 1);
		while (xchar(x, q, a->value, &n))
			;
		if (x->err[0])
			goto bad;
		if (x->p >= x->end || *x->p != q) {
			xfail(x, "'<' in the value of %s", a->name);
			goto bad;
		}
		x->p++;
	}
	if (*x->p == '/') {
		if (x->p + 1 >= x->end || x->p[1] != '>') {
			xfail(x, "expected '/>'");
			goto bad;
		}
		x->p += 2;
		return e;
	}
	x->p++;
	for (;;) {
		if (x->p >= x->end) {
			xfail(x, "<%s> not closed", e->name);
			goto bad;
		}
		if (*x->p == '<') {
			if (x->p + 1 < x->end && x->p[1] == '/') {
				x->p += 2;
				char *n = xname(x);
				if (!n)
					goto bad;
				bool same = !strcmp(n, e->name);
				free(n);
				xws(x);
				if (!same || x->p >= x->end || *x->p != '>') {
					xfail(x, "</...> does not close <%s>", e->name);
					goto bad;
				}
				x->p++;
				return e;
			}
			if (x->p + 1 < x->end && (x->p[1] == '!' || x->p[1] == '?')) {
				xfail(x, "comment, CDATA or PI (not expected in JUnit output)");
				goto bad;
			}
			if (e->nkids == 512) {
				xfail(x, "too many children");
				goto bad;
			}
			struct h_xml *k = xelement(x, depth + 1);
			if (!k)
				goto bad;
			e->kid[e->nkids++] = k;
			continue;
		}
		if (tn + 8 > tcap)
			e->text = realloc(e->text, tcap *= 2);
		if (!xchar(x, '<', e->text, &tn) && x->err[0])
			goto bad;
		e->text[tn] = 0;
	}
bad:
	h_xml_free(e);
	return NULL;
}

struct h_xml *h_xml_parse(const char *doc, char *err, size_t errlen)
{
	struct xp x = { doc, doc, doc + strlen(doc), { 0 } };
	if (!strncmp(x.p, "<?xml ", 6)) {
		const char *e = strstr(x.p, "?>");
		if (!e) {
			snprintf(err, errlen, "declaration not closed");
			return NULL;
		}
		x.p = e + 2;
	}
	xws(&x);
	struct h_xml *root = xelement(&x, 0);
	if (root) {
		xws(&x);
		if (x.p != x.end) {
			xfail(&x, "content after the root element");
			h_xml_free(root);
			root = NULL;
		}
	}
	if (!root)
		snprintf(err, errlen, "%s", x.err);
	return root;
}
const char *h_xml_attr(const struct h_xml *e, const char *name)
{
	for (int i = 0; i < e->nattr; i++)
		if (!strcmp(e->attr[i].name, name))
			return e->attr[i].value;
	return NULL;
}

const struct h_xml *h_xml_kid(const struct h_xml *e, const char *name)
{
	for (int i = 0; i < e->nkids; i++)
		if (!strcmp(e->kid[i]->name, name))
			return e->kid[i];
	return NULL;
}
