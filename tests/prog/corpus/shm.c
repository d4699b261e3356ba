/* Pointers kept only in shared memory: an anonymous shared mapping, a
 * POSIX shared memory object and a System V segment: still reachable. */
#include <fcntl.h>
#include <sys/ipc.h>
#include <sys/mman.h>
#include <sys/shm.h>
#include <unistd.h>
#include "corpus.h"

int main(void)
{
	void **anon = mmap(NULL, 8192, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
			   -1, 0);
	char name[64] = "/memcheck-corpus-shm-";
	long pid = getpid();
	char *e = name + strlen(name);
	do
		*e++ = (char)('0' + pid % 10);
	while (pid /= 10);
	*e = 0;
	int fd = shm_open(name, O_RDWR | O_CREAT | O_EXCL, 0600);
	if (anon == MAP_FAILED || fd < 0 || ftruncate(fd, 4096) < 0)
		return 2;
	void **posix = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	shm_unlink(name);
	close(fd);
	int id = shmget(IPC_PRIVATE, 4096, IPC_CREAT | 0600);
	void **sysv = id >= 0 ? shmat(id, NULL, 0) : (void **)-1;
	if (id >= 0)
		shmctl(id, IPC_RMID, NULL);
	if (posix == MAP_FAILED || sysv == (void **)-1)
		return 2;
	anon[1000] = list(2);
	posix[3] = list(3);
	sysv[500] = list(4);
	return 0;
}
