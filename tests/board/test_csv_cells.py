"""``safe_cell``: CSV text cells a spreadsheet shows as text, never evaluates (OWASP's rule).

The page's twin (static/core/csv.js) is held to the same cases.
"""

from __future__ import annotations

import pytest

from sumlens.board.csv_cells import safe_cell

CASES = [
    ('=HYPERLINK("http://evil.example","click")', '\'=HYPERLINK("http://evil.example","click")'),
    ("+1+2", "'+1+2"),
    ("-2+3", "'-2+3"),
    ("@SUM(A1)", "'@SUM(A1)"),
    ("\tloss", "'\tloss"),
    ("\rloss", "'\rloss"),
    ("loss/auto", "loss/auto"),
    ("./runs/a", "./runs/a"),
    ("", ""),
    (" =1", " =1"),
    ("a=1", "a=1"),
    ("'=1", "'=1"),
]


@pytest.mark.parametrize(("text", "expected"), CASES)
def test_safe_cell(text: str, expected: str) -> None:
    assert safe_cell(text) == expected
