#!/bin/sh
# layers.sh - check that the memcheck command's files call down their
# layers (tools/layers.txt): `nm -A OBJECTS | sh tools/layers.sh tools/layers.txt`.
# make tools-layers-check runs it on build/cli/*.o.
#
# The graph is drawn from the objects, not the sources: each undefined
# symbol of an object goes to the object that defines it, so a call made
# through a macro or an inline function in cli.h counts as the compiler
# saw it, and comments or strings never do.  A call fails the check when
#   - its caller or callee is in no layer of the table (a new file must
#     be placed),
#   - it goes to a layer above its caller's and is not allowed with a
#     reason in the table ("allow CALLER CALLEE SYMBOL why"),
#   - or it closes a circle of files (calls inside one layer may not go
#     round, nor an allowed upward call back down to where it came from).
# Each failure names caller, callee and symbols.  The lib_* objects' own
# calls are lib/'s (its layers-check); here they are the bottom layer.
#
# Traps: nm -A prints "obj:" then an address only for defined symbols,
# so the type and name are taken from the end of the line; mawk has no
# local arrays in recursion, so the search for circles keeps its path in
# global arrays indexed by depth.
set -eu
[ $# -eq 1 ] || { echo "usage: nm -A OBJECTS | sh $0 TABLE" >&2; exit 2; }
exec awk -v table="$1" '
function src(o) {           # build/cli/run.o -> tools/run.c, lib_json.o -> lib/json.c
	sub(/.*\//, "", o); sub(/\.o$/, "", o)
	return o ~ /^lib_/ ? "lib/" substr(o, 5) ".c" : "tools/" o ".c"
}
function name(o) { sub(/.*\//, "", o); sub(/\.o$/, "", o); return o }
function fail(msg) { print "tools-layers-check: " msg; bad = 1 }
# depth-first search from node u; on an edge back into the path, the
# circle is the path from that node on
function dfs(u, d,    i, v, k, s) {
	state[u] = 1; path[d] = u
	for (i = 1; i <= nout[u]; i++) {
		v = out[u, i]
		if (state[v] == 1) {
			s = ""
			for (k = d; k >= 0 && path[k] != v; k--)
				;
			for (; k < d; k++)
				s = s src(path[k]) " -(" syms[path[k], path[k + 1]] ")-> "
			s = s src(u) " -(" syms[u, v] ")-> " src(v)
			if (!(s in said)) { said[s] = 1; fail("circle of files: " s) }
		} else if (!state[v])
			dfs(v, d + 1)
	}
	state[u] = 2
}
BEGIN {
	while ((getline line < table) > 0) {
		if (line ~ /^[ \t]*(#|$)/)
			continue
		n = split(line, w, /[ \t]+/)
		if (w[1] == "allow") {
			if (n < 5) { fail(table ": \"" line "\": allow CALLER CALLEE SYMBOL why"); continue }
			allowed[w[2], w[3], w[4]] = 1
			continue
		}
		nlayers++
		lname[nlayers] = w[1]
		for (i = 2; i <= n; i++) {
			if (w[i] in layer) fail(table ": " w[i] " is in two layers")
			layer[w[i]] = nlayers
		}
	}
	if (!nlayers) { fail(table ": no layers"); exit 1 }
}
{
	obj = $1; sub(/:.*/, "", obj)
	if ($(NF - 1) == "U") { nu++; ucaller[nu] = obj; usym[nu] = $NF }
	else if ($(NF - 1) ~ /^[TDBRCGSVW]$/) def[$NF] = obj
	objs[obj] = 1
}
END {
	for (o in objs)
		if (!(name(o) in layer))
			fail(src(o) " is in no layer of " table)
	for (i = 1; i <= nu; i++) {
		c = ucaller[i]; s = usym[i]
		if (!(s in def) || def[s] == c) continue
		e = def[s]
		cn = name(c); en = name(e)
		if (!(cn in layer) || !(en in layer) || cn ~ /^lib_/) continue
		if (layer[en] < layer[cn] && !((cn, en, s) in allowed)) {
			if (!((c, e) in up)) { nup++; upc[nup] = c; upe[nup] = e; up[c, e] = s }
			else up[c, e] = up[c, e] " " s
			continue
		}
		# down, within the layer, or allowed up: all go into the graph,
		# since an allowed upward call and a downward one make a circle
		if (!((c, e) in syms)) { out[c, ++nout[c]] = e; syms[c, e] = s }
		else if (index(" " syms[c, e] " ", " " s " ") == 0) syms[c, e] = syms[c, e] " " s
		nodes[c] = 1
	}
	for (i = 1; i <= nup; i++) {
		c = upc[i]; e = upe[i]
		fail("upward call: " src(c) " (" lname[layer[name(c)]] ") -> " src(e) " (" \
		     lname[layer[name(e)]] "): " up[c, e])
	}
	for (u in nodes)
		if (!state[u]) dfs(u, 0)
	if (bad) exit 1
	n = 0; for (o in objs) n++
	printf "tools-layers-check: %d files in %d layers (%s), every call down or within its layer, no circle\n", n, nlayers, table
}'
