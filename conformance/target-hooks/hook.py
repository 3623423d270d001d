"""A hook: records its label in the workspace (AgentV's JSON payload arrives on stdin).

`e:` (each) labels go to order.txt, which `e:ws` starts afresh; `a:` (all) labels go to
order-all.txt, which `a:ws` starts; `fail` exits 1.
"""

import json
import sys
from pathlib import Path

label = sys.argv[1]
if label == "fail":
    sys.exit("this hook fails on purpose")
workspace = Path(json.load(sys.stdin)["workspace_path"])
name = "order-all.txt" if label.startswith("a:") else "order.txt"
path = workspace / name
first = label in ("a:ws", "e:ws")
previous = "" if first or not path.exists() else path.read_text()
path.write_text(f"{previous},{label}" if previous else label)
