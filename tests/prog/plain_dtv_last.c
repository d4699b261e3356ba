/*
 * plain_dtv_last.c - a thread's TLS block of a library dlopened after
 * the thread started, rooted only in the thread's DTV's last entry.
 *
 * A thread's DTV (the C library's array of pointers to its TLS blocks)
 * is malloc'd when the thread starts, with room for the modules loaded
 * then and 14 more (glibc's DTV_SURPLUS).  The program starts a thread
 * that reads its DTV's length, then dlopens copies of a library with
 * TLS (libtls_slotN.so, beside it) until one gets the module id of the
 * DTV's last entry; the thread touches that copy's TLS, whose block the
 * dynamic linker mallocs and keeps only in that entry, and the process
 * ends with the thread alive (mode "exit"), or a region ends first
 * (mode "region": memcheck_begin/end found with dlsym, the program is
 * preloaded; without memcheck the mode runs as "exit").  The block is
 * the thread's, reachable as long as the thread lives: never lost.
 * Under valgrind, as under memcheck, the only block lost is the
 * running thread's DTV (its descriptor points one entry into it:
 * possibly lost), which memcheck's shipped suppressions take.
 *
 * Mode "cached": a first thread ends and is joined (the C library keeps
 * its stack, DTV included, for the next thread), copies are dlopened
 * until one gets the module id past that DTV's last entry, and a second
 * thread, which takes the first's stack, touches that copy's TLS: the C
 * library grows the DTV for it (_dl_resize_dtv's realloc) inside
 * pthread_create, a block valgrind counts one entry smaller than the
 * one libmemcheck's own TLS module makes (tests/test_fidelity.c).
 *
 * Mode "grown": as "exit", but the copy touched gets the module id past
 * the thread's DTV's last entry: the dynamic linker grows the thread's
 * own DTV at the touch (_dl_update_slotinfo's realloc), outside any
 * pthread_create.
 *
 * PAD, a number (0 by default), puts PAD "./" steps into the directory of
 * every path dlopen is given: the dynamic linker keeps each path as the
 * object's name (a block of its length), so the blocks malloc hands out
 * after them (ld.so's _dl_find_object segments) lie elsewhere, as they
 * would in a checkout whose path is 2 * PAD bytes longer.
 *
 * Mode "main": no thread; the main thread's own DTV, which the dynamic
 * linker made at start-up with its own minimal allocator, is grown at
 * the main thread's touch of the copy that gets the module id past its
 * last entry (_dl_resize_dtv's malloc: the initial DTV cannot be
 * realloc'd).  Mode "mainstay" loads the same copies and touches the
 * one before the last before the last is loaded (no growth: a touch of
 * any copy after the last load grows the DTV): what "main" allocates more is the grown
 * DTV (the touched copy's block is allocated in both).
 *
 * Usage: plain_dtv_last [exit|region|cached|grown|main|mainstay [PAD]].  Prints "slot N of L"
 * (the module id the touched copy got, and the length of the touching
 * thread's DTV); exits 0, 2 when no copy got the id wanted (more
 * modules were loaded than the copies built cover).
 */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define COPIES 24 /* libtls_slot1.so .. libtls_slot24.so */

struct memcheck_result;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static size_t dtv_len;             /* the thread's DTV's entries */
static void *(*touch)(void);       /* the copy to touch, once found */
static int step;                   /* 1: length read, 2: touch set, 3: touched */

static void wait_step(int s)
{
	while (step < s)
		pthread_cond_wait(&cond, &lock);
}

static void set_step(int s)
{
	step = s;
	pthread_cond_broadcast(&cond);
}

/* The thread's DTV: the tcb's second word (x86-64's tcbhead_t), whose
 * entry before the first holds the number of entries. */
static size_t my_dtv_len(void)
{
	uintptr_t *dtv;
	__asm__ volatile("mov %%fs:8, %0" : "=r"(dtv));
	return dtv[-2];
}

/* Mode "cached"'s first thread: its length, and its end. */
static void *first(void *arg)
{
	pthread_mutex_lock(&lock);
	dtv_len = my_dtv_len();
	pthread_mutex_unlock(&lock);
	return arg;
}

static void *thread(void *arg)
{
	pthread_mutex_lock(&lock);
	dtv_len = my_dtv_len();
	set_step(1);
	wait_step(2);
	touch();
	set_step(3);
	pthread_mutex_unlock(&lock);
	for (;;)
		pause();
	return arg;
}

/* The directory the program lies in, for its libraries beside it. */
static void dir_of_self(char *dir, size_t n)
{
	ssize_t k = readlink("/proc/self/exe", dir, n - 1);
	dir[k > 0 ? k : 0] = 0;
	char *slash = strrchr(dir, '/');
	if (slash)
		*slash = 0;
}

int main(int argc, char **argv)
{
	const char *mode = argc > 1 ? argv[1] : "exit";
	void (*begin)(const char *) = NULL;
	int (*end)(struct memcheck_result *) = NULL;
	if (strcmp(mode, "region") == 0) {
		begin = (void (*)(const char *))dlsym(RTLD_DEFAULT, "memcheck_begin");
		end = (int (*)(struct memcheck_result *))dlsym(RTLD_DEFAULT, "memcheck_end");
		if (begin)
			begin("dtv_last");
	}
	bool cached = strcmp(mode, "cached") == 0, grown = strcmp(mode, "grown") == 0;
	bool in_main = strcmp(mode, "main") == 0, stay = strcmp(mode, "mainstay") == 0;
	pthread_t t;
	if (cached && (pthread_create(&t, NULL, first, NULL) || pthread_join(t, NULL)))
		return 1;
	if (in_main || stay)
		dtv_len = my_dtv_len();
	else if (!cached && pthread_create(&t, NULL, thread, NULL))
		return 1;
	pthread_mutex_lock(&lock);
	if (!cached && !in_main && !stay)
		wait_step(1);
	size_t len = dtv_len, want = cached || grown || in_main || stay ? len + 1 : len;
	pthread_mutex_unlock(&lock);

	char dir[4096], path[4200];
	dir_of_self(dir, sizeof dir);
	for (int pad = argc > 2 ? atoi(argv[2]) : 0; pad > 0 && strlen(dir) + 2 < 4000; pad--)
		strcat(dir, "/.");
	size_t id = 0;
	void *(*found)(void) = NULL;
	for (int i = 1; i <= COPIES && id < want; i++) {
		snprintf(path, sizeof path, "%s/libtls_slot%d.so", dir, i);
		void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
		if (!h) {
			fprintf(stderr, "plain_dtv_last: %s\n", dlerror());
			return 1;
		}
		if (dlinfo(h, RTLD_DI_TLS_MODID, &id) != 0)
			return 1;
		found = (void *(*)(void))dlsym(h, "tls_slot_touch");
		if (stay && found && id + 1 == want)
			found(); /* before the last copy is loaded: no growth */
	}
	if (id != want || !found) {
		printf("slot %zu of %zu\n", id, len);
		return 2;
	}
	if (in_main || stay) {
		pthread_mutex_unlock(&lock);
		if (in_main)
			found();
		printf("slot %zu of %zu, now %zu\n", id, len, my_dtv_len());
		return 0;
	}
	pthread_mutex_lock(&lock);
	if (cached) {
		/* the second thread on the first's stack, whose DTV the C
		 * library grows to the modules loaded since */
		step = 0;
		if (pthread_create(&t, NULL, thread, NULL))
			return 1;
		wait_step(1);
		if (dtv_len < id)
			return 2;
	}
	printf("slot %zu of %zu\n", id, dtv_len);
	touch = found;
	set_step(2);
	wait_step(3);
	pthread_mutex_unlock(&lock);
	if (end)
		end(NULL);
	return 0;
}
