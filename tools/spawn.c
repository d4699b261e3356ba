/*
 * spawn.c - the command under test, started the one way both `memcheck
 * run` and `memcheck oom` start it: libmemcheck preloaded, the report
 * and the other MEMCHECK_* variables set, then waited for and its end
 * told apart (exit status, signal, timeout).  What to do about the end,
 * how many to run at once and when to give up on one stay with the
 * commands (run.c, oom.c).
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli.h"

/* The wrapper must come before the allocator it forwards to (DESIGN.md:
 * the other order bypasses it); the user's own objects come last. */
char *spawn_preload(const char *lib, const char *object, bool keep_user)
{
	const char *user = keep_user ? getenv("LD_PRELOAD") : NULL;
	bool has_user = user && *user;
	return xasprintf("%s%s%s%s%s", lib, object ? " " : "", object ? object : "",
			 has_user ? " " : "", has_user ? user : "");
}

/* The signals memcheck catches while a command runs, and passes on. */
static const int caught[] = { SIGINT, SIGTERM, SIGHUP };

/* In the child, before exec: what it inherits from memcheck besides
 * the environment.  mask: the signal mask memcheck had before
 * spawn_start blocked the signals it passes on. */
static void child_setup(const struct spawn *sp, const sigset_t *mask)
{
	/* exec would put every caught signal back to its default; do it
	 * now, so that one that comes before the exec is not taken for
	 * memcheck's (an ignored one stays ignored, as exec leaves it). */
	for (int sig = 1; sig < NSIG; sig++) {
		struct sigaction sa;
		if (sigaction(sig, NULL, &sa) == 0 && sa.sa_handler != SIG_DFL &&
		    sa.sa_handler != SIG_IGN)
			signal(sig, SIG_DFL);
	}
	if (sp->own_group)
		setpgid(0, 0);
	if (sp->unblock_signals) {
		sigset_t none;
		sigemptyset(&none);
		sigprocmask(SIG_SETMASK, &none, NULL);
	} else {
		sigprocmask(SIG_SETMASK, mask, NULL);
	}
	if (sp->output) {
		int fd = open(sp->output, O_WRONLY | O_CREAT | O_TRUNC, 0644);
		int in = open("/dev/null", O_RDONLY);
		if (fd >= 0) {
			dup2(fd, 1);
			dup2(fd, 2);
			close(fd);
		}
		if (in >= 0) {
			dup2(in, 0);
			close(in);
		}
	}
	setenv("LD_PRELOAD", sp->preload, 1);
	setenv("MEMCHECK_REPORT", sp->report, 1);
	for (size_t i = 0; i < sp->nenv; i++) {
		if (sp->env[i].value)
			setenv(sp->env[i].name, sp->env[i].value, 1);
		else
			unsetenv(sp->env[i].name);
	}
}

void spawn_start(const struct spawn *sp, struct child *c)
{
	int pfd[2] = { -1, -1 };
	if (sp->exec_error && pipe2(pfd, O_CLOEXEC) != 0)
		die("pipe: %s", strerror(errno));
	fflush(NULL);
	memset(c, 0, sizeof *c);
	c->start = mc_now();
	c->own_group = sp->own_group;
	/* The signals memcheck passes on to the command blocked until the
	 * child has put their default actions back: one its caller passed
	 * on as the child began (run.c's on_signal) ran memcheck's handler,
	 * inherited, in the child and was lost there, and memcheck waited
	 * for a command that went on (test_oom's hangup_stops_oom_and_run);
	 * now it stays pending until the default action takes it. */
	sigset_t passed, mask;
	sigemptyset(&passed);
	for (size_t i = 0; i < MC_ARRAY_SIZE(caught); i++)
		sigaddset(&passed, caught[i]);
	sigprocmask(SIG_BLOCK, &passed, &mask);
	pid_t pid = fork();
	if (pid < 0)
		die("fork: %s", strerror(errno));
	if (pid == 0) {
		if (pfd[0] >= 0)
			close(pfd[0]);
		child_setup(sp, &mask);
		execvp(sp->argv[0], sp->argv);
		int err = errno;
		if (pfd[1] >= 0) {
			ssize_t w = write(pfd[1], &err, sizeof err);
			(void)w;
		}
		_exit(127);
	}
	sigprocmask(SIG_SETMASK, &mask, NULL);
	if (pfd[1] >= 0)
		close(pfd[1]);
	c->pid = pid;
	c->errfd = pfd[0];
}

/* The errno the child wrote when exec failed, or 0.  The write end of
 * the pipe closed on exec or on the child's exit: no read blocks. */
static int exec_errno(struct child *c)
{
	if (c->errfd < 0)
		return 0;
	int err = 0;
	ssize_t r;
	while ((r = read(c->errfd, &err, sizeof err)) < 0 && errno == EINTR)
		;
	close(c->errfd);
	c->errfd = -1;
	return r == (ssize_t)sizeof err ? err : 0;
}

bool spawn_wait(struct child *c, bool block, struct ending *e)
{
	int st;
	pid_t p;
	if (block) {
		while ((p = waitpid(c->pid, &st, 0)) < 0)
			if (errno != EINTR)
				die("waitpid: %s", strerror(errno));
	} else if ((p = waitpid(c->pid, &st, WNOHANG)) != c->pid) {
		return false;
	}
	memset(e, 0, sizeof *e);
	e->wall = mc_now() - c->start;
	e->exit_code = WIFEXITED(st) ? WEXITSTATUS(st) : -1;
	e->sig = WIFSIGNALED(st) ? WTERMSIG(st) : 0;
	e->core = WIFSIGNALED(st) && WCOREDUMP(st);
	e->timed_out = c->timed_out;
	e->exec_errno = exec_errno(c);
	return true;
}

static struct sigaction saved[MC_ARRAY_SIZE(caught)];

/* A signal ignored by memcheck's parent (nohup, a background job) stays
 * ignored, by memcheck and by the command. */
void spawn_catch_signals(bool on, void (*handler)(int))
{
	for (size_t i = 0; i < MC_ARRAY_SIZE(caught); i++) {
		if (!on) {
			sigaction(caught[i], &saved[i], NULL);
			continue;
		}
		sigaction(caught[i], NULL, &saved[i]);
		if (saved[i].sa_handler == SIG_IGN)
			continue;
		struct sigaction sa;
		memset(&sa, 0, sizeof sa);
		sa.sa_handler = handler;
		sigemptyset(&sa.sa_mask);
		sigaction(caught[i], &sa, NULL);
	}
}

void spawn_kill(const struct child *c, int sig)
{
	kill(c->own_group ? -c->pid : c->pid, sig);
}

void spawn_timeout(struct child *c)
{
	c->timed_out = true;
	spawn_kill(c, SIGKILL);
}

const char *sig_name(int sig)
{
	return sig && sigabbrev_np(sig) ? sigabbrev_np(sig) : NULL;
}

void describe_end(const struct ending *e, char *buf, size_t size)
{
	if (e->sig)
		snprintf(buf, size, "killed by signal %d (SIG%s)%s", e->sig,
			 sig_name(e->sig) ? sig_name(e->sig) : "?",
			 e->core ? ", core dumped" : "");
	else
		snprintf(buf, size, "exit status %d", e->exit_code);
}
