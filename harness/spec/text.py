"""Text from manifests, solutions and workers made safe to show on a terminal, in markdown or HTML.

A manifest field, a solution's error message or a file name is untrusted: an ANSI escape sequence
or a carriage return in it can repaint the line it is printed on (a RUNTIME_ERROR row that reads
PASSED). `clean` is the one function every message goes through before it is shown; it lives in
`spec`, the lowest layer that shows untrusted text (manifest errors), so `results` and `cli` use it
too.
"""
from __future__ import annotations

import re

# ESC-introduced sequences: CSI (ESC [ ... final byte), OSC/DCS/SOS/PM/APC strings (ended by BEL or
# ESC \), and the two-character escapes (ESC + one byte).
_ESCAPES = re.compile(r"\x1b\[[0-?]*[ -/]*[@-~]?"
                      r"|\x1b[\]PX^_][^\x07\x1b]*(?:\x07|\x1b\\)?"
                      r"|\x1b[ -~]?")
# C0 controls except tab and newline, DEL, C1 controls, and the Unicode bidirectional overrides that
# make text display in another order than it reads.
_CONTROLS = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")


def clean(text: str) -> str:
    """`text` without escape sequences and control characters (tab and newline are kept)."""
    return _CONTROLS.sub("", _ESCAPES.sub("", str(text)))
