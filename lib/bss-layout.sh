#!/bin/sh
# bss-layout.sh OBJECT... - the linker script (it augments the default one:
# INSERT) that lays libmemcheck's .bss out with its large arrays first and
# the small variables together after them.
#
# Why: a first touch of a page costs a page fault, 20-35 us on the VMs
# this project runs on.  In link order, the ~170 small variables of the
# library (locks, counters, pointers: 15 KiB in all) sat between fifteen
# arrays of 4 KiB to 256 KiB (1 MiB in all), and a measured process
# touched about sixteen pages of .bss for them.  Together they filled four
# pages, which footprint.c populates in one call at start-up
# (mc_bss_small_lo, the end of the large arrays, marks where they begin).
# They have grown since (51 KiB by session 41); those no default short
# process touches now lie with the large arrays (COLD, below).
#
# The objects are built with -fdata-sections, so each variable is a
# section of its own; a section of 4 KiB or more is a large one.  The
# names come from the objects at each link: nothing to keep in step.
# Statically linked (libmemcheck.a) nothing of this applies, and
# mc_bss_small_lo, a weak reference, is 0; so are the bounds of
# MC_START_TOUCHED's list, which is then not populated.
#
# Around the small variables, three large arrays that start-up writes
# too, so that one populate covers them all (footprint.c): the block
# table's shards (16 KiB, of which a one-thread process writes the
# last group's 2 KiB) just before them, the run from that group's page
# (mc_bss_run_lo), and after them, from mc_bss_small_hi, the arrays
# whose first slot every measured process writes (vg_regions,
# 4.5 KiB, then regions, whose first slot lies on vg_regions' second
# page): where start-up made five calls (the small variables, the
# shards, and the three runs of MC_START_TOUCHED's pages) it makes three.
# Named here (object:section); one that is gone matches nothing, and the
# populates, which go by the objects' addresses, are only not merged.
#
# Last, the object's end is padded to a multiple of 64 KiB (address space
# only: nothing touches the padding).  The dynamic linker maps each object
# below the one before, so libmemcheck, preloaded first, moved every
# library after it (the allocator, the C library) by its own size, and
# modulo 64 KiB that moved the blocks the kernel's fault-around maps
# around a first touch: the same code touched other 16-page blocks with
# memcheck than without, and the RSS figures moved with libmemcheck's
# size at every change of its code.  Measured on a small program (a
# malloc, a fopen of /proc/self/status; no address randomization):
# memcheck's peak less the program's own VmHWM, in KiB, with only this
# padding changed, 4 KiB at a time, went from glibc -88 to +124,
# mimalloc +140 to +236, tcmalloc -212 to +20.  Padded, the libraries
# after libmemcheck start where they do without it, modulo 64 KiB; not
# modulo 2 MiB, where a page table ends and fault-around's window with it
# (the C++ program of test_rss_self under mimalloc: libgcc_s's code 11
# pages or 16, 20 KiB, at a step of 64 KiB of libmemcheck's size).  Now
# libmemcheck is linked to be loaded apart, at MC_LOAD_ADDR (GNUmakefile),
# and the libraries lie where they do without it; the padding stays for
# where that address is taken and the kernel places it among them.
# First of all, the few small variables that every process reads before
# footprint.c's populate, or that a program MEMCHECK_PROGRAMS leaves out
# reads at all (the forwarding table's walk reads objects.c's
# nfork_objects, the verdict's readlink seccomp.c's nfilters, a close of
# descriptor 2, coreutils' at exit, textout.c's err_known, the exit's
# life.c deferred and watching, a getrlimit's rlimits.c any_set): laid out
# among the others, each was a page fault of its own page (a read of a
# page never touched maps the zero page), two in every measured process
# and two in a left-out /bin/date (perf trace -F min, bench/suite_test 1
# and /bin/date).  First in .bss, they share
# the last page of .data, which the dynamic linker writes in every
# process (the lazy bindings' .got.plt, the zeroing of .bss's head up to
# the page's end): no fault of their own.  cxxnew.c's resolved,
# alloc_base and slow_all too: a left-out process's first call of an
# operator new or delete that tcmalloc makes through memcheck's reads
# them (next_of), a page of its own under tcmalloc until session 40.
# progname.c's mc_args_first and mc_args_last too: life.c's constructor
# stores where the arguments lie in every process given any, a page of
# its own in session 42's merge (a left-out /bin/date 144 -> 147 faults
# with env; short43).  The page's room after them all: 0x68 bytes
# (readelf -S: .mc_early_bss ends there, .mc_large_bss starts a page).
EARLY="objects.o:.bss.nfork_objects seccomp.o:.bss.nfilters textout.o:.bss.err_known life.o:.bss.deferred life.o:.bss.watching rlimits.o:.bss.any_set cxxnew.o:.bss.next_fn cxxnew.o:.bss.resolved cxxnew.o:.bss.alloc_base cxxnew.o:.bss.slow_all mappings.o:.bss.alloc.0 mappings.o:.bss.lock progname.o:.bss.mc_args_first progname.o:.bss.mc_args_last"
# Small variables no default short process touches, laid out with the
# large arrays (not populated; a process that does touch one faults its
# page in, as it does a large array's).  Of the 51 KiB of small
# variables (415 sections) in 80c127f's library, the four default short
# processes measured (a measured /bin/date that leaks, bench/suite_test
# 1 and 5, suite_test 1 with a JSON report; every load and store in
# libmemcheck's .bss listed by valgrind --tool=lackey --trace-mem=yes,
# the library built with RUNNING_ON_VALGRIND 0) touched 188-200
# sections, 21.7 KiB in all; these 24 of 256 bytes or more (26 KiB:
# budgets, timelines, threads' alternate stacks, valgrind's text,
# sandboxes, the allocator's heaps, symbolization without a cache, a
# thread's held blocks) none of them touched (lackey also listed
# ownmap.c's tail_pieces, which a measured exit does touch: perf trace
# -F all, so it stays).  Among the others they spread the small
# variables over 13 pages, each populated and each touched (perf trace
# -F all with the populate off: a store in every one); now 7.
# On these guests a 4 KiB page's first store costs the hypervisor's
# fault even after the populate (7-34 us by the load, doc/costs.md
# 2026-12-06 short41), so pages, not bytes, are what a short process
# pays.  Found again by the same lackey run where the code changes; a
# name that is gone matches nothing.  Again in session 50 (date50, the
# same four processes, main aabb987): the small variables had grown to
# 30,053 bytes (471 sections), 6,682 of them touched by none of the
# four; the nine of 80 bytes or more that only valgrind's text, a
# thread's heap-allocated stack, the threads' stop signal, a fatal
# signal or an API region's end use (4,928 bytes) joined the list, and
# the start-up's populate of the run went from 13 pages to 12.
COLD="vgtext.o:.bss.context_text vgtext.o:.bss.context_errors vgtext.o:.bss.replaced vgtext.o:.bss.heuristic_count roots.o:.bss.heap_stacks threads.o:.bss.saved_action fatal.o:.bss.fatal_info fatal.o:.bss.owed_info region.o:.bss.last_ended objects.o:.bss.fork_chain textout.o:.bss.kept_fds life.o:.bss.quick_exit_next life.o:.bss.at_quick_exit_next life.o:.bss.quick_exit_ours life.o:.bss.quick_exit_status blocks.o:.bss.odd allocator.o:.bss.name_buf allocator.o:.bss.heaps symdw.o:.bss.dw symstr.o:.bss.dstr_slot symscopes.o:.bss.fn_scopes symscopes.o:.bss.unit_fns symkeys.o:.bss.any_memo report.o:.bss.shown.2 report.o:.bss.site.3 gate.o:.bss.budget_error sandbox.o:.bss.kept seccomp.o:.bss.filters mappings.o:.bss.queue ownheap.o:.bss.extents ownheap.o:.bss.free_list timeline.o:.bss.lines fatal.o:.bss.alt_state fatal.o:.bss.alt_chunks vgtext.o:.bss.contexts vgxml.o:.bss.ctx_count vgxml.o:.bss.ctx_unique"
# The small variables a fork writes, first among the small variables:
# the locks fork's handlers take and release or set anew in the child,
# the counters and flags a forked child starts again (life.c's
# fork_prepare, fork_parent, fork_child).  Each page of memcheck's that
# a fork writes is a copy-on-write fault in the parent after it and a
# page copied in the child, before it execs or exits; spread among the
# others, they were seven pages (p1bb..p1c1 of the run) written by every
# forked child and five by the parent at every fork: now one
# (tests/prog/plain_fork_faults, test_ownmem fork_pages_written_once).
# Found by valgrind --tool=lackey --trace-mem=yes --trace-children=yes
# on plain_fork_faults 10 1 preloaded: every store the child made to
# libmemcheck's small variables, placed with the link map
# (build/obj/libmemcheck.map); found again the same way where fork's
# handlers change.
FORK="ownmap.o:.bss.tail_lock sys.o:.bss.pid_cached textout.o:.bss.text_busy life.o:.bss.forked_child account.o:.bss.solo_busy account.o:.bss.g_peak account.o:.bss.g_granted account.o:.bss.g_flushed account.o:.bss.live_lock account.o:.bss.nslots_used account.o:.bss.slot_lock blocks.o:.bss.lent blocks.o:.bss.next_home blocks.o:.bss.homes blocks.o:.bss.all_lock blocks.o:.bss.crowd_done blocks.o:.bss.sole fault.o:.bss.lock fault.o:.bss.forks stacks.o:.bss.memo_owner stacks.o:.bss.rules_lock depot.o:.bss.codes_lock depot.o:.bss.depot_lock depot.o:.bss.young_armed symdw.o:.bss.sym_lock symsession.o:.bss.session_checked elfmod.o:.bss.lent region.o:.bss.ended_here region.o:.bss.forked region.o:.bss.stack_lock region.o:.bss.region_lock rlimits.o:.bss.fork_pid rlimits.o:.bss.lock footprint.o:.bss.work_depth footprint.o:.bss.init_fresh footprint.o:.bss.fresh footprint.o:.bss.exit_armed footprint.o:.bss.work_measured footprint.o:.bss.mark_lost_kb footprint.o:.bss.exit_pagemap1 footprint.o:.bss.fp_lock startpages.o:.bss.used startpages.o:.bss.nseg mappings.o:.bss.queue_state roots.o:.bss.user_lock ownheap.o:.bss.lock exitstatus.o:.bss.dropped exitstatus.o:.bss.last_failed exitstatus.o:.bss.failed timeline.o:.bss.reading timeline.o:.bss.tl_lock fatal.o:.bss.alt_chunk_lock vgtext.o:.bss.forked"
RUN_BEFORE="blocks.o:.bss.mc_shards"
RUN_AFTER="vgmode.o:.bss.vg_regions region.o:.bss.regions"
# The large arrays whose heads every process that measures its RSS
# figures (a JSON report, as memcheck run sets) writes and one that
# measures nothing does not: startpages.c's pagemap entries (a read into
# them) and bits, ownread.c's views, symbolize.c's lent_frames (a
# record's sites named).  Each was a page fault of its own at every such
# process (perf trace -F all, bench/suite_test 1 and 3 with a report,
# passing: 4 of memcheck's own 4; short43).  First among the large
# arrays, page-aligned, one after another; footprint.c populates from
# mc_bss_measured_lo to mc_bss_measured_hi (lent_frames' first page
# with them: a name fills its first frame alone) in one call where the
# figures are measured (mc_footprint_init).
MEASURED="startpages.o:.bss.entries startpages.o:.bss.bits ownread.o:.bss.views"
MEASURED_LAST="symbolize.o:.bss.lent_frames"
set -e
echo "/* generated by lib/bss-layout.sh: do not edit */"
echo "SECTIONS"
echo "{"
# MC_START_TOUCHED's list (internal.h), bounded by hidden symbols: the
# linker's own __start_/__stop_ ones were exported.
echo "  mc_start_spans : {"
echo "    HIDDEN(mc_start_spans_lo = .);"
echo "    KEEP(*(mc_start_spans))"
echo "    HIDDEN(mc_start_spans_hi = .);"
echo "  }"
# (an output section of its own: .mc_large_bss takes its arrays' page
# alignment)
echo "  .mc_early_bss : {"
for s in $EARLY; do
	echo "    *${s%%:*}(${s#*:})"
done
echo "  }"
echo "  .mc_large_bss : {"
echo "    . = ALIGN(4096);"
echo "    HIDDEN(mc_bss_measured_lo = .);"
for s in $MEASURED; do
	echo "    *${s%%:*}(${s#*:})"
done
echo "    HIDDEN(mc_bss_measured_hi = ALIGN(4096) + 4096);"
for s in $MEASURED_LAST; do
	echo "    . = ALIGN(4096);"
	echo "    *${s%%:*}(${s#*:})"
done
readelf -SW "$@" | awk -v skip="$EARLY $COLD $RUN_BEFORE $RUN_AFTER $MEASURED $MEASURED_LAST" '
BEGIN {
	n = split(skip, named, " ")
	for (i = 1; i <= n; i++)
		placed[named[i]] = 1
}
/^File: / {
	file = $2
	sub(/.*\//, "", file)
}
function hex(s,   i, v) {
	v = 0
	s = tolower(s)
	for (i = 1; i <= length(s); i++)
		v = v * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
	return v
}
/\] \.bss\./ {
	sub(/.*\] /, "")
	# name type address offset size ...
	if ($2 == "NOBITS" && hex($5) >= 4096 && !((file ":" $1) in placed))
		printf "    *%s(%s)\n", file, $1
}'
# the cold small variables after the large arrays, below the run
for s in $COLD; do
	echo "    *${s%%:*}(${s#*:})"
done
# the run from a page's start: where the large arrays before it end
# moves it (1024 contexts of valgrind's text, session 50: a measured
# process touched 17 pages of .bss for the same run, test_shortexit).
# The run starts at the shards' last group (2 KiB, blocks.c's
# GROUP_BYTES), which the first thread takes (the other seven groups'
# lines are written only where more threads come: blocks.c's
# group_set_up), on one page with the small variables a fork writes
# (FORK, next): a fork writes that group's lines too (each shard marked
# entered by mc_blocks_lock_all), one page where it wrote two.
echo "    . = ALIGN(. + 2048, 4096) - 2048;"
for s in $RUN_BEFORE; do
	echo "    *${s%%:*}(${s#*:})"
done
echo "    HIDDEN(mc_bss_run_lo = . - 2048);"
echo "  }"
echo "  HIDDEN(mc_bss_small_lo = .);"
# (an output section of its own, as .mc_early_bss: the first the
# linker's rule for .bss would match otherwise)
echo "  .mc_fork_bss : {"
for s in $FORK; do
	echo "    *${s%%:*}(${s#*:})"
done
echo "  }"
echo "}"
echo "INSERT BEFORE .bss;"
echo "SECTIONS"
echo "{"
echo "  .mc_run_bss : {"
echo "    HIDDEN(mc_bss_small_hi = .);"
for s in $RUN_AFTER; do
	echo "    *${s%%:*}(${s#*:})"
done
# The object's end at a multiple of 64 KiB (see above).
echo "    . = ALIGN(0x10000);"
echo "  }"
# footprint.c populates the shards and the small variables in one call
# where they span at most its MC_BSS_SMALL_MAX (128 KiB; more means an
# object built without -fdata-sections), and silently not beyond: the
# link fails instead where they grew past it.
echo '  ASSERT(mc_bss_small_hi - mc_bss_run_lo <= 0x20000,'
echo '         "small .bss variables and shards past 128 KiB: footprint.c would not populate them")'
echo '  ASSERT(mc_bss_small_lo - mc_bss_run_lo == 2048 && (mc_bss_run_lo & 4095) == 0,'
echo '         "the block tables last group not alone on the page the fork variables start")'
echo "}"
echo "INSERT AFTER .bss;"
# libmemcheck's thread-local block (PT_TLS) ends at a multiple of 64 bytes
# (the thread pointer's alignment, which the dynamic linker's static TLS
# layout rounds to): preloaded first, it then moves every later module's
# static TLS block and the thread pointer by the same amount, so in the
# main thread each lies at its bare address (the thread pointer's page
# stays where it was: ownmap.c).  jemalloc seeds the random in-page
# offsets of its large blocks (cache-oblivious placement) from its own
# TLS block's address, which a PT_TLS of 0x3f0 bytes moved by 16: each
# 20,000-byte block lay at another offset in its pages than bare.
echo "SECTIONS"
echo "{"
echo "  .tbss : {"
echo "    *(.tbss .tbss.* .gnu.linkonce.tb.*)"
echo "    *(.tcommon)"
echo "    . = ALIGN(64);"
echo "  }"
echo "}"
echo "INSERT AFTER .tdata;"
