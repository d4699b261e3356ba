/* setjmp and longjmp behave as without memcheck, whose _setjmp and
 * __sigsetjmp clear the jmp_buf's unwritten bytes before the C
 * library's runs (jmpbuf.c): the value longjmp passes, the signal mask
 * sigsetjmp(env, 1) saves and siglongjmp restores, the one
 * sigsetjmp(env, 0) and _setjmp leave as it is, the registers a
 * longjmp restores, a buffer smaller than a jmp_buf passed with
 * savemask 0 (pthread_cleanup_push's) and the bytes after it, from
 * another thread too.  Says "ok" or what is wrong. */
#include <pthread.h>
#include <setjmp.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

static int bad;

static void expect(int ok, const char *what)
{
	if (!ok) {
		printf("wrong: %s\n", what);
		bad = 1;
	}
}

static int blocked(int sig)
{
	sigset_t now;
	sigprocmask(SIG_BLOCK, NULL, &now);
	return sigismember(&now, sig);
}

static jmp_buf jb;
static sigjmp_buf sjb;

__attribute__((noinline)) static void jump(int v)
{
	longjmp(jb, v);
}

/* A buffer of pthread_cleanup_push's shape: the registers and the flag,
 * then words that are the caller's; __sigsetjmp with savemask 0 must
 * leave them. */
struct unwind {
	struct {
		__jmp_buf regs;
		int saved;
	} b[1];
	long after[17];
};

static void cleanup(void *arg)
{
	*(int *)arg = 1;
}

static void *checks(void *arg)
{
	(void)arg;
	/* _setjmp: longjmp's value, and a local kept across it */
	volatile int n = 0;
	int v = setjmp(jb);
	n++;
	if (v == 0)
		jump(7);
	expect(v == 7 && n == 2, "longjmp's value or a volatile local after it");

	/* sigsetjmp(env, 1): the mask restored */
	sigset_t usr1;
	sigemptyset(&usr1);
	sigaddset(&usr1, SIGUSR1);
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);
	if (sigsetjmp(sjb, 1) == 0) {
		pthread_sigmask(SIG_BLOCK, &usr1, NULL);
		siglongjmp(sjb, 1);
	}
	expect(!blocked(SIGUSR1), "siglongjmp restores the mask sigsetjmp(env, 1) saved");

	/* sigsetjmp(env, 0): the mask left as it is */
	if (sigsetjmp(sjb, 0) == 0) {
		pthread_sigmask(SIG_BLOCK, &usr1, NULL);
		siglongjmp(sjb, 1);
	}
	expect(blocked(SIGUSR1), "siglongjmp after sigsetjmp(env, 0) keeps the mask");
	pthread_sigmask(SIG_UNBLOCK, &usr1, NULL);

	/* savemask 0 on a short buffer: the words after it untouched */
	struct unwind u;
	memset(u.after, 0x5a, sizeof u.after);
	if (__sigsetjmp((struct __jmp_buf_tag *)(void *)&u, 0) == 0) {
		for (size_t i = 0; i < sizeof u.after / sizeof u.after[0]; i++)
			expect(u.after[i] == 0x5a5a5a5a5a5a5a5a,
			       "__sigsetjmp(buf, 0) wrote past pthread_cleanup_push's buffer");
	}
	/* and the macro itself */
	int ran = 0;
	pthread_cleanup_push(cleanup, &ran);
	pthread_cleanup_pop(1);
	expect(ran == 1, "pthread_cleanup_pop(1) ran the handler");
	return NULL;
}

int main(void)
{
	checks(NULL);
	pthread_t t;
	if (pthread_create(&t, NULL, checks, NULL) || pthread_join(t, NULL))
		expect(0, "a thread");
	if (!bad)
		printf("ok\n");
	return bad;
}
