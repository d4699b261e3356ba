/*
 * fuzz_cfi.c - lib/cfi.c under libFuzzer (make fuzz, make fuzz-check;
 * FUZZ_TARGETS=cfi for this one alone).  An input is a return address,
 * as 8 bytes of its offset from the rest (little-endian, signed), then
 * an object's .eh_frame_hdr and .eh_frame as the dynamic linker maps
 * them, the header first: the object's mapping, for the parser, is that
 * rest and nothing more.  The seeds (fuzz/corpus_cfi) are the two
 * sections of a small program with return addresses inside its
 * functions.  Besides what ASan and UBSan catch (a read outside the
 * mapping above all: cfi.c runs inside malloc, on tables it trusts no
 * more than their bounds), it checks the contract: a rule the walk can
 * apply, or none.
 *
 * Linked with fuzz/replay.c it is a plain program that runs the target
 * over the files named on its command line (make fuzz-replay).
 */
#include <stdlib.h>
#include <string.h>

#include "internal.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 8)
		return 0;
	int64_t off;
	memcpy(&off, data, 8);
	size -= 8;
	/* an exact-size copy: ASan sees a read past the mapping */
	uint8_t *map = malloc(size ? size : 1);
	if (!map)
		return 0;
	memcpy(map, data + 8, size);
	struct mc_cfi_rule r;
	mc_cfi_rule_in((uintptr_t)map + (uintptr_t)off, map, (uintptr_t)map,
		       (uintptr_t)map + size, &r);
	switch (r.kind) {
	case MC_CFI_UNKNOWN:
	case MC_CFI_FP:
	case MC_CFI_END:
		if (r.cfa_off || r.rbp_off)
			abort(); /* no offsets but a CFI rule's */
		break;
	case MC_CFI_SP:
	case MC_CFI_BP:
		if (r.cfa_off < 8 || (r.rbp_off != 0 && r.rbp_off >= -8))
			abort(); /* the return address below the CFA, rbp below it */
		break;
	case MC_CFI_SIGNAL:
		if (r.cfa_off < 0 || r.cfa_off > MC_CFI_SIGNAL_MAX || r.rbp_off < 0 ||
		    r.rbp_off > MC_CFI_SIGNAL_MAX || ((r.cfa_off | r.rbp_off) & 7))
			abort(); /* the ucontext's words above the stack pointer */
		break;
	default:
		abort();
	}
	/* the fast interpreter's answer is the general one's */
	struct mc_cfi_rule g;
	if (mc_cfi_rule_in_general((uintptr_t)map + (uintptr_t)off, map, (uintptr_t)map,
				   (uintptr_t)map + size, &g) &&
	    (g.kind != r.kind || g.cfa_off != r.cfa_off || g.rbp_off != r.rbp_off))
		abort();
	free(map);
	return 0;
}
