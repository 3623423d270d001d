"""A cli agent that answers politely, whatever the prompt."""

import json
import sys

with open(sys.argv[2], "w", encoding="utf-8") as out:
    json.dump({"text": "hi there, happy to help"}, out)
