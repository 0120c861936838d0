"""The snapshot file: one HTML page holding its data, plotly.js and its own script.

The page is ``template.html`` (beside this module) with its ``<!--sumlens:NAME-->`` markers
replaced, in one pass, by: the style (the theme variables of the dashboard's
``static/style.css``, its dark ones under ``prefers-color-scheme: dark``, then
``snapshot.css``), plotly.js from the installed
``plotly`` package (the bundle the server serves), the data of
:func:`~sumlens.board.snapshot.content.collect` as JSON, the script (the dashboard's
``static/widgets/colours.js``, so runs have the colours the pages give them, and
``static/widgets/envelope.js`` and ``grouptraces.js``, so envelopes and groups are drawn
as the Scalars view draws them, then ``snapshot.js``) and the header and footer, which say
where the data came from, how it was smoothed and grouped, and the limits it was cut to.

Nothing in it is fetched: its Content-Security-Policy (``default-src 'none'``) lets the page
load nothing but what it holds and ``data:`` images, so it opens the same with no server and
no network. Inlined text never ends its ``<script>`` early: ``<`` in the JSON is written
``\\u003c`` and a script holding ``</script`` is refused.
"""

from __future__ import annotations

import html
import re
from datetime import datetime, timezone
from importlib import resources
from pathlib import Path
from typing import Any

import orjson

from sumlens._version import __version__

_MARKER = re.compile(r"<!--sumlens:([a-z]+)-->")
_FILES = resources.files("sumlens.board.snapshot")
_STATIC = resources.files("sumlens.board") / "static"
_LIGHT = re.compile(r"^:root \{\n.*?^\}", re.M | re.S)
_DARK = re.compile(r'^:root\[data-theme="dark"\] \{\n(.*?)^\}', re.M | re.S)
_BANDS = {"std": "± sample standard deviation (n - 1)", "minmax": "min-max"}
"""How the footer names a band (as the charts' legends do); percentiles as they are."""


def _read(resource: Any) -> str:
    return resource.read_text(encoding="utf-8")


def theme_css() -> str:
    """The dashboard's theme (``static/style.css``'s ``:root`` rules), dark following the
    system's setting: the one place its colours are written stays that file."""
    css = _read(_STATIC / "style.css")
    light, dark = _LIGHT.search(css), _DARK.search(css)
    if light is None or dark is None:
        raise ValueError("static/style.css has no ':root {' or ':root[data-theme=\"dark\"] {' rule")
    dark_rule = f"@media (prefers-color-scheme: dark) {{\n:root {{\n{dark.group(1)}}}\n}}\n"
    return f"{light.group(0)}\n{dark_rule}"


def _script(text: str, name: str) -> str:
    """``text`` as the body of an inline ``<script>`` (refused if it could close one)."""
    if "</script" in text.lower() or "<!--" in text:
        raise ValueError(f"{name} holds '</script' or '<!--': it cannot be inlined as it is")
    return text


def _json(data: dict[str, Any]) -> str:
    """``data`` as JSON text safe inside ``<script type="application/json">``."""
    text = orjson.dumps(data, option=orjson.OPT_SERIALIZE_NUMPY).decode()
    return text.replace("<", "\\u003c")  # "<" occurs only inside JSON strings


def _count(n: int, noun: str, nouns: str | None = None) -> str:
    return f"{n:,} {noun if n == 1 else nouns or noun + 's'}"


def header(data: dict[str, Any], source: str, made: datetime) -> str:
    """What the snapshot shows and where from, as HTML."""
    scalars = sum(len(tag["series"]) for tag in data["scalars"])
    images = sum(len(s["items"]) for tag in data["images"] for s in tag["series"])
    series = _count(scalars, "scalar series", "scalar series")
    return (
        f'<h1>sumlens snapshot</h1><p class="muted">{html.escape(source)} · '
        f"{_count(len(data['runs']), 'run')} · {series} in "
        f"{_count(len(data['scalars']), 'tag')} · {_count(images, 'image')} · made "
        f"{made.strftime('%Y-%m-%d %H:%M UTC')} with sumlens {html.escape(__version__)}</p>"
    )


def footer(data: dict[str, Any]) -> str:
    """The limits the data was cut to, and what they left out, as HTML."""
    limits = data["limits"]
    cut = sum(1 for tag in data["scalars"] for s in tag["series"] if s["shown"] < s["total"])
    left = data["left_out"]["images"]
    cut_text = _count(cut, "series", "series")
    parts = [
        f"Limits: at most {limits['points']:,} points per scalar series (the server's "
        f"min-max downsampling of every point, first and last kept; "
        f"{cut_text} cut to it), at most {limits['images']:,} images per image series "
        f" (evenly spread over its kept steps), {limits['image_bytes']:,} bytes of "
        f"images in all, at most {limits['series']:,} scalar series.",
        f"Images embedded: {data['image_bytes']:,} bytes.",
    ]
    smoothing = data["smoothing"]
    if smoothing["weight"]:
        name = {"ema": "exponential moving average", "average": "moving average"}
        parts.append(
            f"Smoothed by {name[smoothing['method']]} with weight {smoothing['weight']:g} on "
            "every point, before the downsampling; the raw values are drawn faint."
        )
    if data["envelope"]:
        parts.append(
            "Each series' min-max envelope (the lowest and highest value of each bucket, on "
            "every point) is drawn faint."
        )
    grouped = data["groups"]
    if grouped is not None:
        how = {
            "regex": f"the regular expression “{grouped['group_regex']}” over run ids",
            "tag": "run tag",
            "field": f"the lineage field “{grouped['field']}”",
        }[grouped["by"]]
        names = len({group["name"] for group in grouped["groups"]})
        band = _BANDS.get(grouped["band"], grouped["band"])
        parts.append(
            f"Runs grouped by {how}: {_count(names, 'group')}, each its members' "
            f"{grouped['stat']} with a {band} band (members {grouped['members']}); "
            f"{_count(len(grouped['single']), 'run')} in no group drawn alone."
        )
    if left["past_limit"]:
        parts.append(
            f"{_count(left['past_limit'], 'kept image')} past the per-series limit left out."
        )
    if left["over_bytes"]:
        parts.append(f"{_count(left['over_bytes'], 'image')} left out for the byte limit.")
    if left["unreadable"] or left["not_an_image"]:
        parts.append(
            f"{_count(left['unreadable'] + left['not_an_image'], 'image')} not embedded "
            "(unreadable, or not PNG, JPEG or GIF)."
        )
    parts.append("No server or network is needed to open this file.")
    return "<p>" + " ".join(html.escape(part) for part in parts) + "</p>"


def render(data: dict[str, Any], source: str, plotly_js: Path, made: datetime | None = None) -> str:
    """The snapshot page of ``data`` (made from ``source``) with ``plotly_js`` inlined."""
    made = made or datetime.now(timezone.utc)
    names = ("colours.js", "envelope.js", "grouptraces.js")
    widgets = [_read(_STATIC / "widgets" / name) for name in names]
    script = "\n".join([*widgets, _read(_FILES / "snapshot.js")])
    parts = {
        "title": html.escape(f"sumlens snapshot: {source}"),
        "style": theme_css() + _read(_FILES / "snapshot.css"),
        "header": header(data, source, made),
        "footer": footer(data),
        "plotly": _script(plotly_js.read_text(encoding="utf-8"), plotly_js.name),
        "data": _json(data),
        "script": _script(script, "snapshot.js"),
    }
    return _MARKER.sub(lambda match: parts[match.group(1)], _read(_FILES / "template.html"))
