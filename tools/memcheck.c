/*
 * memcheck.c - the memcheck command's main: which command argv names,
 * and nothing else.  Each command is a file of its own (run.c, compare.c,
 * gate.c, oom.c, report.c, and vgcompat.c for valgrind's command line);
 * their help texts are usage.c's.  See memcheck(1), and tools/layers.txt for
 * how the files call each other: down, from here.
 *
 * Output: `run` passes the command's stdout and stderr through untouched
 * and writes everything of its own (progress, the table, the verdict) to
 * stderr, so a suite whose stdout is parsed (TAP, diffs) still parses.
 * `compare` and `gate` have no command: their table and verdicts go to
 * stdout.  Messages about input files are "FILE:LINE: message".
 *
 * A first argument that starts with '-' (other than -h, --help, -V and
 * --version) is valgrind's command line: CTest and other drivers put
 * valgrind's options first and the program after them.
 */
#include <stdbool.h>
#include <string.h>

#include "cli.h"

static const struct command {
	const char *name;
	int (*run)(int argc, char **argv);
} commands[] = {
	{ "run", cmd_run },
	{ "compare", cmd_compare },
	{ "gate", cmd_gate },
	{ "oom", cmd_oom },
	{ "report", cmd_report },
};

/* Drivers that find valgrind by its name (curl's runtests.pl, a
 * Makefile's VALGRIND = valgrind) reach memcheck through a link named
 * valgrind, and probe it as valgrind first: without arguments it must
 * fail with status 1, and --version chooses the options they pass
 * (runtests.pl read "memcheck 0.1.0" as valgrind 0 and passed valgrind
 * 2's --logfile=: every test failed with memcheck's usage error). */
static bool called_valgrind(const char *argv0)
{
	const char *base = argv0 ? strrchr(argv0, '/') : NULL;
	base = base ? base + 1 : argv0;
	return base && !strcmp(base, "valgrind");
}

int main(int argc, char **argv)
{
	bool as_valgrind = called_valgrind(argv[0]);
	if (argc < 2) {
		if (as_valgrind) {
			fputs("valgrind: no program specified\n"
			      "valgrind: Use --help for more information.\n", stderr);
			return 1;
		}
		usage_of(NULL, stderr);
		return EXIT_USAGE;
	}
	const char *cmd = argv[1];
	if (!strcmp(cmd, "-h") || !strcmp(cmd, "--help")) {
		usage_of(NULL, stdout);
		return EXIT_PASS;
	}
	if (!strcmp(cmd, "-V") || !strcmp(cmd, "--version")) {
		if (as_valgrind)
			vgcompat_version();
		else
			printf("memcheck %s\n", MEMCHECK_VERSION);
		return EXIT_PASS;
	}
	/* under valgrind's name the first word that is no option is the
	 * program, as `valgrind ./test` runs it, whatever its name */
	if (cmd[0] == '-' || as_valgrind)
		return cmd_vgcompat(argc, argv);
	if (!strcmp(cmd, "help")) {
		if (usage_of(argc == 2 ? NULL : argv[2], stdout))
			return EXIT_PASS;
		return bad_usage(NULL, "no command '%s' (commands: run, compare, gate, oom, report)", argv[2]);
	}
	for (size_t i = 0; i < MC_ARRAY_SIZE(commands); i++)
		if (!strcmp(cmd, commands[i].name))
			return commands[i].run(argc - 1, argv + 1);
	return bad_usage(NULL, "unknown command '%s' (commands: run, compare, gate, oom, report)", cmd);
}
