# scanfrom.awk - make fp-check, second part: MC_SCAN_FROM (internal.h)
# takes the program's stack to begin 5 words below the frame pointer of
# the function it is written in: the lowest of the callee-saved
# registers (rbx, r12-r15) that __builtin_unwind_init makes the prologue
# push right below the saved rbp.  Below them lie that function's own
# locals, memcheck's, whose unwritten slots hold what the program's dead
# frames left (a stale copy of a lost block's address kept it still
# reachable: tests/prog/stale_end).  This checks the premise on the
# linked library, for each function whose source calls MC_SCAN_FROM:
# it is a function of its own (not inlined into a caller, whose frame
# would be another's), and its prologue is push %rbp; mov %rsp,%rbp,
# then the five pushes (any order, other instructions that leave rsp
# alone between them) before anything else moves rsp or calls.
#
# Input: the library's C sources (the functions are found in them),
# then "-": objdump -d --no-show-raw-insn of the library.

BEGIN { nfn = 0; bad = 0 }

# ---- the sources: the function each MC_SCAN_FROM( use is in ----
FILENAME ~ /\.c$/ {
	if ($0 ~ /^[A-Za-z_]/ && $0 !~ /;[ \t]*$/ && $0 ~ /\(/) {
		s = $0
		gsub(/__attribute__\(\([^)]*\)\)/, "", s)
		if (match(s, /[A-Za-z_][A-Za-z_0-9]*\(/))
			cur = substr(s, RSTART, RLENGTH - 1)
	}
	if ($0 ~ /^[ \t]+MC_SCAN_FROM\(/ && !(cur in want)) {
		want[cur] = FILENAME ":" FNR
		order[++nfn] = cur
	}
	next
}

# ---- the library's code ----
/^[0-9a-f]+ <[^>]+>:$/ {
	name = $2
	sub(/^</, "", name)
	sub(/>:$/, "", name)
	base = name
	sub(/\..*$/, "", base)       # process_end.constprop.0 and the like
	if (name ~ /\.cold/)
		base = ""                # a function's cold part: no prologue
	fn = (base in want) ? base : ""
	if (fn != "") {
		seen[fn]++
		step = 0; pushed = 0; delete regs; failed = ""
	}
	next
}

fn != "" && /^ +[0-9a-f]+:\t/ {
	n = split($0, f, "\t")
	ins = f[n]
	gsub(/ +/, " ", ins)
	sub(/ +#.*$/, "", ins)
	if (step == 0) {
		if (ins != "push %rbp") failed = "begins with \"" ins "\", not push %rbp"
		step = 1
	} else if (step == 1) {
		if (ins != "mov %rsp,%rbp") failed = "\"" ins "\" after push %rbp, not mov %rsp,%rbp"
		step = 2
	} else if (ins ~ /^push %(rbx|r12|r13|r14|r15)$/) {
		r = substr(ins, 6)
		if (r in regs) failed = r " pushed twice"
		regs[r] = 1
		pushed++
	} else if (ins ~ /%rsp$/ || ins ~ /^(push|pop|call|jmp|j[a-z]+|ret|leave|enter) /) {
		failed = "\"" ins "\" before the five callee-saved pushes (" pushed " done)"
	}
	if (failed != "" || pushed == 5) {
		if (failed != "") {
			printf "fp-check: %s (MC_SCAN_FROM at %s): its prologue %s; the stack scan " \
				"would start %s\n", fn, want[fn], failed, \
				"inside memcheck's own frame or above the program's registers"
			bad = 1
		} else {
			ok[fn] = 1
		}
		fn = ""
	}
	next
}

END {
	if (nfn == 0) {
		print "fp-check: no MC_SCAN_FROM use found in the sources"
		exit 1
	}
	for (i = 1; i <= nfn; i++) {
		g = order[i]
		if (!(g in seen)) {
			printf "fp-check: %s (MC_SCAN_FROM at %s) is not a function of its own in " \
				"the library (inlined?): its frame would be its caller's\n", g, want[g]
			bad = 1
		} else if (!(g in ok) && !bad) {
			printf "fp-check: %s (MC_SCAN_FROM at %s): its prologue ended before the " \
				"five callee-saved pushes\n", g, want[g]
			bad = 1
		}
	}
	if (!bad)
		printf "fp-check: MC_SCAN_FROM's five pushes right below the frame pointer in %d " \
			"functions\n", nfn
	exit bad
}
