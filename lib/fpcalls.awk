# fpcalls.awk - make fp-check: at every call in libmemcheck's code the
# call-frame information gives the frame pointer's rule (CFA = rbp + 16,
# the caller's rbp saved at CFA - 16), but in the wrappers built without
# a frame pointer (MC_FRAMELESS), whose calls never lie under a tracked
# allocation's walk (internal.h).  stacks.c's capture_rule_fill takes
# that rule for every return address in memcheck's own code without
# reading its CFI (libmemcheck's .eh_frame lies blocks away from the code
# a process runs): this checks the premise on the linked library.
#
# Input, in two parts: "@@code" then objdump -d --no-show-raw-insn of
# the library; "@@cfi" then readelf --debug-dump=frames-interp of it.
# A call is read where objdump names the instruction call*; its return
# address is the next instruction's.  Calls in no FDE's range are bytes
# objdump took for code (read-only data the link placed among the
# functions): gcc gives every function it emits an FDE.  Fails naming
# each call whose row says anything else.

BEGIN {
	# MC_FRAMELESS (internal.h): interpose.c's wrappers (the malloc
	# family, reallocarray, the aligned family), start.c's
	# __libc_start_main (and its cold part: the missing C library's
	# call), cxxnew.c's operators (their mangled names)
	split("malloc calloc realloc free reallocarray posix_memalign " \
	    "aligned_alloc memalign valloc pvalloc __libc_start_main " \
	    "__libc_start_main.cold", f, " ")
	for (i in f)
		frameless[f[i]] = 1
	part = ""
	nfde = 0
	ncalls = 0
}

/^@@code$/ { part = "code"; next }
/^@@cfi$/ { part = "cfi"; next }

function hex(s,    i, c, v) {
	v = 0
	s = tolower(s)
	for (i = 1; i <= length(s); i++) {
		c = index("0123456789abcdef", substr(s, i, 1))
		if (c == 0)
			break
		v = v * 16 + c - 1
	}
	return v
}

part == "code" && /^[0-9a-f]+ <.*>:$/ {
	fn = $2
	gsub(/^<|>:$/, "", fn)
	next
}

part == "code" && /^ +[0-9a-f]+:\t/ {
	addr = $1
	sub(/:$/, "", addr)
	if (want_ret) {
		ret[ncalls] = hex(addr)
		retstr[ncalls] = addr
		retname[ncalls] = callfn   # the call's function, not the next one
		ncalls++
		want_ret = 0
	}
	# the mnemonic: the field after the address
	if ($2 ~ /^call/) {
		want_ret = 1
		callfn = fn  # a noreturn call may end its function: its return
			     # address is the next function's first byte
	}
	next
}

part == "cfi" && / FDE cie=/ {
	for (i = 1; i <= NF; i++)
		if ($i ~ /^pc=/) {
			split(substr($i, 4), r, /\.\./)
			nfde++
			lo[nfde] = hex(r[1])
			hi[nfde] = hex(r[2])
			nrow[nfde] = 0
		}
	next
}

part == "cfi" && $1 == "LOC" {
	delete col
	for (i = 1; i <= NF; i++)
		col[$i] = i
	next
}

part == "cfi" && nfde && /^[0-9a-f]+ / {
	k = ++nrow[nfde]
	rloc[nfde, k] = hex($1)
	rcfa[nfde, k] = $(col["CFA"])
	rbp[nfde, k] = ("rbp" in col) ? $(col["rbp"]) : "u"
	next
}

END {
	# FDEs by address for a binary search (insertion sort: ~1,500)
	for (i = 1; i <= nfde; i++)
		ord[i] = i
	for (i = 2; i <= nfde; i++) {
		v = ord[i]
		for (j = i - 1; j >= 1 && lo[ord[j]] > lo[v]; j--)
			ord[j + 1] = ord[j]
		ord[j + 1] = v
	}
	bad = 0
	checked = 0
	for (c = 0; c < ncalls; c++) {
		pc = ret[c] - 1
		a = 1
		b = nfde
		d = 0
		while (a <= b) {
			m = int((a + b) / 2)
			if (lo[ord[m]] <= pc) {
				d = ord[m]
				a = m + 1
			} else
				b = m - 1
		}
		if (!d || pc >= hi[d])
			continue # not code gcc emitted
		cfa = "?"
		bp = "?"
		for (k = 1; k <= nrow[d] && rloc[d, k] <= pc; k++) {
			cfa = rcfa[d, k]
			bp = rbp[d, k]
		}
		checked++
		if (cfa == "rbp+16" && bp == "c-16")
			continue
		if (retname[c] in frameless || retname[c] ~ /^_Z(nw|na|dl|da)/)
			continue
		printf "fp-check: %s: the call returning to 0x%s has CFA %s, rbp %s: not the frame pointer's rule\n",
		       retname[c], retstr[c], cfa, bp
		bad++
	}
	if (!checked) {
		print "fp-check: no call read (objdump or readelf output missing)"
		exit 1
	}
	if (bad) {
		printf "fp-check: %d of %d calls without the frame pointer's rule (stacks.c, capture_rule_fill)\n", bad, checked
		exit 1
	}
	printf "fp-check: %d calls in libmemcheck's code, each with the frame pointer's rule but the frameless wrappers'\n", checked
}
