"""A batch runner that always crashes with a message on stderr."""

import sys

sys.stderr.write("screening database unreachable\n")
sys.exit(3)
