"""Warehouse or model text as a terminal or a file may show it."""

from __future__ import annotations

import re

# C0 and C1 control characters but the line break and the tab: ESC starts a terminal's sequences (a hidden link,
# a clipboard write, a reset: red team 13 through `assay show`), and none belongs in a finding's text
_CONTROLS = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def without_controls(text: str) -> str:
    """``text`` with its control characters dropped (line breaks and tabs kept)."""
    return _CONTROLS.sub("", text)
