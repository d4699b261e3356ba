# place.awk - make place-check: every function a process with the
# defaults can reach lies in the first three 64 KiB blocks of the file.
#
# lib/text-order.ld is a hand-made list: a function added later, or one
# the runs it was made from did not take (which path a free takes
# depends on the blocks' addresses, so on address randomization), lies
# in .text, blocks away, and the process that reaches it faults one
# 64 KiB block more (test_codeblocks counts them; test_rss_self sees
# them in the program's RSS).  This walks the linked library's call
# graph instead (objdump -d of libmemcheck.so, so inlining, the
# compiler's .part/.isra/.cold clones and tail calls are as they run)
# from its roots: every exported function (the interposed entry points:
# the malloc family, operator new and delete, mmap, sigaction, exit...)
# but the memcheck_* API, which only a program that links libmemcheck
# calls (and such a program is measured), and what .init_array and
# .fini_array name (constructor, destructor).
#
# The edges: direct calls and jumps (tail calls, a .cold part); a call
# through the PLT to a function the library defines; and, for the calls
# the graph cannot follow (through function pointers: the on_exit and
# atfork handlers, the signal trampolines, dl_iterate_phdr's and
# mc_walk_objects' visitors, mc_sort's comparators, the hooks a file
# sets for another, mc_guard_drain_set's and mc_map_hooks_set's), every
# function whose address a reached function takes (a rip-relative lea
# or mov of it), and every function a table it takes the address of
# holds (the relocations in that table, and in the tables it names).
# The allocator's functions (mc_real) and the C library's are not
# memcheck's code.
#
# The walk stops at a function placed in .text.mc_then: the list put it
# there as not a default process's (what a measured process, a leaking
# exit, a failure adds).  It fails, naming the function, the block it
# lies in and a path to it from a root, on every reached function that
# lies in .text (placed nowhere: the list must decide, group 1 or
# .text.mc_then) or in .text.mc_first past the third 64 KiB block, and
# when .text.mc_first or .rodata.mc_first ends past it; and where
# text-order.ld's mark mc_order_leak_end (the end of groups 2 and 3, the
# code a leaking or measured exit runs) lies past the fourth block, or
# .text.mc_then's end (group 1t's, a threaded process's).  Then it
# walks the exit's code the same way (exit_walk, below): what a leaking,
# measured or threaded process runs past the defaults' code, held to the
# first four blocks.  It prints the room left and, with VERBOSE=1, every
# call from .text.mc_first into .text.mc_then (the list's decisions, to
# review).
#
# Input: one stream of sections, each after a line "@@NAME":
# "@@segments" readelf -lW, "@@sections" readelf -SW, "@@symbols"
# nm -n -S --defined-only, "@@dynamic" nm -D --defined-only, "@@relocs"
# readelf -rW, "@@words" objdump -s of the sections relocated words lie
# in (.init_array, .fini_array, .data.rel.ro, .data, .got), "@@code"
# objdump -d --no-show-raw-insn, "@@map" the link's map (ld -Map).
# POSIX awk.
#
# The list places by section name, and a static function's section is
# named by the function alone: two files' static functions of one name
# are both placed by the line written for one of them (session 37: a
# static take in descend.c, which every measured exit ran, was placed
# in group 7 by snapshot.c's line, and the walks, which trust where a
# function lies once the list decided, called it placed).  So the map's
# word is taken on each line of the list that names a function: the
# input sections it placed, each with its object file and linked
# address, are of one object file, or the check fails naming each
# function the line placed, where it lies, and whether a walk reaches
# it (map_check, below).

function hexval(s,    n, i, c) {
	if (s in hexcache)
		return hexcache[s]
	n = 0
	for (i = 1; i <= length(s); i++) {
		c = index("0123456789abcdef", tolower(substr(s, i, 1)))
		if (!c)
			break
		n = n * 16 + c - 1
	}
	hexcache[s] = n
	return n
}

# The index of the entry of start[] (sorted, n of them) whose size[]
# bytes hold a, or 0: a function (fstart, fsize) or a data object
function holder(a, start, size, n,    lo, hi, mid) {
	lo = 1
	hi = n
	while (lo < hi) {
		mid = int((lo + hi + 1) / 2)
		if (start[mid] <= a)
			lo = mid
		else
			hi = mid - 1
	}
	if (n && start[lo] <= a && a < start[lo] + (size[lo] ? size[lo] : 1))
		return lo
	return 0
}

function func_at(a) { return holder(a, fstart, fsize, nf) }

function data_at(a) { return holder(a, dstart, dsize, nd) }

function where(a) {
	if (a >= s_lo["first"] && a < s_hi["first"])
		return "first"
	if ((a >= s_lo["then"] && a < s_hi["then"]) || (a >= s_lo["last"] && a < s_hi["last"]) ||
	    (a >= s_lo["soon"] && a < s_hi["soon"]))
		return "then"
	if (a >= s_lo["text"] && a < s_hi["text"])
		return "text"
	return "other"
}

function block(a) { return int((a - base) / 65536) }

# Node names: "f" index for a function, "d" index for a data object,
# "r" address for a relocated word that no data object holds (a GOT slot).
function add_edge(from, to) {
	if (from == to || (from SUBSEP to) in edge)
		return
	edge[from, to]
	nout[from]++
	out[from, nout[from]] = to
}

function node_name(n,    k) {
	k = substr(n, 2)
	if (substr(n, 1, 1) == "f")
		return fname[k]
	if (substr(n, 1, 1) == "d")
		return "(table " dname[k] ")"
	return "(word at " k ")"
}

# The path to n from a root, as a walk's array of parents par records it
function path_in(n, par,    p) {
	p = node_name(n)
	while (n in par && par[n] != "") {
		n = par[n]
		p = node_name(n) " -> " p
	}
	return p
}

function path_to(n) { return path_in(n, parent) }

# Each walk's step: the callees of n it has not reached yet, each given n
# as its parent in par and queued behind q's first qn: the new length.
function reach_from(n, par, q, qn,    j, t) {
	for (j = 1; j <= nout[n]; j++) {
		t = out[n, j]
		if (t in par)
			continue
		par[t] = n
		q[++qn] = t
	}
	return qn
}

# Function k's reads of read-only data (strings, tables, constants: a
# rip-relative address in the first segment that no function starts at)
# at or past lim, each counted bad and named with the path to node n in
# par, after how.
function reads_past(k, lim, n, par, how,    j, a) {
	for (j = 1; j <= nrefs[k]; j++) {
		a = refs[k, j]
		if (a < lim || a >= ro_end || (func_at(a) && fstart[func_at(a)] == a))
			continue
		bad++
		printf "place-check: %s reads read-only data at 0x%x, block %d of the file: " \
			"reached by %s%s\n", fname[k], a - base, block(a), how, path_in(n, par)
	}
}

BEGIN { part = "" }

/^@@/ { part = substr($0, 3); next }

part == "segments" && $1 == "LOAD" {
	if (!have_base) {
		base = hexval(substr($3, 3))
		ro_end = base + hexval(substr($6, 3))
		have_base = 1
	}
	next
}

part == "sections" && /^ *\[ *[0-9]+\]/ {
	line = $0
	sub(/^ *\[ *[0-9]+\] */, "", line)
	split(line, f, /[ \t]+/)
	lo = hexval(f[3])
	hi = lo + hexval(f[5])
	if (f[1] == ".text.mc_first") { s_lo["first"] = lo; s_hi["first"] = hi }
	else if (f[1] == ".rodata.mc_first") { s_lo["rodata"] = lo; s_hi["rodata"] = hi }
	else if (f[1] == ".text.mc_then") { s_lo["then"] = lo; s_hi["then"] = hi }
	else if (f[1] == ".text.mc_last") { s_lo["last"] = lo; s_hi["last"] = hi }
	else if (f[1] == ".text.mc_soon") { s_lo["soon"] = lo; s_hi["soon"] = hi }
	else if (f[1] == ".text") { s_lo["text"] = lo; s_hi["text"] = hi }
	else if (f[1] == ".init_array" || f[1] == ".fini_array") {
		nroot_tables++
		root_lo[nroot_tables] = lo
		root_hi[nroot_tables] = hi
		root_name[nroot_tables] = f[1]
	}
	next
}

# nm -n -S: address, size, type, name (no size: a label, not a function)
part == "symbols" && NF == 4 {
	t = $3
	if (t == "t" || t == "T" || t == "W" || t == "i") {
		a = hexval($1)
		if (nf && fstart[nf] == a)
			next             # an alias (bsd_signal of signal): one node
		nf++
		fstart[nf] = a
		fsize[nf] = hexval($2)
		fname[nf] = $4
		byname[$4] = nf
	} else if (t ~ /^[dDbBrRvV]$/) {
		nd++
		dstart[nd] = hexval($1)
		dsize[nd] = hexval($2)
		dname[nd] = $4
	}
	next
}

# text-order.ld's mark after group 3 (no size: not a function)
part == "symbols" && NF == 3 && $3 == "mc_order_leak_end" {
	leak_end = hexval($1)
	next
}

# and its mark after the head of .text.mc_last that those exits run
part == "symbols" && NF == 3 && $3 == "mc_order_last_head_end" {
	head_end = hexval($1)
	next
}

part == "dynamic" && NF == 3 && ($2 == "T" || $2 == "W" || $2 == "i") {
	exported[$3]
	next
}

part == "relocs" && $3 == "R_X86_64_RELATIVE" {
	nrel++
	rel_at[nrel] = hexval($1)
	rel_to[nrel] = hexval($4)
	next
}

# packed relative relocations (DT_RELR): their offsets, one a line; the
# address each word holds is in the word itself (@@words)
part == "relocs" && NF == 1 && $1 ~ /^[0-9a-f]+$/ {
	nrel++
	rel_at[nrel] = hexval($1)
	rel_to[nrel] = -1
	next
}

# objdump -s of the writable data: each line an address and up to 16
# bytes, in four groups of four
part == "words" && /^ [0-9a-f]+ [0-9a-f]/ {
	# keys as offsets from the base: mawk writes a number above 2^31
	# with CONVFMT (%.6g), which would make distinct addresses one key
	a = hexval($1) - base
	for (i = 2; i <= 5; i++) {
		if ($i !~ /^[0-9a-f]+$/)
			break
		for (j = 1; j < length($i); j += 2)
			byte[a++] = substr($i, j, 2)
	}
	next
}

# objdump: "<addr> <name>:" opens a function; "addr:\tinsn operands"
part == "code" && /^[0-9a-f]+ <.*>:$/ {
	cur = func_at(hexval($1))
	next
}

part == "code" && cur && /:\t/ {
	split($0, ins, "\t")
	# data the link laid among the code (group 0's read-only data) is
	# disassembled as if it were code: only the function's own bytes
	a = ins[1]
	sub(/^ */, "", a)
	a = hexval(a)
	if (a < fstart[cur] || a >= fstart[cur] + fsize[cur])
		next
	op = ins[2]
	mnem = op
	sub(/[ \t].*/, "", mnem)
	if (mnem ~ /^(call|j[a-z]+|bnd)$/ && op !~ /\*/) {
		# direct: "call   7e80000145d0 <mc_suppress_init>"
		rest = op
		sub(/^[a-z]+[ \t]+(bnd[ \t]+)?/, "", rest)
		if (rest !~ /^[0-9a-f]+ </)
			next
		split(rest, w, /[ <>]/)
		if (rest ~ /@plt>$/) {
			tgt = w[3]
			sub(/@plt$/, "", tgt)
			if (tgt in byname && tgt in exported)
				add_edge("f" cur, "f" byname[tgt])
			next
		}
		k = func_at(hexval(w[1]))
		if (k && k != cur)
			add_edge("f" cur, "f" k)
		next
	}
	# rip-relative operands: "# 7e800002b220 <at_exit>"
	if (op ~ /# [0-9a-f]+ </) {
		rest = op
		sub(/.*# /, "", rest)
		split(rest, w, " ")
		a = hexval(w[1])
		k = func_at(a)
		if (k && k != cur && fstart[k] == a) {
			add_edge("f" cur, "f" k)
			next
		}
		refs[cur, ++nrefs[cur]] = a
	}
	next
}

# ld -Map: past "Linker script and memory map", an output section opens
# at column 0; a statement of the script (" *(.text.take ...)", or with
# a file pattern, " *symkeys.o(...)") is followed by the input sections
# it placed: " .text.take 0xADDR 0xSIZE file", the name on a line of its
# own when long, its address, size and file on the next
part == "map" && /^Linker script and memory map/ { in_map = 1; next }

part == "map" && in_map && /^[^ ]/ { out_sec = $1; stmt = 0; next }

part == "map" && in_map && /^ [^ .][^ ]*\(/ && $1 != "*fill*" {
	stmt = 0
	if (out_sec !~ /^\.(text|rodata)\.mc_/)
		next
	nstmt++
	stmt = nstmt
	stmt_text[stmt] = substr($0, 2)
	next
}

part == "map" && stmt && /^ \.[^ ]+/ {
	in_name = $1
	if (NF >= 4 && $2 ~ /^0x/)
		map_input(in_name, $2, $3, $4)
	else
		pending = in_name
	next
}

part == "map" && stmt && pending != "" && /^  +0x[0-9a-f]+ +0x[0-9a-f]+ +[^ ]/ {
	map_input(pending, $1, $2, $3)
	pending = ""
	next
}

part == "map" { pending = "" }

# one input section the statement stmt placed
function map_input(name, addr, size, file) {
	if (hexval(substr(size, 3)) == 0)
		return
	nin[stmt]++
	in_sec[stmt, nin[stmt]] = name
	in_addr[stmt, nin[stmt]] = hexval(substr(addr, 3))
	sub(/.*\//, "", file)
	in_file[stmt, nin[stmt]] = file
}

END {
	if (!have_base || !("first" in s_lo) || !("then" in s_lo)) {
		print "place-check: no .text.mc_first or .text.mc_then in the library (lib/text-order.ld)"
		exit 1
	}
	limit = base + 3 * 65536
	for (i = 1; i <= nrel; i++)
		if (rel_to[i] < 0) {
			word = ""
			for (j = 7; j >= 0; j--)
				word = word byte[rel_at[i] - base + j]
			rel_to[i] = hexval(word)
		}
	# the tables' words: each relocated word a function's address
	for (i = 1; i <= nrel; i++) {
		k = func_at(rel_to[i])
		to = ""
		if (k && fstart[k] == rel_to[i])
			to = "f" k
		else if ((d = data_at(rel_to[i])))
			to = "d" d
		if (to == "")
			continue
		d = data_at(rel_at[i])
		from = d ? "d" d : "r" (rel_at[i] - base)
		add_edge(from, to)
		for (r = 1; r <= nroot_tables; r++)
			if (rel_at[i] >= root_lo[r] && rel_at[i] < root_hi[r] && !(to in isroot)) {
				isroot[to]
				parent[to] = ""
				queue[++qn] = to
			}
	}
	# a function's data references: to a table, or a relocated word
	for (c = 1; c <= nf; c++)
		for (j = 1; j <= nrefs[c]; j++) {
			a = refs[c, j]
			if ((d = data_at(a)))
				add_edge("f" c, "d" d)
			else
				add_edge("f" c, "r" (a - base))
		}
	for (c = 1; c <= nf; c++) {
		n = fname[c]
		if (!(n in exported) || n ~ /^memcheck_/ || ("f" c) in isroot)
			continue
		isroot["f" c]
		parent["f" c] = ""
		queue[++qn] = "f" c
	}
	nroots = qn
	# breadth first: each path printed is a shortest one
	bad = 0
	for (qh = 1; qh <= qn; qh++) {
		n = queue[qh]
		if (substr(n, 1, 1) == "f") {
			k = substr(n, 2)
			w0 = where(fstart[k])
			if (REACHED)
				print "place-check: reached " fname[k] " " where(fstart[k])
			if (w0 == "then") {
				if (VERBOSE && qh > 1 && parent[n] != "")
					print "place-check: into .text.mc_then: " path_to(n)
				continue
			}
			if (w0 == "text" || (w0 == "first" && fstart[k] + fsize[k] > limit)) {
				bad++
				printf "place-check: %s lies in %s, block %d of the file: reached by %s\n", \
					fname[k], w0 == "text" ? ".text (placed nowhere)" : ".text.mc_first",
					block(fstart[k]), path_to(n)
			}
			# the read-only data it reads in the first three blocks too
			reads_past(k, limit, n, parent, "")
		}
		qn = reach_from(n, parent, queue, qn)
	}
	exit_walk()
	map_check()
	if (s_hi["first"] > limit) {
		bad++
		printf "place-check: .text.mc_first ends in block %d of the file, past the third\n", \
			block(s_hi["first"] - 1)
	}
	if (s_hi["rodata"] > limit) {
		bad++
		printf "place-check: .rodata.mc_first ends 0x%x bytes past the third 64 KiB block\n", \
			s_hi["rodata"] - limit
	}
	# a leaking or measured exit runs groups 2 and 3 (.text.mc_then up
	# to the mark), which the graph cannot tell from group 1t: their end
	# within the fourth block, as test_codeblocks' leaking rows count
	if (!leak_end) {
		bad++
		print "place-check: no mc_order_leak_end mark in .text.mc_then (lib/text-order.ld)"
	} else if (leak_end > base + 4 * 65536) {
		bad++
		printf "place-check: groups 2 and 3 (a leaking exit's code) end 0x%x bytes past the " \
			"fourth 64 KiB block\n", leak_end - (base + 4 * 65536)
	} else
		printf "place-check: groups 2 and 3 end 0x%x bytes (%.1f KiB) before the fifth block\n", \
			base + 4 * 65536 - leak_end, (base + 4 * 65536 - leak_end) / 1024
	# a threaded process's exit runs group 1t too (.text.mc_then past
	# the mark): within the fourth block, as test_codeblocks' threads
	# row counts (session 35: 1t spilled into the fifth block)
	if (s_hi["then"] > base + 4 * 65536) {
		bad++
		printf "place-check: group 1t (a threaded process's code) ends 0x%x bytes past the " \
			"fourth 64 KiB block\n", s_hi["then"] - (base + 4 * 65536)
	}
	# and the head of .text.mc_last after it (a leaking or measured
	# exit's under mimalloc, jemalloc and tcmalloc: elfmod.c run_asked,
	# ownmap.c carved_each), which every byte groups 2, 3 and 1t grow
	# pushes on: its end is the room all three share (session 58: it
	# crossed into the fifth block with 0x309 bytes shown left after 1t)
	if (!head_end) {
		bad++
		print "place-check: no mc_order_last_head_end mark in .text.mc_last (lib/text-order.ld)"
	} else if (head_end > base + 4 * 65536) {
		bad++
		printf "place-check: the head of .text.mc_last (a leaking exit's code under mimalloc, " \
			"jemalloc and tcmalloc) ends 0x%x bytes past the fourth 64 KiB block\n", \
			head_end - (base + 4 * 65536)
	} else
		printf "place-check: groups 2, 3, 1t and the head of .text.mc_last end 0x%x bytes " \
			"(%.1f KiB) before the fifth block: the room they share\n", \
			base + 4 * 65536 - head_end, (base + 4 * 65536 - head_end) / 1024
	printf "place-check: %d functions reached from the roots, %s; .text.mc_first 0x%x-0x%x, " \
		".rodata.mc_first to 0x%x: 0x%x bytes (%.1f KiB) left in the first three blocks\n", \
		reached_count(), bad ? bad " misplaced" : "all placed", s_lo["first"] - base,
		s_hi["first"] - base, s_hi["rodata"] - base, limit - s_hi["rodata"],
		(limit - s_hi["rodata"]) / 1024
	exit bad ? 1 : 0
}

# The exit's walk: what a leaking, measured or threaded process runs
# past the defaults' code (.text.mc_then: groups 2, 3 and 1t, the exit's
# scan, suppressions, names and report, the threads' slots and stops)
# lies in the first four 64 KiB blocks, with the read-only data it
# reads.  From the same roots, through .text.mc_first and .text.mc_then,
# stopping at .text.mc_last only (what an error, an option off by
# default or a report's JSON record runs); a function the first walk
# reached was checked there.  Without it an addition to those groups
# pushed a leaking exit's code or data into the fifth block and only
# test_codeblocks' rows saw it, at run time (session 34: vgxml.o's
# read-only data; a function such an exit reaches left in .text, blocks
# away, was not seen at all).
function exit_walk(    qh, n, k, w0, a, lim, nx, nnew) {
	lim = base + 4 * 65536
	for (qh = 1; qh <= nroots; qh++) {
		xparent[queue[qh]] = ""
		xqueue[++xn] = queue[qh]
	}
	for (qh = 1; qh <= xn; qh++) {
		n = xqueue[qh]
		if (substr(n, 1, 1) == "f") {
			k = substr(n, 2)
			a = fstart[k]
			if (a >= s_lo["last"] && a < s_hi["last"])
				continue
			w0 = where(a)
			if (!(n in parent) || w0 == "then") {
				if (w0 == "text" || a + fsize[k] > lim) {
					bad++
					printf "place-check: %s lies in %s, block %d of the file: reached " \
						"by the exit's code (groups 2, 3, 1t) from %s\n", fname[k],
						w0 == "text" ? ".text (placed nowhere)" : "the groups",
						block(a), xpath_to(n)
				}
				reads_past(k, lim, n, xparent, "the exit's code from ")
			}
		}
		xn = reach_from(n, xparent, xqueue, xn)
	}
	for (k = 1; k <= nf; k++)
		if (("f" k) in xparent && !(fstart[k] >= s_lo["last"] && fstart[k] < s_hi["last"])) {
			nx++
			if (!(("f" k) in parent))
				nnew++
		}
	printf "place-check: the exit's walk: %d functions reached outside .text.mc_last, %d of " \
		"them beyond the defaults' walk\n", nx, nnew
}

function xpath_to(n) { return path_in(n, xparent) }

function reached_count(    n, c) {
	n = 0
	for (c = 1; c <= nf; c++)
		if (("f" c) in parent)
			n++
	return n
}

# A line of the list names a function by a pattern with no "*" in it:
# ".text." or ".text.unlikely." and the name, which the line's other
# patterns follow with its clones' (.part.N, .isra.N...).  A line with
# no file in its pattern ("*(...)") places every file's section of that
# name: where two files have a function of the name, it placed one of
# them by accident, and where that one belongs the walks cannot tell.
function sec_base(x) {
	sub(/^\.(text|rodata)\.(unlikely\.)?/, "", x)
	sub(/\.(part|isra|constprop|cold|lto_priv)(\.[0-9]+)*$/, "", x)
	sub(/\.(part|isra|constprop|cold|lto_priv)(\.[0-9]+)*$/, "", x)
	return x
}

function group_of(a) {
	if (a >= s_lo["last"] && a < s_hi["last"])
		return ".text.mc_last"
	if (a >= s_lo["soon"] && a < s_hi["soon"])
		return ".text.mc_soon"
	if (a >= s_lo["then"] && a < s_hi["then"])
		return ".text.mc_then"
	return where(a) == "first" ? ".text.mc_first" : where(a)
}

function reach_of(k) {
	if (!k)
		return "no function"
	if (("f" k) in parent)
		return "reached by " path_to("f" k)
	if (("f" k) in xparent)
		return "reached by the exit's code from " xpath_to("f" k)
	return "reached by no walk"
}

function map_check(    i, j, t, toks, ntok, x, names, key, seen, nfiles, msg, a) {
	if (!nstmt) {
		bad++
		print "place-check: no link map, or no statement of lib/text-order.ld in it"
		return
	}
	for (i = 1; i <= nf; i++)
		fbase[sec_base(".text." fname[i])]
	for (i = 1; i <= nstmt; i++) {
		t = stmt_text[i]
		if (t !~ /^\*\(/ || nin[i] < 2)
			continue
		x = t
		sub(/^[^(]*\(/, "", x)
		sub(/\).*/, "", x)
		ntok = split(x, toks, " ")
		split("", names)
		for (j = 1; j <= ntok; j++)
			if (toks[j] !~ /\*/ && sec_base(toks[j]) in fbase)
				names[sec_base(toks[j])]
		split("", seen)
		split("", nfiles)
		for (j = 1; j <= nin[i]; j++) {
			key = sec_base(in_sec[i, j])
			if (!(key in names) || ((key, in_file[i, j]) in seen))
				continue
			seen[key, in_file[i, j]]
			nfiles[key]++
		}
		for (key in nfiles) {
			if (nfiles[key] < 2)
				continue
			bad++
			msg = ""
			for (j = 1; j <= nin[i]; j++) {
				if (sec_base(in_sec[i, j]) != key)
					continue
				a = in_addr[i, j]
				k = func_at(a)
				msg = msg sprintf("\n  %s of %s at 0x%x (%s, block %d), %s", in_sec[i, j],
					in_file[i, j], a - base, group_of(a), block(a), reach_of(func_at(a)))
			}
			printf "place-check: lib/text-order.ld's line %s placed %s of %d object files " \
				"by one name: name the file its function is of (*file.o(...)) and " \
				"place the others by lines of their own:%s\n", t, key, nfiles[key], msg
		}
	}
}
