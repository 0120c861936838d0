"""The embedding projector's config: which embeddings a run holds, and where their files are.

torch's ``SummaryWriter.add_embedding`` (and :mod:`sumlens.writer.embedding`) write
``projector_config.pbtxt`` into the run's directory, a text-format ``ProjectorConfig``
with one ``embeddings`` entry per embedding: its tensor name (``tag:step``), the path of
its ``tensors.tsv`` and, when given, of its ``metadata.tsv`` and sprite, each relative to
the run's directory. The loader reads it to list a run's embeddings (the run list's
``embedding`` tags); the embedding routes read it to find an embedding's files.
"""

from __future__ import annotations

from google.protobuf import text_format

from sumlens._proto import tensorboard_plugins_pb2

EmbeddingInfo = tensorboard_plugins_pb2.EmbeddingInfo
"""One embedding's entry in the config."""
CONFIG_FILE = "projector_config.pbtxt"
"""The config's name in a run's directory."""
CONFIG_LIMIT = 1 << 20
"""Bytes of a config read at most (a config is a few hundred bytes per embedding)."""


def parse_config(data: bytes) -> tensorboard_plugins_pb2.ProjectorConfig:
    """The ``ProjectorConfig`` in ``data``; ``ValueError`` saying what is wrong when it is
    not one."""
    config = tensorboard_plugins_pb2.ProjectorConfig()
    try:
        text_format.Parse(data.decode("utf-8", errors="replace"), config)
    except text_format.ParseError as err:
        raise ValueError(f"{CONFIG_FILE} is not a projector config: {err}") from None
    return config


def embedding_tag(info: EmbeddingInfo) -> str:
    """The tag an embedding is listed by: its tensor name, else its tensors' path."""
    return info.tensor_name or info.tensor_path


def embedding_tags(data: bytes) -> tuple[str, ...]:
    """The tags of the embeddings a config lists that have a tensors file (``ValueError``
    when ``data`` is not a config)."""
    found = (embedding_tag(info) for info in parse_config(data).embeddings if info.tensor_path)
    return tuple(dict.fromkeys(found))
