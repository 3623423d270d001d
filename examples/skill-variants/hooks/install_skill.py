"""Target hook: copy a skill folder into the run's workspace as `.claude/skills/<name>/`, where
Claude Code discovers project skills. Reads AgentV's hook payload (workspace_path) on stdin."""

import json
import shutil
import sys
from pathlib import Path

source = Path(sys.argv[1])
workspace = Path(json.load(sys.stdin)["workspace_path"])
shutil.copytree(source, workspace / ".claude" / "skills" / source.name)
