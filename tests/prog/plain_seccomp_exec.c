/*
 * plain_seccomp_exec.c - a sandbox launcher: it installs a seccomp filter
 * and execs a program, which starts under the filter it inherits (as
 * systemd's SystemCallFilter=, bubblewrap's --seccomp, firejail, minijail
 * or a container runtime start a program).  The filter refuses each
 * system call named in the list and lets every other through; the
 * program's memcheck, loaded after the exec, never saw it installed.
 *
 * usage: plain_seccomp_exec CALL[,CALL...] kill|trap|eperm|enosys PROG [ARG...]
 * CALL: openat2, membarrier, prctl, readlinkat, timer_create,
 * process_vm_readv, process_vm_writev, rt_tgsigqueueinfo, tgkill, kill,
 * mkdirat, renameat, sysinfo, getdents64, ioctl, fcntl, clone, clone3.  kill is
 * SECCOMP_RET_KILL_PROCESS, trap SECCOMP_RET_TRAP (SIGSYS), eperm and
 * enosys fail the call with that errno.  Exit 3-5 where the filter
 * cannot be installed or the program not run.
 */
#include <errno.h>
#include <linux/audit.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#ifndef SYS_openat2
#define SYS_openat2 437
#endif

#define LD(field) BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, field))
#define RET(v) BPF_STMT(BPF_RET | BPF_K, (v))
#define IF_EQ(k, t, f) BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (k), (t), (f))

static int call_nr(const char *name, size_t len)
{
	static const struct {
		const char *name;
		int nr;
	} calls[] = {
		{ "openat2", SYS_openat2 },
		{ "membarrier", SYS_membarrier },
		{ "prctl", SYS_prctl },
		{ "readlinkat", SYS_readlinkat },
		{ "timer_create", SYS_timer_create },
		{ "process_vm_readv", SYS_process_vm_readv },
		{ "process_vm_writev", SYS_process_vm_writev },
		{ "rt_tgsigqueueinfo", SYS_rt_tgsigqueueinfo },
		{ "tgkill", SYS_tgkill },
		{ "kill", SYS_kill },
		{ "mkdirat", SYS_mkdirat },
		{ "renameat", SYS_renameat },
		{ "sysinfo", SYS_sysinfo },
		{ "getdents64", SYS_getdents64 },
		{ "ioctl", SYS_ioctl },
		{ "fcntl", SYS_fcntl },
		{ "clone", SYS_clone },
		{ "clone3", SYS_clone3 },
	};
	for (size_t i = 0; i < sizeof calls / sizeof calls[0]; i++)
		if (strlen(calls[i].name) == len && !memcmp(calls[i].name, name, len))
			return calls[i].nr;
	return -1;
}

int main(int argc, char **argv)
{
	if (argc < 4)
		return 2;
	const char *how = argv[2];
	unsigned action = !strcmp(how, "kill")	 ? SECCOMP_RET_KILL_PROCESS :
			  !strcmp(how, "trap")	 ? SECCOMP_RET_TRAP :
			  !strcmp(how, "enosys") ? SECCOMP_RET_ERRNO | ENOSYS :
						   SECCOMP_RET_ERRNO | EPERM;
	/* arch check, the number loaded, then one test a call */
	struct sock_filter f[3 + 2 * 8 + 1] = {
		LD(arch),
		IF_EQ(AUDIT_ARCH_X86_64, 1, 0),
		RET(SECCOMP_RET_KILL_PROCESS),
	};
	unsigned short n = 3;
	f[n++] = (struct sock_filter)LD(nr);
	for (const char *c = argv[1]; *c && n < 3 + 2 * 8 - 1;) {
		size_t len = strcspn(c, ",");
		int nr = call_nr(c, len);
		if (nr < 0)
			return 2;
		f[n++] = (struct sock_filter)IF_EQ((unsigned)nr, 0, 1);
		f[n++] = (struct sock_filter)RET(action);
		c += len + (c[len] == ',');
	}
	f[n++] = (struct sock_filter)RET(SECCOMP_RET_ALLOW);
	struct sock_fprog prog = { n, f };
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0)
		return 3;
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) != 0)
		return 4;
	execv(argv[3], argv + 3);
	return 5;
}
