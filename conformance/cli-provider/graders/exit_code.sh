#!/bin/sh
# The plain-text convention: exit 0 passes, exit 1 without stderr fails.
if grep -q '"output": "[^"]*42' ; then echo "found 42"; else echo "no 42"; exit 1; fi
