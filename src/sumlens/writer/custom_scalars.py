"""``add_custom_scalars``: the layout of TensorBoard's custom-scalars dashboard.

``layout`` is torch's: ``{category: {chart title: [kind, tags]}}`` where kind ``"Multiline"``
draws every scalar tag matching the patterns ``tags`` in one chart and ``"Margin"`` draws a
value with a band between two others (``tags``: value, lower, upper). It is written as a
``Layout`` proto in a scalar ``DT_STRING`` tensor under the tag the plugin looks for.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from sumlens._checks import check_text
from sumlens._proto import tensorboard_pb2 as tbpb
from sumlens._proto import tensorboard_plugins_pb2 as plugins

OWNER = "SummaryWriter.add_custom_scalars"
PLUGIN_NAME = "custom_scalars"
CONFIG_TAG = "custom_scalars__config__"
KINDS = ("Multiline", "Margin")


def custom_scalars_value(
    layout: Mapping[str, Mapping[str, Sequence[object]]],
) -> tbpb.Summary.Value:
    """The summary value holding ``layout`` for the custom-scalars dashboard."""
    if not isinstance(layout, Mapping):
        raise TypeError(
            f"For '{OWNER}', the argument 'layout' must be a dict "
            f"{{category: {{title: [kind, tags]}}}}, but got {type(layout).__name__}"
        )
    proto = plugins.Layout()
    for category_title, charts in layout.items():
        where = f"layout[{category_title!r}]"
        if not isinstance(category_title, str) or not isinstance(charts, Mapping):
            raise TypeError(
                f"For '{OWNER}', {where} must map a str category to a dict "
                f"{{title: [kind, tags]}}, but got {type(charts).__name__}"
            )
        check_text(category_title, f"{where} category", OWNER)
        category = proto.category.add(title=category_title)
        for title, chart in charts.items():
            _add_chart(category, title, chart, f"{where}[{title!r}]")
    value = tbpb.Summary.Value(tag=CONFIG_TAG)
    value.metadata.plugin_data.plugin_name = PLUGIN_NAME
    value.tensor.dtype = tbpb.DT_STRING
    value.tensor.tensor_shape.SetInParent()
    value.tensor.string_val.append(proto.SerializeToString())
    return value


def _add_chart(category: plugins.Category, title: object, chart: object, where: str) -> None:
    if (
        not isinstance(title, str)
        or isinstance(chart, str)
        or not isinstance(chart, Sequence)
        or len(chart) != 2
    ):
        raise TypeError(
            f"For '{OWNER}', {where} must be [kind, tags] under a str title, but got {chart!r}"
        )
    check_text(title, f"{where} title", OWNER)
    kind, tags = chart
    if kind not in KINDS:
        raise ValueError(
            f"For '{OWNER}', the kind of {where} must be one of {', '.join(map(repr, KINDS))}, "
            f"but got {kind!r}"
        )
    if (
        isinstance(tags, str)
        or not isinstance(tags, Sequence)
        or not all(isinstance(tag, str) for tag in tags)
    ):
        raise TypeError(
            f"For '{OWNER}', the tags of {where} must be a list of str, but got {tags!r}"
        )
    for index, tag in enumerate(tags):
        check_text(tag, f"{where} tags[{index}]", OWNER)
    if kind == "Margin":
        if len(tags) != 3:
            raise ValueError(
                f"For '{OWNER}', a Margin chart's tags ({where}) must be 3: value, lower, upper, "
                f"but got {len(tags)}"
            )
        category.chart.add(title=title).margin.series.add(
            value=tags[0], lower=tags[1], upper=tags[2]
        )
    else:
        multiline = category.chart.add(title=title).multiline
        multiline.SetInParent()  # a chart of no tags yet is still a multi-line chart
        multiline.tag.extend(tags)
