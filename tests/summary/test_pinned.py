"""The pool of host buffers behind asynchronous device copies (``sumlens.summary.pinned``).

Run here with ordinary memory (``pin=False``): the bookkeeping is the same; the CUDA tests
(``test_cuda.py``) check that device copies reuse pinned buffers.
"""

from __future__ import annotations

import threading

import pytest
import torch

from sumlens.summary.pinned import (
    MAX_FREE_BYTES,
    POOLED_BYTES,
    SMALLEST_CLASS,
    PinnedPool,
    size_class,
)


@pytest.mark.parametrize(
    ("nbytes", "size"),
    [
        (0, SMALLEST_CLASS),
        (1, SMALLEST_CLASS),
        (512, 512),
        (513, 1024),
        (POOLED_BYTES, POOLED_BYTES),
    ],
)
def test_size_classes_are_powers_of_two(nbytes: int, size: int) -> None:
    assert size_class(nbytes) == size


def test_buffers_are_reused_by_size_class() -> None:
    pool = PinnedPool(pin=False)
    first = pool.take(4)
    assert first.numel() == SMALLEST_CLASS and first.dtype == torch.uint8
    pool.give_back(first)
    again = pool.take(100)
    assert again.data_ptr() == first.data_ptr() and pool.allocations == 1
    bigger = pool.take(600)  # another class: a new buffer
    assert bigger.numel() == 1024 and pool.allocations == 2
    pool.give_back(again)
    pool.give_back(bigger)
    assert pool.free_bytes == SMALLEST_CLASS + 1024


def test_free_buffers_stay_bounded() -> None:
    pool = PinnedPool(pin=False)
    buffers = [pool.take(POOLED_BYTES) for _ in range(MAX_FREE_BYTES // POOLED_BYTES + 5)]
    for buffer in buffers:
        pool.give_back(buffer)
    assert pool.free_bytes == MAX_FREE_BYTES


def test_threads_taking_and_giving_back_never_share_a_buffer() -> None:
    pool = PinnedPool(pin=False)
    seen: list[int] = []
    errors: list[str] = []

    def work(mark: int) -> None:
        for _ in range(2000):
            buffer = pool.take(64)
            buffer[0] = mark
            seen.append(buffer.data_ptr())
            if int(buffer[0]) != mark:
                errors.append("a buffer was handed to two threads")
            pool.give_back(buffer)

    threads = [threading.Thread(target=work, args=(mark,)) for mark in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors
    assert pool.allocations <= 4 and len(set(seen)) == pool.allocations
