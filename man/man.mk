# man.mk - included by GNUmakefile: doc-check.
doc-check:
