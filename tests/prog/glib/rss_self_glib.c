/*
 * rss_self_glib - plain_rss_self's GLib counterpart: a hash table of
 * strings, a list, a GString and a GObject made and freed, then its own
 * resident set (rss_self.h) printed.  GLib and GObject are built without
 * frame pointers: memcheck's stacks step through their frames by their
 * call-frame tables, so this program's figures show where memcheck
 * reads those tables (test_rss_self: in its own view of the files, not
 * in the program's mappings).  Built where GLib is installed
 * (tests/tests.mk); not linked to memcheck.
 */
#include <glib-object.h>
#include <glib.h>

#include "rss_self.h"

int main(int argc, char **argv)
{
	rss_self_fixed_layout(argv);
	long long start = proc_field("/proc/self/status", "VmRSS:");
	GHashTable *h = g_hash_table_new_full(g_str_hash, g_str_equal, g_free, g_free);
	for (int i = 0; i < 500; i++)
		g_hash_table_insert(h, g_strdup_printf("k%d", i),
				    g_strdup_printf("v%d %s", i, argv[0]));
	GList *l = NULL;
	for (int i = 0; i < 200; i++)
		l = g_list_prepend(l, GINT_TO_POINTER(i));
	GString *s = g_string_new(NULL);
	g_string_append_printf(s, "%u %u", g_hash_table_size(h), g_list_length(l));
	GObject *o = g_object_new(G_TYPE_OBJECT, NULL);
	g_object_unref(o);
	g_list_free(l);
	g_hash_table_destroy(h);
	g_print("%s %d\n", s->str, argc);
	g_string_free(s, TRUE);
	rss_self_print(start);
	return 0;
}
