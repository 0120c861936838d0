"""``add_mesh``: a 3-D mesh or point cloud for TensorBoard's mesh dashboard (plugin ``mesh``).

Written as torch's writer writes it: one float tensor value per part present, tagged
``<tag>_VERTEX``, ``<tag>_FACE`` and ``<tag>_COLOR`` (in that order), each with a
``MeshPluginData`` naming the mesh, the part, the parts present (a bitmask), the part's
shape and the three.js configuration as sorted JSON.
"""

from __future__ import annotations

import json
from collections.abc import Mapping

import numpy as np

from sumlens._checks import check_text
from sumlens._proto import tensorboard_pb2 as tbpb
from sumlens._proto import tensorboard_plugins_pb2 as plugins
from sumlens.writer.arrays import numeric_array

OWNER = "SummaryWriter.add_mesh"
PLUGIN_NAME = "mesh"
_PART = plugins.MeshPluginData.ContentType


def mesh_values(
    tag: str,
    vertices: object,
    colors: object = None,
    faces: object = None,
    config_dict: Mapping[str, object] | None = None,
) -> list[tbpb.Summary.Value]:
    """The summary values of a mesh: ``vertices`` ``[B, N, 3]`` (x, y, z), optional
    ``colors`` ``[B, N, 3]`` (RGB per vertex) and ``faces`` ``[B, F, 3]`` (vertex indices
    per triangle), and ``config_dict`` for three.js (camera, lights, materials)."""
    check_text(tag, "tag", OWNER)
    if config_dict is not None and not isinstance(config_dict, Mapping):
        raise TypeError(
            f"For '{OWNER}', the argument 'config_dict' must be a dict or None, "
            f"but got {type(config_dict).__name__}"
        )
    try:
        json_config = "{}" if config_dict is None else json.dumps(config_dict, sort_keys=True)
    except (TypeError, ValueError) as err:
        raise TypeError(
            f"For '{OWNER}', the argument 'config_dict' must be JSON-serializable: {err}"
        ) from err
    points = _part(vertices, "vertices")
    parts = [(points, _PART.VERTEX)]
    if faces is not None:
        triangles = _part(faces, "faces", batch=points.shape[0])
        _check_indices(triangles, points.shape[1])
        parts.append((triangles, _PART.FACE))
    if colors is not None:
        parts.append(
            (_part(colors, "colors", batch=points.shape[0], rows=points.shape[1]), _PART.COLOR)
        )
    components = 0
    for _, content_type in parts:
        components |= 1 << content_type
    return [
        _value(tag, array, content_type, components, json_config) for array, content_type in parts
    ]


def _part(
    value: object, name: str, batch: int | None = None, rows: int | None = None
) -> np.ndarray:
    array = numeric_array(value, name, OWNER)
    expected = f"[{batch if batch is not None else 'B'}, {rows if rows is not None else 'N'}, 3]"
    if (
        array.ndim != 3
        or array.shape[2] != 3
        or (batch is not None and array.shape[0] != batch)
        or (rows is not None and array.shape[1] != rows)
    ):
        raise ValueError(
            f"For '{OWNER}', the argument '{name}' must have shape {expected}, "
            f"but got {list(array.shape)}"
        )
    return array


def _check_indices(faces: np.ndarray, vertex_count: int) -> None:
    if faces.size and (
        faces.min() < 0 or faces.max() >= vertex_count or not np.array_equal(faces, np.floor(faces))
    ):
        raise ValueError(
            f"For '{OWNER}', the argument 'faces' must hold whole vertex indices in "
            f"[0, {vertex_count - 1}], but its values span [{faces.min()}, {faces.max()}]"
        )


def _value(
    tag: str,
    array: np.ndarray,
    content_type: plugins.MeshPluginData.ContentType,
    components: int,
    json_config: str,
) -> tbpb.Summary.Value:
    value = tbpb.Summary.Value(tag=f"{tag}_{_PART.Name(content_type)}")
    plugin = value.metadata.plugin_data
    plugin.plugin_name = PLUGIN_NAME
    plugin.content = plugins.MeshPluginData(
        version=0,
        name=tag,
        content_type=content_type,
        components=components,
        shape=list(array.shape),
        json_config=json_config,
    ).SerializeToString()
    tensor = value.tensor
    tensor.dtype = tbpb.DT_FLOAT
    for extent in array.shape:
        tensor.tensor_shape.dim.add(size=extent)
    tensor.float_val.extend(array.astype(np.float64, copy=False).ravel().tolist())
    return value
