"""A scripted cli agent: writes responses/<EVAL_ID>.json as its output file (AgentV's shape)."""

import shutil
import sys
from pathlib import Path

eval_id, output_file = sys.argv[1:3]
shutil.copyfile(Path(__file__).parent / "responses" / f"{eval_id}.json", output_file)
