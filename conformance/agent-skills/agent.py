"""A deterministic agent: `agent.py PROMPT_FILE OUTPUT_FILE FILES...`.

It fails (exit 1) unless the file names it was given, joined by `|`, are exactly those the prompt
lists after `[expects: `, so a case is `ok` only when {FILES} carried its Agent Skills `files`;
then it answers with the prompt and those names.
"""

import json
import re
import sys
from pathlib import Path

prompt_file, output_file, *files = sys.argv[1:]
prompt = Path(prompt_file).read_text(encoding="utf-8").strip()
names = "|".join(Path(name).name for name in files)
expected = re.search(r"\[expects: ([^\]]*)\]", prompt)
if expected is None or expected.group(1) != names or "<file" in prompt:
    sys.exit(
        f"expected {expected and expected.group(1)!r} in a prompt without files, got {names!r}"
    )
answer = f"{prompt}\nFILES={names}"
Path(output_file).write_text(json.dumps({"text": answer}), encoding="utf-8")
