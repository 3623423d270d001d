"""`python -m evals_pipeline.cli`: the `evals-pipeline` command."""

import sys

from evals_pipeline.cli import main

sys.exit(main())
