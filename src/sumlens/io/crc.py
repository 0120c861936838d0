"""Masked CRC-32C, the checksum TFRecord-style framing stores (MindSpore and TensorBoard alike).

The mask rotates the CRC right by 15 bits and adds a constant, so that a CRC computed
over data that itself contains CRCs does not degenerate. The CRC itself is the
Castagnoli polynomial from the ``crc32c`` package (hardware-accelerated where the CPU
has it); plain zlib CRC-32 would not match what the writers store.
"""

from __future__ import annotations

try:  # the extension module itself: `import crc32c` also loads importlib.metadata (~25 ms)
    from crc32c._crc32c import crc32c
except ImportError:  # pragma: no cover - a future layout of the package
    from crc32c import crc32c

MASK_DELTA = 0xA282EAD8


def mask(crc: int) -> int:
    """Return the stored (masked) form of an unmasked CRC-32C value."""
    return ((((crc >> 15) | (crc << 17)) & 0xFFFFFFFF) + MASK_DELTA) & 0xFFFFFFFF


def unmask(masked: int) -> int:
    """Invert :func:`mask`."""
    rotated = (masked - MASK_DELTA) & 0xFFFFFFFF
    return ((rotated >> 17) | (rotated << 15)) & 0xFFFFFFFF


def masked_crc32c(data: bytes | bytearray | memoryview) -> int:
    """Masked CRC-32C of ``data``, as stored after a record's length and after its payload."""
    return mask(crc32c(data))
