"""The parts a long markdown text is shown in, so that neither the server nor the page
handles the whole of a 10 MB text at once.

Rendered whole, such a text took the server up to a minute (markdown-it over many short
lines) and the page minutes (a DOM of millions of nodes). The text route renders one part
(:func:`text_part`): at most ``limit`` characters from an offset, cut where markdown
allows, between two top-level blocks (paragraphs, lists, tables, code blocks) of the
window read, so that a part renders as those blocks render in the whole text. A block
longer than a part is cut at a line end (else a space, else anywhere); the next part then
continues it: inside a fenced code block it starts with the fence's opening line again,
inside a table with its header and delimiter rows, so code stays code and rows stay rows.

Offsets count the characters of the text with its line ends made ``\\n``
(:func:`normalized`, as markdown-it reads it), so the ones the route hands out stay valid.
"""

from __future__ import annotations

import itertools
import re

from markdown_it import MarkdownIt

_LINE_ENDS = re.compile(r"\r\n?")
_FENCE = re.compile(r"^ {0,3}(`{3,}|~{3,})([^\n]*)$", re.MULTILINE)
_DELIMITER_ROW = re.compile(r"^ {0,3}\|?[ \t]*:?-+:?[ \t]*(\|[ \t]*:?-+:?[ \t]*)*\|?[ \t]*$")
_NEWLINE = re.compile(r"\n")
_HEADER_LINES = 3  # a table is looked for in the first lines of a block (after a heading ...)
# markdown's block structure only: the inline rules (emphasis, links ...) are not run
_BLOCKS = MarkdownIt("commonmark", {"html": False}).enable(["table"]).disable(["inline"])


def normalized(text: str) -> str:
    """``text`` with every line end ``\\n`` (markdown-it reads ``\\r\\n`` and ``\\r`` so)."""
    return _LINE_ENDS.sub("\n", text) if "\r" in text else text


def text_part(source: str, offset: int, limit: int) -> tuple[str, int]:
    """The markdown of the part of ``source`` (:func:`normalized`) starting at ``offset``,
    at most ``limit`` characters of it (plus the lines repeated to continue a block), and
    where the next part starts (``len(source)`` after the last)."""
    prefix = _continuation(source, offset)
    if len(prefix) > limit // 4:
        prefix = ""  # a header that long is not repeated in every part
    if offset + limit >= len(source):
        return prefix + source[offset:], len(source)
    window = prefix + source[offset : offset + limit]
    least = len(prefix) + max(1, limit // 4)  # a part holds at least a quarter of a limit
    cut = _block_cut(window, least) or _line_cut(window, least)
    return window[:cut], offset + cut - len(prefix)


def _continuation(source: str, offset: int) -> str:
    """The lines a part starting at ``offset`` repeats to continue the block it starts
    in: a fenced code block's opening line, or a table's header and delimiter rows."""
    if offset == 0:
        return ""
    return _open_fence(source, offset) or _table_header(source, offset)


def _open_fence(source: str, offset: int) -> str:
    """The opening line of the fenced code block ``offset`` lies in ('' when none)."""
    marker, line = "", ""
    for match in _FENCE.finditer(source, 0, offset):
        fence, rest = match[1], match[2]
        if not marker:
            if not (fence[0] == "`" and "`" in rest):  # a backtick fence's info has none
                marker, line = fence, match[0]
        elif fence[0] == marker[0] and len(fence) >= len(marker) and not rest.strip():
            marker = ""
    return f"{line}\n" if marker else ""


def _table_header(source: str, offset: int) -> str:
    """The header and delimiter rows of the table ``offset`` lies in, below them ('' when
    it lies in none): the table is sought in the first lines of the block holding it."""
    start = source.rfind("\n\n", 0, offset)
    start = 0 if start < 0 else start + 2
    lines: list[str] = []
    while len(lines) < _HEADER_LINES + 1:
        end = source.find("\n", start, offset)
        if end < 0:
            break
        lines.append(source[start:end])
        start = end + 1
    for header, delimiter in itertools.pairwise(lines):
        if "|" in header and _DELIMITER_ROW.match(delimiter):
            return f"{header}\n{delimiter}\n"
    return ""


def _block_cut(window: str, least: int) -> int | None:
    """The start of the last top-level block of ``window`` at or after character
    ``least`` (the blocks before it are whole); None when no block starts there."""
    starts = {token.map[0] for token in _BLOCKS.parse(window) if token.level == 0 and token.map}
    lines = [0, *(match.end() for match in _NEWLINE.finditer(window))]
    cuts = [lines[line] for line in starts if 0 < line < len(lines) and lines[line] >= least]
    return max(cuts, default=None)


def _line_cut(window: str, least: int) -> int:
    """Where to cut ``window`` inside one block, at or after character ``least``: after
    its last line end, else its last space, else at its end."""
    for separator in ("\n", " ", "\t"):
        found = window.rfind(separator, least - 1)
        if found >= 0:
            return found + 1
    return len(window)
