"""The text route (``board/api/text.py``, with ``markdown.py``) over an in-memory read
surface: one document or a table of cells per kept step, markdown rendered with no raw
HTML, no unsafe link and no loaded image, values that are gone or damaged, and bad
requests answered with one line naming what is wrong."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from helpers.board import route_client
from helpers.memory_surface import GONE, Damaged, MemorySurface
from starlette.testclient import TestClient

from sumlens.board.api.text import MAX_COLUMNS, MAX_ROWS
from sumlens.board.query.markdown import render_markdown, safe_link
from sumlens.io import Text

ATTACKS = ("<img src=x onerror=alert(1)>", "[x](javascript:alert(1))",
           "![a](http://remote/x.png)")  # fmt: skip


@pytest.fixture(scope="module")
def client() -> Iterator[TestClient]:
    surface = MemorySurface()
    for step in (1, 2, 3):
        surface.add_value("./a", "text", "notes", step, Text((f"**step {step}**",)), rank=0)
    surface.add_value("./a", "text", "notes", 3, Text(("rank one",)), rank=1)
    surface.add_value("./a", "text", "list", 1, Text(("`a`", "b", "c"), (3,)))
    surface.add_value("./a", "text", "grid", 1, Text(tuple("abcdef"), (2, 3)))
    surface.add_value("./a", "text", "cube", 1, Text(tuple("abcdefgh"), (2, 2, 2)))
    surface.add_value("./a", "text", "one", 1, Text(("# Title",), (1,)))
    surface.add_value(
        "./a", "text", "huge", 1, Text(("x",) * (MAX_ROWS + 1) * 2, (MAX_ROWS + 1, 2))
    )
    surface.add_value(
        "./a", "text", "wide", 1, Text(("y",) * (MAX_COLUMNS + 5), (1, MAX_COLUMNS + 5))
    )
    surface.add_value("./a", "text", "misshapen", 1, Text(("a", "b"), (3,)))
    for index, attack in enumerate(ATTACKS):
        surface.add_value("./a", "text", f"attack{index}", 1, Text((attack,)))
    surface.add_value("./a", "text", "gone", 1, GONE)
    surface.add_value("./a", "text", "damaged", 1, Damaged("a CRC that does not match"))
    surface.add_value("./a", "text", "not_text", 1, b"bytes")
    with route_client(surface) as found:
        yield found


def _text(client: TestClient, **params: object) -> dict:
    response = client.get("/api/v1/text", params={"run": "./a", **params})  # type: ignore[arg-type]
    assert response.status_code == 200, response.text
    return response.json()


def test_one_string_is_one_document_per_step_and_rank(client: TestClient) -> None:
    newest = _text(client, tag="notes")
    assert (newest["run"], newest["rank"], newest["tag"], newest["step"], newest["wall"]) == (
        "./a", 0, "notes", 3, 3.0)  # fmt: skip
    assert newest["shape"] == [] and newest["rows"] is None and newest["note"] == ""
    assert newest["html"] == "<p><strong>step 3</strong></p>\n"
    assert _text(client, tag="notes", step=2)["html"] == "<p><strong>step 2</strong></p>\n"
    assert _text(client, tag="notes", rank=1)["html"] == "<p>rank one</p>\n"


def test_tensors_of_strings_are_tables_as_tensorboard_shows_them(client: TestClient) -> None:
    column = _text(client, tag="list")
    assert column["shape"] == [3] and column["html"] is None
    assert column["rows"] == [["<p><code>a</code></p>\n"], ["<p>b</p>\n"], ["<p>c</p>\n"]]
    grid = _text(client, tag="grid")["rows"]
    assert [[cell[3] for cell in row] for row in grid] == [["a", "b", "c"], ["d", "e", "f"]]
    cube = _text(client, tag="cube")
    assert [[cell[3] for cell in row] for row in cube["rows"]] == [["a", "b"], ["c", "d"]]
    assert "first 2-D slice [0, :, :]" in cube["note"]
    one = _text(client, tag="one")  # torch's add_text: a 1-D tensor of one string
    assert one["shape"] == [1] and one["html"] == "<h1>Title</h1>\n" and one["rows"] is None


def test_big_tables_are_bounded_and_say_so(client: TestClient) -> None:
    huge = _text(client, tag="huge")
    assert len(huge["rows"]) == MAX_ROWS and huge["next"] == MAX_ROWS  # rows come in parts
    wide = _text(client, tag="wide")
    assert len(wide["rows"][0]) == MAX_COLUMNS and f"of {MAX_COLUMNS + 5} columns" in wide["note"]
    misshapen = _text(client, tag="misshapen")
    assert len(misshapen["rows"]) == 2 and "does not hold the 2 cells" in misshapen["note"]


def test_markdown_from_files_comes_out_inert(client: TestClient) -> None:
    html = [_text(client, tag=f"attack{index}")["html"] for index in range(len(ATTACKS))]
    assert html[0] == "<p>&lt;img src=x onerror=alert(1)&gt;</p>\n"  # raw HTML is text
    assert html[1] == "<p>[x](javascript:alert(1))</p>\n"  # the link is refused: its source
    assert "<img" not in html[2] and 'href="http://remote/x.png"' in html[2]  # a link, not loaded


@pytest.mark.parametrize(
    ("markdown", "absent", "present"),
    [
        ("[x](JaVa\tScRiPt:alert(1))", "<a", "[x]"),
        ("[x](vbscript:msgbox(1))", "<a", "[x]"),
        ("[x](data:text/html,<script>alert(1)</script>)", "<a", "[x]"),
        ("<javascript:alert(1)>", "<a", "&lt;javascript:"),
        ("![x](javascript:alert(1))", "<a", "![x]"),
        ('<a href="javascript:alert(1)">x</a>', "<a ", "&lt;a href"),
        ("<script>alert(1)</script>", "<script", "&lt;script&gt;"),
        ('[ok](https://example.org "title")', "title=", 'rel="noopener noreferrer"'),
        ("[ok](../relative)", "javascript", 'href="../relative"'),
        ("[ok](mailto:a@example.org)", "javascript", 'href="mailto:a@example.org"'),
        ("~~gone~~", "<s>", "<del>gone</del>"),
        ("| a | b |\n|:--|--:|\n| 1 | 2 |", "<p>", '<td style="text-align:right">2</td>'),
    ],
)
def test_markdown_rules(markdown: str, absent: str, present: str) -> None:
    html = render_markdown(markdown)
    assert absent not in html and present in html, html


def test_safe_links() -> None:
    assert all(map(safe_link, ["http://a", "HTTPS://a", "mailto:x@y", "a/b", "#x", "/x", "?q"]))
    assert not any(map(safe_link, ["javascript:x", " java\nscript:x", "data:x", "vbscript:x",
                                   "file:///etc/passwd"]))  # fmt: skip


@pytest.mark.parametrize(
    ("query", "status", "says"),
    [
        ("text?run=./a&tag=nope", 404, "no text tag='nope'"),
        ("text?run=./b&tag=notes", 404, "run='./b'"),
        ("text?run=./a&tag=notes&rank=7", 404, "rank=7"),
        ("text?run=./a&tag=notes&step=9", 404, "kept steps: [1, 2, 3]"),
        ("text?run=./a&tag=notes&step=x", 422, "step"),
        ("text?run=./a", 422, "tag"),
        ("text?run=./a&tag=gone", 404, "no longer in its file"),
        ("text?run=./a&tag=damaged", 422, "a CRC that does not match"),
        ("text?run=./a&tag=not_text", 404, "holds no text value"),
    ],
)
def test_bad_requests_are_named(client: TestClient, query: str, status: int, says: str) -> None:
    response = client.get(f"/api/v1/{query}")
    detail = response.json()["detail"]
    assert response.status_code == status and says in detail and "\n" not in detail
