/*
 * plain_envcopy.c - a program that copies its environment, as a shell
 * does: one block for the array and one for each variable, all freed.
 * Its allocation count is the number of variables it sees plus one, so
 * a checker that adds variables to the environment shows in its "total
 * heap usage" (tests/test_valgrind.c, environment_as_valgrinds).
 *
 * Usage: plain_envcopy.  Prints the number of variables; exits 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern char **environ;

int main(void)
{
	size_t n = 0;
	while (environ[n])
		n++;
	char **copy = malloc((n + 1) * sizeof *copy);
	if (!copy)
		return 1;
	for (size_t i = 0; i < n; i++)
		copy[i] = strdup(environ[i]);
	copy[n] = NULL;
	printf("%zu\n", n);
	for (size_t i = 0; i < n; i++)
		free(copy[i]);
	free(copy);
	return 0;
}
