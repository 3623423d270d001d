"""The agent: reports what the hooks left in its workspace (its working directory)."""

import json
import sys
from pathlib import Path


def read(name: str) -> str:
    path = Path(name)
    return path.read_text() if path.exists() else "(none)"


answer = f"each={read('order.txt')} all={read('order-all.txt')}"
with open(sys.argv[1], "w") as handle:
    json.dump({"text": answer}, handle)
