"""The project's code location: every component under eval_project/defs, the eval suite's among
them (defs/greetings/defs.yaml)."""

from pathlib import Path

import dagster as dg


@dg.definitions
def defs() -> dg.Definitions:
    return dg.load_from_defs_folder(path_within_project=Path(__file__).parent)
