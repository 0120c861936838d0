"""Text cells for CSV files that a spreadsheet opens as text, never as a formula.

A spreadsheet evaluates a cell that starts with ``=``, ``+``, ``-`` or ``@`` (and, in some,
one that starts with a tab or a carriage return) as a formula, so a tag or a run name such as
``=HYPERLINK(...)`` would run when the exported file is opened. Every CSV the server writes
passes its text cells through :func:`safe_cell`, which prefixes such a cell with ``'`` as
OWASP recommends. Numbers are written as numbers and never passed here, so a loss of ``-0.5``
stays ``-0.5``. The page's twin (``static/core/csv.js``) follows the same rule.
"""

from __future__ import annotations

FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")
"""First characters that make a spreadsheet read a cell as a formula."""


def safe_cell(text: str) -> str:
    """``text`` as a CSV text cell that no spreadsheet evaluates: a leading ``'`` if needed."""
    if text.startswith(FORMULA_STARTS):
        return "'" + text
    return text
