/*
 * plain_seccomp.c - a program that installs a seccomp filter denying a
 * system call it makes no more itself but memcheck's exit would: as
 * libseccomp's seccomp_load does (no_new_privs through prctl(2), then
 * the seccomp system call through syscall(2)), or through
 * prctl(PR_SET_SECCOMP).  Its blocks are made before the filter, so
 * that no allocator maps memory after it; with "leak" the only pointer
 * to one is dropped after it.
 *
 * usage: plain_seccomp openat|mmap|write2|fcntl|getrlimit|exitonly kill|errno|trap
 *                      seccomp|prctl clean|leak [probe]
 * exitonly allows what the program itself still makes after the filter
 * (write to fd 1, exit_group) and applies the action to everything else.
 * Prints "filtered=1" (write to fd 1); exit 0.  With probe (openat only)
 * it then makes the call its filter refuses itself, through syscall(2),
 * and prints its result and errno: "probe=-1 errno=13" where the filter
 * fails it with EACCES; killed by SIGSYS where it kills.
 */
#include <errno.h>
#include <fcntl.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

char *plain_seccomp_keep, *plain_seccomp_lost;

static __attribute__((noinline)) void make(size_t keep, size_t lost)
{
	plain_seccomp_keep = malloc(keep);
	plain_seccomp_lost = malloc(lost);
	memset(plain_seccomp_keep, 1, keep);
	memset(plain_seccomp_lost, 2, lost);
}

#define LD_NR BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr))
#define LD_ARG0 BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, args[0]))
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))
#define IF_EQ(k, t, f) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), (t), (f))

int main(int argc, char **argv)
{
	if (argc != 5 && argc != 6)
		return 2;
	const char *what = argv[1], *how = argv[2], *via = argv[3];
	unsigned action = !strcmp(how, "kill")	? SECCOMP_RET_KILL_PROCESS :
			  !strcmp(how, "trap")	? SECCOMP_RET_TRAP :
						  SECCOMP_RET_ERRNO | EACCES;
	make(24, 77);
	int nr = !strcmp(what, "openat") ? SYS_openat :
		 !strcmp(what, "mmap")	 ? SYS_mmap :
		 !strcmp(what, "fcntl")	 ? SYS_fcntl :
		 !strcmp(what, "getrlimit") ? SYS_getrlimit :
					   SYS_write;
	struct sock_filter one[] = {
		LD_NR,
		IF_EQ((unsigned)nr, 0, 1),
		RET(action),
		RET(SECCOMP_RET_ALLOW),
	};
	struct sock_filter write2[] = {
		LD_NR,
		IF_EQ(SYS_write, 0, 3),
		LD_ARG0,
		IF_EQ(2, 0, 1),
		RET(action),
		RET(SECCOMP_RET_ALLOW),
	};
	struct sock_filter exitonly[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, arch)),
		IF_EQ(AUDIT_ARCH_X86_64, 1, 0),
		RET(SECCOMP_RET_KILL_PROCESS),
		LD_NR,
		IF_EQ(SYS_exit_group, 4, 0),
		IF_EQ(SYS_write, 0, 2),
		LD_ARG0,
		IF_EQ(1, 1, 0),
		RET(action),
		RET(SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { 4, one };
	if (!strcmp(what, "write2"))
		prog = (struct sock_fprog){ 6, write2 };
	else if (!strcmp(what, "exitonly"))
		prog = (struct sock_fprog){ 10, exitonly };
	/* stdout's buffer made now: its first printf would allocate */
	setvbuf(stdout, NULL, _IONBF, 0);
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return 3;
	int rc = !strcmp(via, "prctl") ? prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0)
				       : (int)syscall(SYS_seccomp, SECCOMP_SET_MODE_FILTER, 0, &prog);
	if (rc != 0)
		return 4;
	if (!strcmp(argv[4], "leak"))
		plain_seccomp_lost = NULL;
	static const char msg[] = "filtered=1\n";
	if (write(1, msg, sizeof msg - 1) != sizeof msg - 1)
		return 5;
	if (argc == 6 && !strcmp(argv[5], "probe")) {
		errno = 0;
		long r = syscall(SYS_openat, AT_FDCWD, "/", O_RDONLY | O_CLOEXEC);
		char line[96];
		int n = snprintf(line, sizeof line, "probe=%d errno=%d\n", r < 0 ? -1 : 0, errno);
		if (write(1, line, (size_t)n) != n)
			return 5;
	}
	return 0;
}
