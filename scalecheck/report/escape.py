"""Untrusted text (kernel names, units, messages from measurement files) made safe to print on one line."""

from __future__ import annotations

import re

_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def visible(text: str) -> str:
    """Control characters (newlines among them) as visible escapes, so that one value stays on one line and no
    terminal escape sequence or GitHub workflow command can start inside it."""
    return _CONTROL.sub(lambda m: m.group(0).encode("unicode_escape").decode("ascii"), text)
