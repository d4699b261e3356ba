/* plain_leak_jmpbuf with sigsetjmp(env, 1): the kernel writes 8 of the
 * signal mask's 128 bytes, the other 120 keep what was there. */
#define SAVE_MASK 1
#include "plain_leak_jmpbuf.c"
