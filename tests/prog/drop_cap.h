/*
 * drop_cap.h - shared by tests/prog programs that must run as a user
 * without CAP_SYS_RESOURCE does (tests run as root here): raising a hard
 * limit is then refused, as lib/rlimits.c must emulate and live with.
 */
#ifndef DROP_CAP_H
#define DROP_CAP_H
#include <sys/syscall.h>
#include <unistd.h>
#include <linux/capability.h>

/* CAP_SYS_RESOURCE out of the effective set. */
static void drop_resource_cap(void)
{
	struct __user_cap_header_struct h = { _LINUX_CAPABILITY_VERSION_3, 0 };
	struct __user_cap_data_struct d[2];
	if (syscall(SYS_capget, &h, d) != 0)
		return;
	d[CAP_SYS_RESOURCE / 32].effective &= ~(1u << (CAP_SYS_RESOURCE % 32));
	syscall(SYS_capset, &h, d);
}
#endif
