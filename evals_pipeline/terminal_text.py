"""Text a child wrote (an agent's or a grader's stderr, an error carrying it), made safe to show:
for a terminal with its control sequences removed, for Markdown with them written out visibly.

An agent's output could otherwise drive the reader's terminal when the runner prints it: retitle
the window, clear the screen, move the cursor to draw a fake "all tests passed" over the real
lines, or write the clipboard (OSC 52). Only line feeds and tabs pass through.
"""

from __future__ import annotations

import re

# Whole sequences first, so their parameters go with them: CSI (ESC [ or the 8-bit 0x9B) with its
# parameter and intermediate bytes; OSC, DCS, SOS, PM and APC strings up to their terminator
# (BEL, ST as ESC \ or 0x9C) or the end of the line (so an unterminated one cannot swallow the
# lines after it); and two-byte ESC sequences.
_SEQUENCE = re.compile(
    r"(?:\x1b\[|\x9b)[0-?]*[ -/]*[@-~]?"
    r"|(?:\x1b[\]PX^_]|[\x90\x98\x9d\x9e\x9f])(?:[^\x07\x1b\x9c\n]|\x1b(?!\\))*(?:\x07|\x1b\\|\x9c)?"
    r"|\x1b[ -/]*[0-~]?"
)
# What is left of the C0 and C1 controls and DEL, but line feed and tab.
_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def for_terminal(text: str) -> str:
    """`text` with every control sequence and control character removed but line feeds and tabs
    (a carriage return too: it could rewrite the line it ends)."""
    return _CONTROL.sub("", _SEQUENCE.sub("", text.replace("\r\n", "\n")))


def for_markdown(text: str) -> str:
    """`text` with each control character but line feed and tab written out as `\\xNN`, so a
    reader of the Markdown sees that something was there and what it was."""
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text.replace("\r\n", "\n"))
