#!/bin/sh
# expect.sh - a test that checks that a tool rejects bad input (wayland's
# scanner test): it passes when the tool exits non-zero.  The tool's leak
# on its way out is said, but fails nothing more: its status told this
# script, which expected it (memcheck(1), EXIT STATUS; it failed under
# `memcheck run` before session 48).
# usage: expect.sh [PROGRAM]   (default ./t_reject)
if "${1:-./t_reject}"; then
	echo "the tool accepted bad input"
	exit 1
fi
exit 0
