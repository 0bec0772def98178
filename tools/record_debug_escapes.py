#!/usr/bin/env python
"""Record which characters the reference writes as ``\\u{..}`` in the strings its error messages quote.

Errors about a string of the wrong kind quote it the way Rust's ``{:?}`` does (``invalid type: string "\\u{85}",
expected u32``): a character that is not printable, or that extends the grapheme before it, becomes ``\\u{hex}``
(a few have short escapes: ``\\0 \\t \\n \\r \\" \\\\``). Which characters those are depends on the Unicode version
the reference was built with, not on the Python dscodec runs on, so dscodec keeps the answer as a table.

This script sends every code point but the surrogates to the reference (``deepseek_recipe``, called as a black box)
inside a ``max_tokens`` string, reads back how the message quotes it, and writes the ranges of escaped code points
to ``src/dscodec/protocols/_debug_escapes.py``. It takes about two seconds; the same reference always gives the
same file. Never edit that file by hand: rerun this script.

    python tools/record_debug_escapes.py
"""

from __future__ import annotations

import itertools
import json
import sys
from pathlib import Path

TARGET = Path(__file__).resolve().parent.parent / "src" / "dscodec" / "protocols" / "_debug_escapes.py"
SHORT = {0: "\\0", 9: "\\t", 10: "\\n", 13: "\\r", 34: '\\"', 92: "\\\\"}


def escaped_code_points(reference: object) -> list[int]:
    """The code points the reference's messages write as ``\\u{..}``, in order."""
    escaped: list[int] = []
    points = [c for c in range(0x110000) if not 0xD800 <= c <= 0xDFFF]
    for start in range(0, len(points), 256):
        group = points[start : start + 256]
        text = "".join(map(chr, group))
        body = json.dumps(
            {"model": "DeepSeek-V4-Pro", "messages": [{"role": "user", "content": "hi"}], "max_tokens": text}
        )
        try:
            reference.ChatCompletionRequest(body)  # type: ignore[attr-defined]
        except ValueError as exc:
            message = str(exc)
        else:
            raise SystemExit("the reference took a string as max_tokens")
        pos = message.index('string "') + len('string "')
        for point in group:
            hex_form = f"\\u{{{point:x}}}"
            if message.startswith(hex_form, pos):
                escaped.append(point)
                pos += len(hex_form)
            elif point in SHORT and message.startswith(SHORT[point], pos):
                pos += len(SHORT[point])
            elif message.startswith(chr(point), pos):
                pos += 1
            else:
                raise SystemExit(f"cannot read how U+{point:04X} is quoted: {message[pos : pos + 30]!r}")
    return escaped


def main() -> int:
    try:
        import deepseek_recipe
    except ImportError:
        print("pip install deepseek-recipe==0.2.0", file=sys.stderr)
        return 1
    ranges: list[list[int]] = []
    for point in escaped_code_points(deepseek_recipe):
        if ranges and ranges[-1][1] == point - 1:
            ranges[-1][1] = point
        else:
            ranges.append([point, point])
    # Stored as the distances between the range bounds (start of the first, its length, gap to the next, ...).
    bounds = [bound for low, high in ranges for bound in (low, high + 1)]
    deltas = [bounds[0]] + [b - a for a, b in itertools.pairwise(bounds)]
    text = ",".join(map(str, deltas))
    lines = [text[i : i + 110] for i in range(0, len(text), 110)]
    body = "\n".join(f'    "{line}"' for line in lines)
    TARGET.write_text(
        '"""The code points the reference quotes as ``\\\\u{..}`` in error messages (recorded by\n'
        "``tools/record_debug_escapes.py``; never edit by hand).\n\n"
        "``ESCAPED_BOUNDS`` holds the distances between the bounds of the escaped ranges: the first range starts at\n"
        "the first number, and each range's end (exclusive) and the next start follow by the next distances.\n"
        '"""\n\n'
        f"ESCAPED_BOUNDS = (\n{body}\n)\n",
        encoding="utf-8",
    )
    print(f"{len(ranges)} ranges written to {TARGET}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
