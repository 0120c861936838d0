"""Long texts come in parts (``board/query/text_parts.py`` and the text route's ``offset`` and
``limit``): a part is cut between markdown blocks, so the parts render as the whole does;
a code block or a table longer than a part goes on as code and as rows of the same table;
a line longer than a part is cut at a space or at the limit; a table comes a number of
rows at a time; the answer says where the next part starts and how much is left; a bad
offset or limit is answered with one line naming it."""

from __future__ import annotations

import html
import re
from collections.abc import Iterator

import pytest
from helpers.board import route_client
from helpers.memory_surface import MemorySurface
from starlette.testclient import TestClient

from sumlens.board.api.text import MAX_ROWS, PART
from sumlens.board.query.markdown import render_markdown
from sumlens.board.query.text_parts import normalized, text_part
from sumlens.io import Text

LIMIT = 1_000
CODE = [f"value_{i} = {i} * 2  # <not markup>" for i in range(200)]
ROWS = [f"| {i} | **{i * i}** |" for i in range(200)]
DOCUMENT = "\n\n".join(
    [f"## Section {i}\n\nSome *words* of paragraph {i},\nover two lines." for i in range(20)]
    + ["- one\n- two\n  - nested\n- three", "1. first\n2. second", "> quoted\n> text"]
    + ["| a | b |\n|:--|--:|\n| 1 | 2 |", "```python\nx = 1\n```", "    indented code"]
    + [f"Closing paragraph {i} with `code` and a [link](https://example.org)." for i in range(40)]
)
BIG = "\n".join(f"line {i}: some words of a long log" for i in range(300_000))  # ~10 MB
WORDS = "word " * 600


def parts(source: str, limit: int = LIMIT) -> Iterator[tuple[int, str, int]]:
    """Every part of ``source``: its offset, its markdown and where the next starts."""
    offset = 0
    while offset < len(source):
        markdown, end = text_part(source, offset, limit)
        assert end > offset
        yield offset, markdown, end
        offset = end


def test_parts_cut_between_blocks_render_as_the_whole() -> None:
    found = list(parts(DOCUMENT))
    assert len(found) > 3
    assert "".join(DOCUMENT[offset:end] for offset, _, end in found) == DOCUMENT
    assert all(markdown == DOCUMENT[offset:end] for offset, markdown, end in found)
    assert all(end - offset <= LIMIT for offset, _, end in found)
    rendered = "".join(render_markdown(markdown) for _, markdown, _ in found)
    assert rendered == render_markdown(DOCUMENT)


def test_a_code_block_longer_than_a_part_goes_on_as_code() -> None:
    source = "Before.\n\n```python\n" + "\n".join(CODE) + "\n```\n\nAfter."
    found = list(parts(source))
    assert len(found) > 3
    pieces = [render_markdown(markdown) for _, markdown, _ in found]
    assert pieces[0].startswith("<p>Before.</p>") and pieces[-1].endswith("<p>After.</p>\n")
    fence = '<pre><code class="language-python">'
    assert all(piece.startswith(fence) for piece in pieces[1:])  # each goes on as code
    assert "<not markup>" not in "".join(pieces)  # escaped, as code
    shown = "".join(html.unescape(re.sub(r"</?[a-z][^>]*>", "", piece)) for piece in pieces)
    assert [line for line in shown.split("\n") if line.startswith("value_")] == CODE


def test_a_table_longer_than_a_part_keeps_its_header() -> None:
    source = "| n | square |\n|--:|---|\n" + "\n".join(ROWS)
    found = list(parts(source))
    assert len(found) > 3
    pieces = [render_markdown(markdown) for _, markdown, _ in found]
    header = '<th style="text-align:right">n</th>'
    assert all(piece.startswith("<table>") and header in piece for piece in pieces)
    cells = [re.findall(r"<td[^>]*>(\d+)</td>", piece) for piece in pieces]
    assert [int(n) for piece in cells for n in piece] == list(range(len(ROWS)))


def test_a_line_longer_than_a_part_is_cut_at_a_space_or_the_limit() -> None:
    solid = list(parts("x" * 5 * LIMIT))
    assert [end - offset for offset, _, end in solid] == [LIMIT] * 5
    spaced = list(parts(WORDS))
    assert all(markdown.endswith(" ") for _, markdown, _ in spaced[:-1])  # no word split
    assert "".join(markdown for _, markdown, _ in spaced) == WORDS


def test_line_ends_are_counted_as_markdown_reads_them() -> None:
    assert normalized("a\r\nb\rc\n") == "a\nb\nc\n"
    source = normalized("para\r\n\r\n" * 500)
    assert "".join(markdown for _, markdown, _ in parts(source)) == source


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    surface = MemorySurface()
    surface.add_value("./a", "text", "big", 1, Text((BIG,)))
    surface.add_value("./a", "text", "small", 1, Text(("**small**",)))
    surface.add_value("./a", "text", "many", 1, Text(tuple(f"r{i}" for i in range(1200)), (1200,)))
    long_cells = ("y" * (2 * LIMIT), "z", "w" * (2 * LIMIT), "v")
    surface.add_value("./a", "text", "long_cells", 1, Text(long_cells, (2, 2)))
    with route_client(surface) as found:
        yield found


def _text(client: TestClient, **params: object) -> dict:
    response = client.get("/api/v1/text", params={"run": "./a", **params})  # type: ignore[arg-type]
    assert response.status_code == 200, response.text
    return response.json()


def test_the_route_answers_a_long_text_a_part_at_a_time(client: TestClient) -> None:
    first = _text(client, tag="big")
    size = len(BIG.encode())
    assert first["offset"] == 0 and 0 < first["next"] <= PART
    assert first["length"] == len(BIG) and first["size_bytes"] == size
    assert first["remaining_bytes"] == size - first["next"]  # ASCII: a byte a character
    assert first["html"].startswith("<p>line 0: ") and len(first["html"]) < 2 * PART
    second = _text(client, tag="big", offset=first["next"], limit=50_000)
    assert second["offset"] == first["next"] and second["next"] - first["next"] <= 50_000
    assert BIG[first["next"] : first["next"] + 20] in second["html"]
    last = _text(client, tag="big", offset=len(BIG) - 10)
    assert last["next"] is None and last["remaining_bytes"] == 0
    small = _text(client, tag="small")
    assert small["html"] == "<p><strong>small</strong></p>\n" and small["next"] is None
    assert (small["size_bytes"], small["remaining_bytes"]) == (9, 0)


def test_the_route_answers_a_table_rows_at_a_time(client: TestClient) -> None:
    first = _text(client, tag="many")
    assert len(first["rows"]) == MAX_ROWS and first["next"] == MAX_ROWS
    assert first["length"] == 1200 and first["rows"][0] == ["<p>r0</p>\n"]
    last = _text(client, tag="many", offset=1000)
    assert [row[0] for row in last["rows"]][:1] == ["<p>r1000</p>\n"]
    assert len(last["rows"]) == 200 and last["next"] is None
    cells = _text(client, tag="long_cells", limit=LIMIT)
    assert [len(row) for row in cells["rows"]] == [2]  # a row of 4,001 characters alone
    assert cells["next"] == 1 and cells["rows"][0][1] == "<p>z</p>\n"
    assert len(cells["rows"][0][0]) < LIMIT and "The cell at row 1, column 1" in cells["note"]


@pytest.mark.parametrize(
    ("params", "says"),
    [
        ({"tag": "big", "offset": len(BIG) + 1}, f"offset={len(BIG) + 1} is past the end"),
        ({"tag": "many", "offset": 1200}, "offset=1200 is past the last row"),
        ({"tag": "big", "offset": -1}, "offset"),
        ({"tag": "big", "limit": 10}, "limit"),
        ({"tag": "big", "limit": 10_000_000}, "limit"),
    ],
)
def test_bad_parts_are_named(client: TestClient, params: dict, says: str) -> None:
    response = client.get("/api/v1/text", params={"run": "./a", **params})
    detail = response.json()["detail"]
    assert response.status_code == 422 and says in str(detail)
