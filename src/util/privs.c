/* Drops capabilities (capset, bounding set) and switches user with the kept ones. */
#include <errno.h>
#include <grp.h>
#include <linux/capability.h>
#include <pwd.h>
#include <stdio.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/error.h"
#include "util/privs.h"

#ifndef CAP_PERFMON
#define CAP_PERFMON 38
#endif
#ifndef CAP_BPF
#define CAP_BPF 39
#endif

#define BIT(c) (1ull << (c))

uint64_t privs_attach_caps(void)
{
	return BIT(CAP_BPF) | BIT(CAP_PERFMON) | BIT(CAP_SYS_PTRACE) | BIT(CAP_DAC_READ_SEARCH);
}

uint64_t privs_read_caps(void)
{
	return BIT(CAP_BPF);
}

static int caps_set(uint64_t keep)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2] = {
		{ .effective = (uint32_t)keep, .permitted = (uint32_t)keep },
		{ .effective = (uint32_t)(keep >> 32), .permitted = (uint32_t)(keep >> 32) },
	};

	return (int)syscall(SYS_capset, &h, d);
}

uint64_t privs_effective(void)
{
	struct __user_cap_header_struct h = { .version = _LINUX_CAPABILITY_VERSION_3 };
	struct __user_cap_data_struct d[2];

	if (syscall(SYS_capget, &h, d) < 0)
		return 0;
	return d[0].effective | (uint64_t)d[1].effective << 32;
}

int privs_drop(const char *user, uint64_t keep)
{
	/* The bounding set first: dropping from it needs CAP_SETPCAP, which goes next. */
	for (int c = 0; c < 64; c++)
		if (!(keep & BIT(c)) && prctl(PR_CAPBSET_READ, c, 0, 0, 0) == 1)
			prctl(PR_CAPBSET_DROP, c, 0, 0, 0);
	prctl(PR_CAP_AMBIENT, PR_CAP_AMBIENT_CLEAR_ALL, 0, 0, 0);
	if (user) {
		struct passwd *pw = getpwnam(user);
		if (!pw) {
			error("no user '%s' to run as", user);
			hint("--user takes a login name from /etc/passwd, e.g. --user nobody");
			return -1;
		}
		/* Keep the permitted set across setuid; the effective one is set again below. */
		if (prctl(PR_SET_KEEPCAPS, 1, 0, 0, 0) < 0 || setgroups(1, &pw->pw_gid) < 0 ||
		    setgid(pw->pw_gid) < 0 || setuid(pw->pw_uid) < 0)
			return error_errno("cannot switch to user '%s'", user);
		prctl(PR_SET_KEEPCAPS, 0, 0, 0, 0);
	}
	if (caps_set(keep) < 0)
		return error_errno("cannot drop capabilities");
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) < 0)
		return error_errno("cannot set no_new_privs");
	return 0;
}
