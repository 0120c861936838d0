"""What ``Model`` accepts as a dataset, and how a batch becomes a dataset element.

A dataset is any *re-iterable* of batches (a list, a ``torch.utils.data.DataLoader``, an
object whose ``__iter__`` returns a fresh iterator). One-shot iterators and generators are
refused: every epoch iterates the dataset again. ``len(dataset)`` gives the steps per
epoch; a dataset without ``__len__`` is counted by iterating it once before the run.

A batch becomes a tuple (the *dataset element*, ``cb_params.train_dataset_element``):

* a tuple is used as it is (the fast path), a list or named tuple becomes a tuple;
* a dict (or any mapping) becomes ``(*inputs, label)``: the inputs are the values of
  ``input_keys`` in that order (default: every key but ``label_key``, in the dict's
  order), the label is ``batch[label_key]``; ``label_key=None`` means no label;
* anything else (a lone tensor) becomes a 1-tuple.

With a loss function the last item of the element is the label: the network gets the
others (``network(*element[:-1])``) and the loss gets ``(outputs, element[-1])``.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from typing import Any

import torch

__all__ = ["dataset_size", "element_converter"]


def dataset_size(dataset: object, argname: str) -> int:
    """The number of batches per epoch; TypeError for a non re-iterable, ValueError if empty."""
    if dataset is None:
        raise ValueError(f"For 'Model', the argument '{argname}' must be a dataset, but got None")
    if isinstance(dataset, Iterator):
        raise TypeError(
            f"For 'Model', the argument '{argname}' must be re-iterable (a list of batches, a "
            f"DataLoader, ...), but got the one-shot iterator {type(dataset).__name__}"
        )
    try:
        size = len(dataset)  # type: ignore[arg-type]
    except TypeError:
        try:
            iterator = iter(dataset)  # type: ignore[call-overload]
        except TypeError:
            raise TypeError(
                f"For 'Model', the argument '{argname}' must be an iterable of batches, "
                f"but got {type(dataset).__name__}"
            ) from None
        size = sum(1 for _ in iterator)
    if size == 0:
        raise ValueError(f"For 'Model', the argument '{argname}' is empty (0 batches)")
    return size


def _check_keys(label_key: object, input_keys: object) -> tuple[str | None, tuple[str, ...]]:
    if label_key is not None and not isinstance(label_key, str):
        raise TypeError(
            "For 'Model', the argument 'label_key' must be a str or None, "
            f"but got {type(label_key).__name__} {label_key!r}"
        )
    if input_keys is None:
        return label_key, ()
    if isinstance(input_keys, str) or not isinstance(input_keys, Sequence):
        raise TypeError(
            "For 'Model', the argument 'input_keys' must be a list of str or None, "
            f"but got {type(input_keys).__name__} {input_keys!r}"
        )
    if not input_keys or not all(isinstance(key, str) for key in input_keys):
        raise ValueError(
            "For 'Model', the argument 'input_keys' must be a non-empty list of str, "
            f"but got {input_keys!r}"
        )
    return label_key, tuple(input_keys)


def element_converter(
    label_key: object, input_keys: object, device: torch.device | None = None
) -> Callable[[Any], tuple]:
    """A function batch -> element tuple (see the module docstring); with a non-CPU
    ``device`` the tensors are moved there (``non_blocking``)."""
    label, keys = _check_keys(label_key, input_keys)

    def from_mapping(batch: Mapping) -> tuple:
        names = keys or tuple(k for k in batch if k != label)
        try:
            items = tuple(batch[k] for k in names)
        except KeyError as exc:
            raise ValueError(
                f"For 'Model', input key {exc.args[0]!r} (argument 'input_keys') is not in the "
                f"batch; its keys are {list(batch)}"
            ) from None
        if label is None:
            return items
        if label not in batch:
            raise ValueError(
                f"For 'Model', the label key {label!r} (argument 'label_key') is not in the "
                f"batch; its keys are {list(batch)}"
            )
        return (*items, batch[label])

    def convert(batch: Any) -> tuple:
        if type(batch) is tuple:
            return batch
        if isinstance(batch, Mapping):
            return from_mapping(batch)
        if isinstance(batch, tuple | list):
            return tuple(batch)
        return (batch,)

    if device is None or device.type == "cpu":
        return convert

    def convert_to_device(batch: Any) -> tuple:
        return tuple(
            item.to(device, non_blocking=True) if isinstance(item, torch.Tensor) else item
            for item in convert(batch)
        )

    return convert_to_device
