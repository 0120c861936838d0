"""The embedding projector's files as the embedding route serves them: vectors, labels, PCA.

``tensors.tsv`` holds one vector per row, tab-separated; ``metadata.tsv`` a label per row,
or a header row naming tab-separated columns when there are several (as torch's
``add_embedding`` and TensorBoard's projector have it). Files are bytes handed over by the
read surface, crafted ones included: every bound is checked before the work it bounds,
a row that cannot be read (another number of columns, a value that is not a number, a
non-finite one) is skipped and counted, and what cannot be shown at all is a
``ValueError`` saying why. Vectors beyond :data:`MAX_POINTS` are sampled (the same rows
every time), and projected on their first principal components, found with numpy.
"""

from __future__ import annotations

import io
from dataclasses import dataclass

import numpy as np

MAX_POINTS = 100_000
"""Vectors shown at most: more are sampled down to this many."""
MAX_ROWS = 2_000_000
"""Rows of a tensors file read at most."""
MAX_VALUES = 32_000_000
"""Numbers of a tensors file read at most (rows times columns: 256 MB as float64)."""
MAX_CATEGORIES = 50
"""Distinct values a text column may have to colour the points (TensorBoard's bound)."""
EXACT_DIMENSION = 512
"""Up to this many columns the components are exact (an eigen-decomposition of the
covariance); above, a randomized subspace iteration finds them."""
COMPONENTS = 3


@dataclass(frozen=True)
class Vectors:
    """The readable rows of a tensors file: ``values`` (rows x columns) and the row each
    came from (``rows``, to find its labels), with how many rows were skipped and why."""

    values: np.ndarray
    rows: np.ndarray
    skipped: int
    reason: str


def parse_vectors(data: bytes) -> Vectors:
    """The vectors in a ``tensors.tsv`` (see the module docstring for what is skipped)."""
    whole = _whole(data)
    if whole is not None:
        return Vectors(whole, np.arange(len(whole)), 0, "")
    lines = data.replace(b"\r\n", b"\n").split(b"\n", MAX_ROWS)
    if len(lines) > MAX_ROWS:
        raise ValueError(f"it holds more than {MAX_ROWS:,} rows, the most read")
    if lines and not lines[-1]:
        lines.pop()  # the line end of the last row
    if not lines:
        raise ValueError("it holds no rows")
    widths = np.fromiter((line.count(b"\t") + 1 for line in lines), np.int64, len(lines))
    width = int(np.bincount(widths).argmax())
    kept = np.flatnonzero(widths == width)
    if kept.size * width > MAX_VALUES:
        raise ValueError(
            f"it holds {kept.size:,} rows of {width:,} numbers, more than the "
            f"{MAX_VALUES:,} numbers read at most"
        )
    reasons = [] if kept.size == len(lines) else [f"{len(lines) - kept.size:,} not of {width}"]
    values, readable = _numbers([lines[i] for i in kept], width)
    finite = np.isfinite(values).all(axis=1)
    if not readable.all():
        reasons.append(f"{int((~readable).sum()):,} holding text that is not a number")
    if not (finite | ~readable).all():
        reasons.append(f"{int((~finite & readable).sum()):,} holding NaN or infinity")
    good = finite & readable
    if not good.any():
        raise ValueError("none of its rows is a vector of finite numbers")
    reason = ", ".join(reasons)
    return Vectors(values[good], kept[good], len(lines) - int(good.sum()), reason)


def _whole(data: bytes) -> np.ndarray | None:
    """The rows of ``data`` read at once, when every one is a vector of finite numbers of
    one width (the file a writer wrote); None otherwise, or when a bound would be passed."""
    rows = data.count(b"\n") + (not data.endswith(b"\n"))
    width = data[: data.find(b"\n")].count(b"\t") + 1
    if not data or rows > MAX_ROWS or rows * width > MAX_VALUES or b"\r" in data:
        return None
    try:
        values = np.loadtxt(
            io.BytesIO(data), delimiter="\t", dtype=np.float64, comments=None, ndmin=2,
            quotechar=None,
        )  # fmt: skip
    except ValueError:
        return None
    if values.shape != (rows, width) or not np.isfinite(values).all():
        return None  # blank rows were left out, or some value is not finite
    return values


def _numbers(lines: list[bytes], width: int) -> tuple[np.ndarray, np.ndarray]:
    """``lines`` of ``width`` tab-separated numbers as an array, and which could be read
    (the whole at once; row by row only when some row holds text)."""
    try:
        values = np.loadtxt(
            io.BytesIO(b"\n".join(lines)), delimiter="\t", dtype=np.float64, comments=None,
            ndmin=2, quotechar=None,
        )  # fmt: skip
        if values.shape == (len(lines), width):
            return values, np.ones(len(lines), dtype=bool)
    except ValueError:
        pass
    values = np.full((len(lines), width), np.nan)
    readable = np.zeros(len(lines), dtype=bool)
    for index, line in enumerate(lines):
        try:
            values[index] = np.array(line.split(b"\t"), dtype=np.float64)
        except ValueError:
            continue
        readable[index] = True
    return values, readable


def sample_rows(count: int, bound: int = MAX_POINTS) -> np.ndarray:
    """Which of ``count`` rows are shown: all up to ``bound``, else ``bound`` of them
    picked at random with a fixed seed (the same rows each time), in file order."""
    if count <= bound:
        return np.arange(count)
    return np.sort(np.random.default_rng(0).choice(count, bound, replace=False))


def principal_components(
    values: np.ndarray, count: int = COMPONENTS
) -> tuple[np.ndarray, list[float]]:
    """``values`` (rows x columns) projected on their first ``count`` principal components
    (float32, zeros past the columns there are), and the share of the variance each holds.

    Each component's sign makes its largest loading positive, so the picture is the same
    every time."""
    centred = values - values.mean(axis=0)
    directions, variances = _directions(centred, min(count, *centred.shape))
    directions *= np.where(
        directions[np.abs(directions).argmax(axis=0), np.arange(directions.shape[1])] < 0, -1, 1
    )
    coords = np.zeros((len(values), count), dtype=np.float32)
    coords[:, : directions.shape[1]] = centred @ directions
    total = float(np.square(centred).sum())
    shares = [float(v / total) if total > 0 else 0.0 for v in variances]
    return coords, shares


def _directions(centred: np.ndarray, count: int) -> tuple[np.ndarray, np.ndarray]:
    """The first ``count`` principal directions (columns) of centred rows, and the sum of
    squares along each."""
    rows, columns = centred.shape
    if count == 0:
        return np.zeros((columns, 0)), np.zeros(0)
    if columns <= EXACT_DIMENSION:
        eigen, vectors = np.linalg.eigh(centred.T @ centred)
        order = np.argsort(eigen)[::-1][:count]
        return vectors[:, order], np.maximum(eigen[order], 0.0)
    if rows <= EXACT_DIMENSION:
        _, singular, vt = np.linalg.svd(centred, full_matrices=False)
        return vt[:count].T, np.square(singular[:count])
    rng = np.random.default_rng(0)  # a randomized subspace iteration (Halko et al.)
    basis = np.linalg.qr(centred @ rng.standard_normal((columns, count + 10)))[0]
    for _ in range(4):
        basis = np.linalg.qr(centred @ (centred.T @ basis))[0]
    _, singular, vt = np.linalg.svd(basis.T @ centred, full_matrices=False)
    return vt[:count].T, np.square(singular[:count])


@dataclass(frozen=True)
class Metadata:
    """The labels of a metadata file: column names and each column's cells by row, with
    how many rows had another number of cells than the header."""

    names: list[str]
    cells: list[list[str]]
    ragged: int


def parse_metadata(data: bytes) -> Metadata:
    """The columns of a ``metadata.tsv``: one unnamed column ("label") without tabs in its
    first row, else named by that row. Missing cells are empty, extra ones dropped."""
    lines = data.decode("utf-8", errors="replace").replace("\r\n", "\n").split("\n", MAX_ROWS)
    if len(lines) > MAX_ROWS:
        raise ValueError(f"it holds more than {MAX_ROWS:,} rows, the most read")
    if lines and not lines[-1]:
        lines.pop()
    if lines and "\t" in lines[0]:
        names, body = lines[0].split("\t"), lines[1:]
    else:
        names, body = ["label"], lines
    if len(names) == 1:
        return Metadata(names, [body], 0)
    rows = [line.split("\t") for line in body]
    ragged = sum(len(row) != len(names) for row in rows)
    cells = [[row[i] if i < len(row) else "" for row in rows] for i in range(len(names))]
    return Metadata(names, cells, ragged)


def column_json(name: str, cells: list[str]) -> dict[str, object]:
    """One metadata column of the points shown, as the page colours and labels them:
    ``number`` (values, NaN as null), ``category`` (codes into at most
    :data:`MAX_CATEGORIES` categories) or ``text`` (the cells)."""
    try:
        numbers = np.array(cells, dtype=np.float64)
    except ValueError:
        numbers = None
    if numbers is not None and len(cells):
        return {"name": name, "kind": "number", "values": numbers}
    categories = list(dict.fromkeys(cells))
    if len(categories) <= MAX_CATEGORIES:
        index = {value: code for code, value in enumerate(categories)}
        codes = np.fromiter((index[cell] for cell in cells), np.int32, len(cells))
        return {"name": name, "kind": "category", "categories": categories, "codes": codes}
    return {"name": name, "kind": "text", "values": cells}
