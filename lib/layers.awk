# layers.awk - make layers-check: the library's calls go down its layers.
#
# Reads two inputs: ARCHITECTURE.md, whose two tables after the markers
# "<!-- layers-check: layers -->" (each row: a layer, its files in
# backquotes, top layer first) and "<!-- layers-check: upward -->" (each
# row: callers, callee, symbols, each in backquotes, and why) are the
# one place the layering is written down; then `nm -P -A` over the
# library's objects.  Each undefined symbol of an object that another
# object defines is a call (or a use of a variable) from one file to the
# other: drawn from the objects, not the sources, so an inline function
# of internal.h counts where it is used, and nothing a comment or a
# macro hides is missed.
#
# Fails, naming caller, callee and symbol, on: a call to a file of a
# higher layer not listed as allowed; calls that form a cycle among
# files (within a layer, or through allowed upward calls); an object no
# layer names, or a named file with no object; an allowed call that no
# longer happens (the page would lie).  POSIX awk: no gawk-only feature.

function trim(s) { sub(/^[ \t]+/, "", s); sub(/[ \t]+$/, "", s); return s }

# The backquoted names in s, into out[1..n]; returns n.
function quoted(s, out,    n, i, parts, m) {
	n = 0
	m = split(s, parts, "`")
	for (i = 2; i <= m; i += 2)
		out[++n] = parts[i]
	return n
}

function fail(msg) { print "layers-check: " msg > "/dev/stderr"; bad++ }

FNR == 1 { fileno++ }

# ---- ARCHITECTURE.md ---------------------------------------------------
fileno == 1 && /<!-- layers-check: layers -->/ { table = "layers"; next }
fileno == 1 && /<!-- layers-check: upward -->/ { table = "upward"; next }
fileno == 1 && table != "" && !/^\|/ && seen_row { table = ""; seen_row = 0 }
fileno == 1 && table != "" && /^\|/ {
	seen_row = 1
	ncell = split($0, cell, "|")
	if (trim(cell[2]) ~ /^-+$/ || trim(cell[2]) == "layer" || trim(cell[2]) == "caller")
		next
	if (table == "layers") {
		nlayers++
		lname[nlayers] = trim(cell[2])
		gsub(/\*/, "", lname[nlayers])
		nf = quoted(cell[3], f)
		for (i = 1; i <= nf; i++) {
			if (f[i] in layer_of)
				fail(f[i] " is in two layers")
			layer_of[f[i]] = nlayers
		}
	} else {
		nc = quoted(cell[2], callers)
		ne = quoted(cell[3], callees)
		ns = quoted(cell[4], syms)
		if (!nc || !ne || !ns)
			fail("ARCHITECTURE.md: an allowed upward call without caller, callee or symbol: " $0)
		for (i = 1; i <= nc; i++)
			for (j = 1; j <= ne; j++)
				for (k = 1; k <= ns; k++)
					allowed[callers[i] SUBSEP callees[j] SUBSEP syms[k]] = 1
	}
	next
}
fileno == 1 { next }

# ---- nm -P -A: "path/x.o: name type value size" ------------------------
{
	obj = $1
	sub(/:$/, "", obj)
	sub(/.*\//, "", obj)
	sub(/\.o$/, ".c", obj)
	objs[obj] = 1
	if ($3 == "U")
		need[obj, $2] = 1
	else if ($3 ~ /^[A-TV-Z]$/)
		def[$2] = obj
}

END {
	if (!nlayers)
		fail("no layer table in ARCHITECTURE.md (the marker <!-- layers-check: layers -->)")
	for (o in objs)
		if (!(o in layer_of))
			fail(o " is in no layer of ARCHITECTURE.md's table")
	for (o in layer_of)
		if (!(o in objs))
			fail(o " is in ARCHITECTURE.md's layers but has no object")
	# Every file-to-file edge, with its symbols.
	for (k in need) {
		split(k, p, SUBSEP)
		from = p[1]; sym = p[2]
		if (!(sym in def) || def[sym] == from)
			continue
		to = def[sym]
		if (!(from in layer_of) || !(to in layer_of))
			continue
		if ((from SUBSEP to SUBSEP sym) in allowed) {
			used[from SUBSEP to SUBSEP sym] = 1
			continue
		}
		if (layer_of[to] < layer_of[from]) {
			fail(from " (" lname[layer_of[from]] ") -> " to " (" lname[layer_of[to]] \
			     "): " sym " goes up a layer and is not an allowed upward call")
			continue
		}
		# (the old value first: an awk may make the element on the left
		# before it tests it on the right)
		old = ((from, to) in esym) ? esym[from, to] " " : ""
		edge[from, to] = 1
		esym[from, to] = old sym
	}
	for (k in allowed)
		if (!(k in used)) {
			split(k, p, SUBSEP)
			fail("ARCHITECTURE.md allows " p[1] " -> " p[2] ": " p[3] \
			     ", which the objects no longer do: take it out of the table")
		}
	# Cycles among the downward and same-layer edges: peel files with no
	# incoming edge, then files with no outgoing one; what is left lies
	# on a cycle or between two.
	for (o in objs)
		alive[o] = 1
	do {
		changed = 0
		for (o in alive) {
			has_in = has_out = 0
			for (q in alive) {
				if ((q, o) in edge)
					has_in = 1
				if ((o, q) in edge)
					has_out = 1
			}
			if (!has_in || !has_out) {
				delete alive[o]
				changed = 1
			}
		}
	} while (changed)
	for (k in edge) {
		split(k, p, SUBSEP)
		if ((p[1] in alive) && (p[2] in alive))
			fail("cycle: " p[1] " -> " p[2] ": " esym[p[1], p[2]])
	}
	if (bad) {
		print "layers-check: " bad " problem(s); the layers and the allowed upward calls are in ARCHITECTURE.md" > "/dev/stderr"
		exit 1
	}
	n = 0
	for (o in objs)
		n++
	m = 0
	for (k in used)
		m++
	printf "layers-check: %d files in %d layers, every call downward but the %d allowed upward ones\n", n, nlayers, m
}
