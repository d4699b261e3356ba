/*
 * replay.c - the main() of the replay builds (make fuzz-replay): runs a
 * fuzz target's LLVMFuzzerTestOneInput over each file named, so the seed
 * corpora are checked under ASan/UBSan without libFuzzer.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int main(int argc, char **argv)
{
	static uint8_t buf[1 << 20];
	for (int i = 1; i < argc; i++) {
		FILE *f = fopen(argv[i], "rb");
		if (!f) {
			perror(argv[i]);
			return 1;
		}
		size_t n = fread(buf, 1, sizeof buf, f);
		fclose(f);
		/* An exact-size copy: ASan sees reads past the input. */
		uint8_t *copy = malloc(n ? n : 1);
		memcpy(copy, buf, n);
		LLVMFuzzerTestOneInput(copy, n);
		free(copy);
	}
	printf("fuzz-replay: %d inputs, no failures\n", argc - 1);
	return 0;
}
