"""L0: the one sanitiser of untrusted text (kernel names, units, file names, file contents, git refs, messages).

`visible` is applied to every value a report, an annotation or an error line prints, so that:

- one value stays on one line: line breaks (``\\n``, ``\\r``, NEL, U+2028/2029) become visible escapes;
- no terminal escape sequence runs: C0 and C1 control characters and DEL become ``\\x1b``-style escapes;
- what a reader sees is what is there: bidirectional controls (U+202A-202E, U+2066-2069, U+200E/200F, U+061C,
  which reorder text: "Trojan Source") and the other invisible format characters (zero-width space and joiners,
  word joiner, soft hyphen, byte order mark, tag characters, ...: Unicode category Cf), plus the invisible
  fillers and joiners that are letters or marks (Hangul fillers, combining grapheme joiner, Mongolian and Khmer
  invisible characters) become ``\\u200b``-style escapes; so do lone surrogates, which no file can hold;
- no GitHub workflow command starts inside it: the runner reads a log line as a command when, after leading white
  space, it starts with ``::`` (``::error::...``), and anywhere it contains ``##[`` (the old ``##[command]`` form),
  so the first ``:`` of such a start and the ``[`` of ``##[`` are escaped too (``\\x3a:error::``, ``##\\x5b``).
  Terminal output in GitHub Actions is also wrapped in stop-commands (`scalecheck.github.workflow`); this guard
  holds without them.

Variation selectors (U+FE00-FE0F) are kept: they pick a glyph of the character before them and hide nothing.
Backslashes are kept as they are, so a name that spells ``\\x1b`` itself reads the same as an escaped ESC; that is
ambiguous to a reader but harmless. stdlib only: the error classes use it.
"""

from __future__ import annotations

import re

# Cc (C0, DEL, C1); Cf (format characters, as of Unicode 15); Zl, Zp; Cs (surrogates); invisible letters and marks.
_HIDDEN = re.compile(
    "[\x00-\x1f\x7f-\x9f"
    "\u00ad\u034f\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2"
    "\u115f\u1160\u17b4\u17b5\u180b-\u180f"
    "\u200b-\u200f\u2028-\u202e\u2060-\u206f\u3164"
    "\ud800-\udfff\ufeff\uffa0\ufff9-\ufffb"
    "\U000110bd\U000110cd\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a"
    "\U000e0000-\U000e0fff]"
)
_NAMED = {"\t": "\\t", "\n": "\\n", "\r": "\\r"}
_LEGACY_COMMAND = "##["  # the runner finds it anywhere in a line


def visible(text: str) -> str:
    """`text` on one line, with every hidden character as a visible escape and no workflow command inside.

    >>> visible("solve\\u202e\\x1b[31m\\n::error::x")
    'solve\\\\u202e\\\\x1b[31m\\\\n::error::x'
    >>> visible("  ::error::x")
    '  \\\\x3a:error::x'
    """
    text = _HIDDEN.sub(_escape, text)
    if _LEGACY_COMMAND in text:
        text = text.replace(_LEGACY_COMMAND, "##\\x5b")
    rest = text.lstrip()
    if rest.startswith("::"):
        text = text[: len(text) - len(rest)] + "\\x3a" + rest[1:]
    return text


def _escape(match: re.Match[str]) -> str:
    char = match.group()
    named = _NAMED.get(char)
    if named is not None:
        return named
    code = ord(char)
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}" if code < 0x10000 else f"\\U{code:08x}"
