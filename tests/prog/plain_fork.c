/*
 * plain_fork.c - fork and exec under LD_PRELOAD (not linked to memcheck;
 * no stdio, whose buffers would be allocations of their own).
 *
 * usage: plain_fork fork   the parent allocates 10 bytes (leaked) and
 *                          forks; the child allocates 20 bytes (leaked)
 *                          and 30 (freed) and leaves with exit(0); the
 *                          parent waits, then allocates and frees 40.
 *        plain_fork exec   the child execs /usr/bin/true.
 *        plain_fork exec name   its argv[0] "true", the name a shell's
 *                          PATH search was given, not the file's.
 *        plain_fork fork utf8   as fork, in the C.UTF-8 locale (set
 *                          before the fork, as coreutils' timeout does).
 * Both print "child=PID\n" on stdout.  Exit status 0, or 1 when the
 * child failed.
 */
#include <locale.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void say_child(pid_t pid)
{
	char buf[32], digits[16];
	int n = 0;
	unsigned v = (unsigned)pid;
	do
		digits[n++] = (char)('0' + v % 10);
	while ((v /= 10));
	size_t len = 0;
	memcpy(buf, "child=", 6);
	len = 6;
	while (n)
		buf[len++] = digits[--n];
	buf[len++] = '\n';
	if (write(1, buf, len) < 0)
		_exit(3);
}

int main(int argc, char **argv)
{
	int do_exec = argc > 1 && strcmp(argv[1], "exec") == 0;
	if (argc > 2 && strcmp(argv[2], "utf8") == 0 && !setlocale(LC_ALL, "C.UTF-8"))
		return 2;
	void *volatile keep = malloc(10);
	pid_t pid = fork();
	if (pid < 0)
		return 2;
	if (pid == 0) {
		if (do_exec) {
			char *const args[] = { argc > 2 && !strcmp(argv[2], "name") ? "true"
										: "/usr/bin/true",
					       NULL };
			execv("/usr/bin/true", args);
			_exit(127);
		}
		keep = malloc(20);
		free(malloc(30));
		exit(0);
	}
	say_child(pid);
	int st;
	waitpid(pid, &st, 0);
	free(malloc(40));
	(void)keep;
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 1;
}
