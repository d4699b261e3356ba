/*
 * plain_freeres_race: a process that exits with a second thread alive,
 * blocked reading descriptor $RACE_FD (0 if unset), which
 * tests/test_valgrind.c's tracer makes end between memcheck's first look
 * at the process's threads at the exit (life.c's freeres: another
 * thread runs, freeres skipped) and any later one, as Python's joined
 * thread still finishing its OS exit did by chance.  Before it exits it
 * makes one getcpu system call, the tracer's mark.  What freeres would
 * free: the locale's data (setlocale) and stdout's buffer ("done",
 * buffered where stdout is no terminal).  The thread allocates nothing.
 */
#include <locale.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

static void *wait_fd(void *arg)
{
	char c;
	(void)!read((int)(intptr_t)arg, &c, 1);
	return NULL;
}

int main(void)
{
	const char *fd = getenv("RACE_FD");
	setlocale(LC_ALL, "");
	printf("done\n");
	pthread_t t;
	if (pthread_create(&t, NULL, wait_fd, (void *)(intptr_t)(fd ? atoi(fd) : 0)))
		return 1;
	syscall(SYS_getcpu, NULL, NULL, NULL);
	return 0;
}
