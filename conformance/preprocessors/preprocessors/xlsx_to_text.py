"""A stand-in spreadsheet converter: reads {path, original_path, media_type}, prints text."""

import json
import sys
from pathlib import Path

request = json.load(sys.stdin)
if "broken" in request["original_path"]:
    print("cannot parse workbook", file=sys.stderr)
    sys.exit(1)
label, value = Path(request["path"]).read_text().strip().split(",")
print(f"SHEET {label}={value} ({request['media_type']})")
