/*
 * jmpbuf.c - _setjmp and __sigsetjmp, passed on to the C library's with
 * the part of the jmp_buf it leaves unwritten cleared first.
 *
 * glibc's jmp_buf is 200 bytes: the registers (64), whether the signal
 * mask was saved (an int and 4 bytes of padding) and a 128-byte
 * sigset_t, of which the kernel writes 8 bytes where the mask is saved
 * (sigsetjmp(env, 1)) and nothing where it is not (setjmp, _setjmp:
 * glibc's setjmp macro calls _setjmp).  The bytes left hold what the
 * frame that lay there before held: in a live frame (Lua's
 * luaD_rawrunprotected around every pcall, a libpng or libjpeg error
 * handler, a test framework's no-fork runner) a stale copy of a lost
 * block's address kept it still reachable, where valgrind's scan skips
 * those words as undefined and calls the block possibly or definitely
 * lost (Lua 5.5's os.exit: 451 of 470 possibly lost blocks still
 * reachable; tests/prog/plain_leak_jmpbuf).  No scan can tell those
 * bytes from the program's: cleared before the C library's setjmp runs,
 * they hold no address, as they hold none valgrind reads.
 *
 * The stubs are assembly: setjmp must see its caller's stack as the
 * caller left it (the return address and stack pointer it saves are the
 * caller's), so they clear the bytes with vector registers the call may
 * clobber anyway and jump, never call.  What they clear the C library
 * never reads unless it saved the mask, and then reads only what it
 * wrote (longjmp restores the mask where __mask_was_saved says so; its
 * shadow stack's pointer, where that is on, is written by setjmp after
 * the clear).  __sigsetjmp with savemask 0 is passed on untouched: the
 * C library's pthread_cleanup_push macro calls it that way on a buffer
 * of 104 bytes (__pthread_unwind_buf_t), which the clear would run past.
 * The C library's own next definition is found once (elfsym.c; the
 * first call may come before memcheck's constructor, from another
 * object's), in a frame of the stub's own that keeps the caller's
 * arguments and is gone before the jump.
 */
#include <setjmp.h>
#include <stddef.h>
#include <stdlib.h>

#include "internal.h"

/* The offsets the stubs clear: from the mask-saved flag's padding to
 * the jmp_buf's end. */
_Static_assert(offsetof(struct __jmp_buf_tag, __mask_was_saved) == 64, "jmp_buf's layout");
_Static_assert(offsetof(struct __jmp_buf_tag, __saved_mask) == 72, "jmp_buf's layout");
_Static_assert(sizeof(struct __jmp_buf_tag) == 200, "jmp_buf's layout");

/* The C library's __sigsetjmp, once found. */
extern void *mc_jmpbuf_next;
void *mc_jmpbuf_next;

/* The stubs' slow path: called with the caller's arguments saved. */
void *mc_jmpbuf_resolve(void);
__attribute__((used)) void *mc_jmpbuf_resolve(void)
{
	void *next = mc_sym_next_cached("__sigsetjmp", &mc_jmpbuf_next);
	if (!next)
		abort(); /* no C library's setjmp: glibc always defines it */
	return next;
}

/* 68..200: the padding after __mask_was_saved (4 bytes), which glibc
 * never writes either, and the 128 bytes of __saved_mask; the flag
 * itself (64..68) is written by every call. */
__asm__(".section .text._setjmp,\"ax\",@progbits\n"
	"	.globl _setjmp\n"
	"	.type _setjmp, @function\n"
	"_setjmp:\n"
	"	.cfi_startproc\n"
	"	xorl %esi, %esi\n"
	"	jmp mc_jmpbuf_clear\n"
	"	.cfi_endproc\n"
	"	.size _setjmp, .-_setjmp\n"
	".section .text.__sigsetjmp,\"ax\",@progbits\n"
	"	.globl __sigsetjmp\n"
	"	.type __sigsetjmp, @function\n"
	"__sigsetjmp:\n"
	"	.cfi_startproc\n"
	"	testl %esi, %esi\n"
	"	jz mc_jmpbuf_go\n"
	"	jmp mc_jmpbuf_clear\n"
	"	.cfi_endproc\n"
	"	.size __sigsetjmp, .-__sigsetjmp\n"
	".section .text.mc_jmpbuf_clear,\"ax\",@progbits\n"
	"	.hidden mc_jmpbuf_clear\n"
	"	.type mc_jmpbuf_clear, @function\n"
	"mc_jmpbuf_clear:\n"
	"	.cfi_startproc\n"
	"	pxor %xmm0, %xmm0\n"
	"	movl $0, 68(%rdi)\n"
	"	movups %xmm0, 72(%rdi)\n"
	"	movups %xmm0, 88(%rdi)\n"
	"	movups %xmm0, 104(%rdi)\n"
	"	movups %xmm0, 120(%rdi)\n"
	"	movups %xmm0, 136(%rdi)\n"
	"	movups %xmm0, 152(%rdi)\n"
	"	movups %xmm0, 168(%rdi)\n"
	"	movups %xmm0, 184(%rdi)\n"
	"	.cfi_endproc\n"
	"	.size mc_jmpbuf_clear, .-mc_jmpbuf_clear\n"
	/* falls through into mc_jmpbuf_go: the same section keeps the order */
	"	.hidden mc_jmpbuf_go\n"
	"	.type mc_jmpbuf_go, @function\n"
	"mc_jmpbuf_go:\n"
	"	.cfi_startproc\n"
	"	movq mc_jmpbuf_next(%rip), %rax\n"
	"	testq %rax, %rax\n"
	"	jz 1f\n"
	"	jmp *%rax\n"
	"1:	pushq %rbp\n"
	"	.cfi_def_cfa_offset 16\n"
	"	.cfi_offset %rbp, -16\n"
	"	movq %rsp, %rbp\n"
	"	.cfi_def_cfa_register %rbp\n"
	"	pushq %rdi\n"
	"	pushq %rsi\n"
	"	call mc_jmpbuf_resolve\n"
	"	popq %rsi\n"
	"	popq %rdi\n"
	"	popq %rbp\n"
	"	.cfi_def_cfa %rsp, 8\n"
	"	jmp *%rax\n"
	"	.cfi_endproc\n"
	"	.size mc_jmpbuf_go, .-mc_jmpbuf_go\n"
	"	.text\n");
