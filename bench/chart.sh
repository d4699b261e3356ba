#!/usr/bin/env bash
# chart.sh - one table and one chart from what make bench measured.
#
#   bench/chart.sh BUILD_DIR        (make bench and make bench-suite run it)
#
# Reads BUILD_DIR/bench/malloc.tsv (bench/run.sh) and BUILD_DIR/bench/
# suite.tsv (bench/suite.sh), whichever exist, and bench/targets (issue
# 15's targets, one per line, and beside them the floor's and
# LeakSanitizer's figures and the targets proposed against the floor),
# and writes
#   BUILD_DIR/bench/bench.md   the targets, measured against their limits
#                              (PASS/MISS), the floor, LeakSanitizer and
#                              the proposed targets beside them, then
#                              every timed row: median, ratio to its bare
#                              run, cost per step
#   BUILD_DIR/bench/bench.svg  every row's ratio as a bar on a log scale,
#                              memcheck's defaults, the floors,
#                              LeakSanitizer and valgrind in their own
#                              colours
# and prints the targets table.  Copy bench.svg to doc/bench.svg to update
# the chart the README shows (it must come from one real run).
#
# The TSV lines (tab-separated):
#   info   TEXT                             a line for the header
#   row    GROUP ALLOC LABEL MEDIAN_S RATIO COST KIND
#          KIND: bare, mc (memcheck's defaults), mcmode (another memcheck
#          mode), lsan, vg, floor (forwarding only, floor_interpose.c),
#          other (BENCH_OTHER's library)
#   metric KEY ALLOC VALUE                  compared with bench/targets
# Two files from different libraries (a bench-suite run after an older
# make bench) are flagged in the header rather than mixed silently.
set -u
export LC_ALL=C

BUILD=${1:-build}
BUILD=$(cd "$BUILD" && pwd) || exit 2
HERE=$(cd "$(dirname "$0")" && pwd)
TARGETS=$HERE/targets
OUT_MD=$BUILD/bench/bench.md
OUT_SVG=$BUILD/bench/bench.svg

inputs=()
for f in "$BUILD/bench/malloc.tsv" "$BUILD/bench/suite.tsv"; do
	[ -s "$f" ] && inputs+=("$f")
done
[ ${#inputs[@]} -gt 0 ] || { echo "chart.sh: nothing measured under $BUILD/bench (run make bench)" >&2; exit 2; }
[ -r "$TARGETS" ] || { echo "chart.sh: $TARGETS: cannot read" >&2; exit 2; }

# ---- the Markdown table ---------------------------------------------------

awk -F'\t' -v targets="$TARGETS" '
	function fmt(v) { return (v >= 100) ? sprintf("%.0f", v) : (v >= 10) ? sprintf("%.1f", v) : sprintf("%.2f", v) }
	BEGIN {
		# bench/targets: KEY OP LIMIT UNIT DESCRIPTION...; floor KEY
		# METRIC [LABEL...]; lsan KEY METRIC; proposed KEY METRIC OP
		# LIMIT UNIT DESCRIPTION...; also KEY METRIC UNIT LABEL...
		# (# comments)
		while ((getline line < targets) > 0) {
			ln++
			if (line ~ /^[ \t]*(#|$)/) continue
			n = split(line, w, /[ \t]+/)
			if (w[1] == "floor" || w[1] == "lsan") {
				if (n < 3 || (w[1] == "lsan" && n != 3)) bad(ln, line, w[1] " KEY METRIC" (w[1] == "floor" ? " [LABEL]" : ""))
				# a key may have several floors, each after the first
				# shown with its label
				c = ++nbes[w[1], w[2]]
				beside[w[1], w[2]] = c; bmet[w[1], w[2], c] = w[3]; bline[w[1], w[2]] = ln
				d = ""; for (i = 4; i <= n; i++) d = d (i > 4 ? " " : "") w[i]
				blab[w[1], w[2], c] = d
				continue
			}
			if (w[1] == "also") {
				if (n < 5) bad(ln, line, "also KEY METRIC UNIT LABEL")
				c = ++nalso[w[2]]; am[w[2], c] = w[3]; au[w[2], c] = w[4]; aline[w[2]] = ln
				d = w[5]; for (i = 6; i <= n; i++) d = d " " w[i]
				alab[w[2], c] = d
				continue
			}
			if (w[1] == "proposed") {
				if (n < 7 || (w[4] != "<=" && w[4] != ">=")) bad(ln, line, "proposed KEY METRIC <=|>= LIMIT UNIT DESCRIPTION")
				pkey[w[2]] = w[3]; pop[w[2]] = w[4]; plim[w[2]] = w[5]; punit[w[2]] = w[6]
				d = w[7]; for (i = 8; i <= n; i++) d = d " " w[i]
				pdesc[w[2]] = d; pline[w[2]] = ln
				continue
			}
			if (n < 5 || (w[2] != "<=" && w[2] != ">=")) bad(ln, line, "KEY <=|>= LIMIT UNIT DESCRIPTION")
			nt++; tkey[nt] = w[1]; top[nt] = w[2]; tlim[nt] = w[3]; tunit[nt] = w[4]; known[w[1]] = 1
			d = w[5]; for (i = 6; i <= n; i++) d = d " " w[i]
			tdesc[nt] = d
		}
		# a floor, lsan or proposed line must name a target of the file
		for (k in pkey) if (!(k in known)) bad(pline[k], "proposed " k, "a KEY of a target line")
		for (k in beside) { split(k, w, SUBSEP); if (!(w[2] in known)) bad(bline[k], w[1] " " w[2], "a KEY of a target line") }
		for (k in nalso) if (!(k in pkey)) bad(aline[k], "also " k, "a KEY of a proposed line")
	}
	function bad(n, l, want) {
		printf "chart.sh: %s:%d: bad line (expected %s): %s\n", targets, n, want, l > "/dev/stderr"
		failed = 1
		exit 2
	}
	function fig(key, a, unit) { # a measured figure, or empty
		return ((key, a) in mv) ? fmt(mv[key, a] + 0) " " unit : ""
	}
	function besides(kind, k, a, unit,   c, f, out) { # the figures beside a target, joined
		out = ""
		for (c = 1; c <= nbes[kind, k]; c++) {
			f = fig(bmet[kind, k, c], a, unit)
			if (f == "") continue
			out = out (out == "" ? "" : "; ") f (blab[kind, k, c] == "" ? "" : " " blab[kind, k, c])
		}
		return out
	}
	function meets(v, op, lim) { return (op == "<=") ? (v <= lim + 0) : (v >= lim + 0) }
	$1 == "info" { info[++ni] = $2; next }
	$1 == "lib" { lib[$2] = 1; nlib = 0; for (k in lib) nlib++; next }
	$1 == "metric" { mv[$2, $3] = $4; if (!(($2, $3) in seen)) { seen[$2, $3] = 1; mord[$2] = mord[$2] " " $3 }; next }
	$1 == "row" { nr++; rg[nr] = $2; ra[nr] = $3; rl[nr] = $4; rm[nr] = $5; rr[nr] = $6; rc[nr] = $7; next }
	END {
		if (failed || nt == 0) exit 2
		print "# memcheck bench"
		print ""
		for (i = 1; i <= ni; i++) print info[i] "  "
		if (nlib > 1) print "**Warning: these figures come from " nlib " different libraries (an older run left beside a newer one).**  "
		print ""
		print "## Targets (issue 15)"
		print ""
		print "Beside each: the floor preload (bench/floor_interpose.c: a 16-frame walk hashed and a table"
		print "of live blocks, the least a tracker of this kind does; for counting, the forwarding-only"
		print "preload) and LeakSanitizer, in the same rounds, and a target **proposed** against the floor"
		print "(not issue 15 targets; bench/targets names who proposed each).  The step has two floors:"
		print "without a scrub, and scrubbing the bytes that memcheck scrubs by default (FLOOR_SCRUB), which"
		print "valgrind-equal leak kinds need and the plain floor does not do; the proposed target weighs"
		print "memcheck against the scrubbing floor, the ratio to the plain floor shown after it."
		print ""
		print "| target | allocator | measured | limit | | floor | LeakSanitizer | proposed: memcheck against the floor | proposed limit | |"
		print "|---|---|---|---|---|---|---|---|---|---|"
		pass = miss = ppass = pmiss = 0
		for (t = 1; t <= nt; t++) {
			k = tkey[t]
			if (!(k in mord)) { printf "| %s | | not measured | %s %s %s | | | | | | |\n", tdesc[t], top[t], tlim[t], tunit[t]; continue }
			na = split(substr(mord[k], 2), al, " ")
			for (j = 1; j <= na; j++) {
				v = mv[k, al[j]] + 0
				ok = meets(v, top[t], tlim[t])
				if (ok) pass++; else miss++
				fl = besides("floor", k, al[j], tunit[t])
				ls = besides("lsan", k, al[j], tunit[t])
				pm = pl = pv = ""
				if (k in pkey) {
					pl = pop[k] " " plim[k] " " punit[k]
					if ((pkey[k], al[j]) in mv) {
						p = mv[pkey[k], al[j]] + 0
						pm = fmt(p) " " punit[k]
						pok = meets(p, pop[k], plim[k])
						if (pok) ppass++; else pmiss++
						pv = pok ? "PASS" : "**MISS**"
					} else
						pm = "not measured"
					# the same figure against other floors, shown only
					for (c = 1; c <= nalso[k]; c++)
						if ((am[k, c], al[j]) in mv)
							pm = pm "; " fmt(mv[am[k, c], al[j]] + 0) " " au[k, c] " " alab[k, c]
				}
				printf "| %s | %s | %s %s | %s %s %s | %s | %s | %s | %s | %s | %s |\n", tdesc[t], al[j], fmt(v), tunit[t], top[t], tlim[t], tunit[t], ok ? "PASS" : "**MISS**", fl, ls, pm, pl, pv
			}
		}
		print ""
		printf "%d met, %d missed.", pass, miss
		if (ppass + pmiss) printf "  Proposed against the floor: %d met, %d missed.", ppass, pmiss
		printf "\n\n"
		np = 0
		for (t = 1; t <= nt; t++)
			if (tkey[t] in pkey) {
				if (!np++) print "Proposed targets:"
				printf "- %s: %s %s %s %s\n", tdesc[t], pdesc[tkey[t]], pop[tkey[t]], plim[tkey[t]], punit[tkey[t]]
			}
		if (np) print ""
		print "## Every timed row"
		print ""
		print "| workload | allocator | mode | median s | ratio | cost |"
		print "|---|---|---|---|---|---|"
		for (i = 1; i <= nr; i++)
			printf "| %s | %s | %s | %s | %.2fx | %s |\n", rg[i], ra[i], rl[i], rm[i], rr[i], rc[i]
	}' "${inputs[@]}" >"$OUT_MD" || { echo "chart.sh: could not write $OUT_MD" >&2; exit 2; }

# ---- the SVG chart ----------------------------------------------------------
# One bar a row, log scale from 1x (bare) to the largest ratio rounded up
# to a tick; rows grouped by workload.  Plain SVG 1.1, no script, no
# external font: it renders the same in a browser and on a forge's page.

awk -F'\t' '
	function esc(s) { gsub(/&/, "\\&amp;", s); gsub(/</, "\\&lt;", s); gsub(/>/, "\\&gt;", s); return s }
	function x(r) { return X0 + W * log(r < 1 ? 1 : r) / log(XMAX) }
	$1 == "info" && !title { title = $2; next }
	$1 == "row" && $8 != "bare" {
		# rows of a workload together, in the order workloads first appear
		if (!($2 in gi)) { gi[$2] = ++ng; gname[ng] = $2 }
		k = gi[$2]; c = ++gn[k]
		gr_a[k, c] = $3; gr_l[k, c] = $4; gr_r[k, c] = $6 + 0; gr_k[k, c] = $8; kinds[$8] = 1
		if ($6 + 0 > maxr) maxr = $6 + 0
	}
	END {
		for (k = 1; k <= ng; k++)
			for (c = 1; c <= gn[k]; c++) {
				nr++; rg[nr] = gname[k]; ra[nr] = gr_a[k, c]; rl[nr] = gr_l[k, c]; rr[nr] = gr_r[k, c]; rk[nr] = gr_k[k, c]
			}
		if (nr == 0) exit 0
		nticks = split("1 1.25 1.5 2 3 5 10 20 50 100 200 500 1000", tick, " ")
		XMAX = 1.25
		for (i = 1; i <= nticks; i++) if (tick[i] + 0 >= maxr) { XMAX = tick[i] + 0; break }
		if (maxr > XMAX) XMAX = maxr
		X0 = 330; W = 560; RH = 16; top = 58
		col["mc"] = "#1f5fa8"; col["mcmode"] = "#7fa7d6"; col["lsan"] = "#d9822b"
		col["vg"] = "#b8322e"; col["floor"] = "#4d9a5a"; col["other"] = "#9a9a9a"
		# rows plus a heading per group
		y = top
		for (i = 1; i <= nr; i++) { if (rg[i] != rg[i-1]) y += RH + 6; y += RH }
		H = y + 40
		printf "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" font-family=\"sans-serif\" font-size=\"11\">\n", X0 + W + 60, H, X0 + W + 60, H
		printf "<title>memcheck bench: time against the bare run</title>\n"
		printf "<rect width=\"100%%\" height=\"100%%\" fill=\"white\"/>\n"
		printf "<text x=\"10\" y=\"20\" font-size=\"14\" font-weight=\"bold\">memcheck: time against the bare run (log scale; 1x = bare)</text>\n"
		printf "<text x=\"10\" y=\"38\" fill=\"#555\">%s</text>\n", esc(title)
		# legend
		lx = 10
		nm["mc"] = "memcheck, defaults"; nm["mcmode"] = "memcheck, other modes"; nm["lsan"] = "LeakSanitizer"
		nm["vg"] = "valgrind"; nm["floor"] = "floors (forwarding; walk + table)"; nm["other"] = "other library"
		# the legend names only the kinds this run has
		n = 0
		split("mc mcmode floor lsan vg other", all, " ")
		for (i = 1; i <= 6; i++) if (all[i] in kinds) lk[++n] = all[i]
		for (i = 1; i <= n; i++) {
			printf "<rect x=\"%d\" y=\"46\" width=\"10\" height=\"10\" fill=\"%s\"/><text x=\"%d\" y=\"55\">%s</text>\n", lx, col[lk[i]], lx + 14, nm[lk[i]]
			lx += 14 + length(nm[lk[i]]) * 6 + 14
		}
		# grid
		for (i = 1; i <= nticks; i++) {
			t = tick[i] + 0; if (t > XMAX) break
			printf "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" stroke=\"%s\"/>\n", x(t), top + 8, x(t), H - 28, t == 1 ? "#333" : "#ddd"
			printf "<text x=\"%.1f\" y=\"%d\" text-anchor=\"middle\" fill=\"#555\">%gx</text>\n", x(t), H - 14, t
		}
		y = top
		for (i = 1; i <= nr; i++) {
			if (rg[i] != rg[i-1]) {
				y += RH + 6
				printf "<text x=\"10\" y=\"%d\" font-weight=\"bold\">%s</text>\n", y - 4, esc(rg[i])
			}
			c = (rk[i] in col) ? col[rk[i]] : col["other"]
			printf "<text x=\"%d\" y=\"%d\" text-anchor=\"end\">%s%s</text>\n", X0 - 6, y + RH - 4, ra[i] == "-" ? "" : esc(ra[i]) ": ", esc(rl[i])
			printf "<rect x=\"%d\" y=\"%d\" width=\"%.1f\" height=\"%d\" fill=\"%s\"><title>%s%s: %.2fx</title></rect>\n", X0, y + 2, x(rr[i]) - X0 < 1 ? 1 : x(rr[i]) - X0, RH - 4, c, ra[i] == "-" ? "" : esc(ra[i]) ", ", esc(rl[i]), rr[i]
			printf "<text x=\"%.1f\" y=\"%d\">%.2fx</text>\n", x(rr[i]) + 4, y + RH - 4, rr[i]
			y += RH
		}
		printf "</svg>\n"
	}' "${inputs[@]}" >"$OUT_SVG" || { echo "chart.sh: could not write $OUT_SVG" >&2; exit 2; }

sed -n '/^## Targets/,/^## Every/p' "$OUT_MD" | sed '$d'
echo "(written to $OUT_MD and $OUT_SVG)"
