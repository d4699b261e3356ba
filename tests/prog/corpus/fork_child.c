/* A forked child: it loses a list and exits; the parent waits for it,
 * loses a block of its own and keeps another.  Each process is
 * reported on its own. */
#include <sys/wait.h>
#include <unistd.h>
#include "corpus.h"

void *kept;

int main(void)
{
	kept = list(2);
	pid_t pid = fork();
	if (pid == 0) {
		USE(list(4));
		exit(0);
	}
	int st;
	waitpid(pid, &st, 0);
	USE(malloc(33));
	return WIFEXITED(st) && WEXITSTATUS(st) == 0 ? 0 : 2;
}
