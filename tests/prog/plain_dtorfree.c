/* plain_dtorfree: hands a block to libdtorfree.so, whose destructor
 * frees it at exit (tests/test_exitorder24.c).  Nothing on stdout: its
 * buffer would be the one block left, and a program linked with
 * -rpath $ORIGIN/../.. (dtorfree_linked) finds no shipped suppressions
 * (supp_region.c's load_defaults takes the parent of .../prog/..). */
void dtorfree_set(const char *s);

int main(int argc, char **argv)
{
	(void)argc;
	dtorfree_set(argv[0]);
	return 0;
}
