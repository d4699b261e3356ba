#!/bin/sh
# a test that skips itself
exec ./t_clean 77
