"""Whole-file checkpoint encryption: a small versioned envelope around the safetensors bytes.

Layout (all integers little endian)::

    header  = b"MSPT" | version:u8 (=1) | mode:u8 (1 AES-GCM, 2 AES-CBC) | 0:u16 | salt:16
    AES-GCM = header | records...            record = nonce:12 | n:u32 | ciphertext+tag:n
    AES-CBC = header | records... | hmac:32  record = iv:16    | n:u32 | ciphertext:n

The payload is cut into chunks of at most 64 MiB, each its own record.

* AES-GCM uses ``key`` directly (16/24/32 bytes -> AES-128/192/256); every record is
  authenticated with the header, its index and a "last record" flag as associated data, so
  changed, reordered, dropped or appended records all fail.
* AES-CBC (PKCS#7 padded) is encrypt-then-MAC: HKDF-SHA256 (salt from the header) derives
  an AES key of the same length as ``key`` and a separate 32-byte HMAC-SHA256 key; the HMAC
  covers every byte before it and is checked before anything is decrypted.

Any failure (wrong key, one flipped byte, truncation) raises
:class:`~sumlens.train.checkpoint_errors.CheckpointIntegrityError`.
"""

from __future__ import annotations

import os
import struct
from collections.abc import Iterable, Iterator
from typing import BinaryIO

from cryptography.exceptions import InvalidSignature, InvalidTag
from cryptography.hazmat.primitives import hashes, hmac, padding
from cryptography.hazmat.primitives.ciphers import Cipher, algorithms, modes
from cryptography.hazmat.primitives.ciphers.aead import AESGCM
from cryptography.hazmat.primitives.kdf.hkdf import HKDF

from sumlens.train.checkpoint_errors import (
    CheckpointError,
    CheckpointFormatError,
    CheckpointIntegrityError,
)

__all__ = [
    "ENC_MODES",
    "MAGIC",
    "decrypt_payload",
    "encrypt_payload",
    "is_encrypted",
    "validate_key",
    "validate_mode",
]

MAGIC = b"MSPT"
VERSION = 1
ENC_MODES = ("AES-GCM", "AES-CBC")
_MODE_BYTE = {"AES-GCM": 1, "AES-CBC": 2}
_MODE_NAME = {v: k for k, v in _MODE_BYTE.items()}
_HEADER = struct.Struct("<4sBBH16s")
_LEN = struct.Struct("<I")
_AAD_TAIL = struct.Struct("<QB")
CHUNK_SIZE = 64 * 1024 * 1024
_NONCE = 12
_IV = 16
_TAG = 16
_MAC = 32
_KEY_SIZES = (16, 24, 32)
_HKDF_INFO = b"sumlens checkpoint AES-CBC + HMAC-SHA256 v1"


def validate_key(key: object, argname: str) -> bytes:
    """Return ``key`` as bytes, or raise TypeError/ValueError naming ``argname``."""
    if not isinstance(key, bytes | bytearray):
        raise TypeError(
            f"{argname} must be bytes of length 16, 24 or 32 (or None), got {type(key).__name__}"
        )
    if len(key) not in _KEY_SIZES:
        raise ValueError(
            f"{argname} must be 16, 24 or 32 bytes long (AES-128/192/256), got {len(key)} bytes"
        )
    return bytes(key)


def validate_mode(mode: object, argname: str) -> str:
    """Return ``mode`` if it is one of :data:`ENC_MODES`, else raise naming ``argname``."""
    if not isinstance(mode, str):
        raise TypeError(f"{argname} must be a str, one of {ENC_MODES}, got {type(mode).__name__}")
    if mode not in ENC_MODES:
        raise ValueError(f"{argname} must be one of {ENC_MODES}, got {mode!r}")
    return mode


def is_encrypted(head: bytes) -> bool:
    """True when ``head`` (the first bytes of a file) starts with the envelope magic."""
    return bytes(head[: len(MAGIC)]) == MAGIC


def _cbc_keys(key: bytes, salt: bytes) -> tuple[bytes, bytes]:
    material = HKDF(
        algorithm=hashes.SHA256(), length=len(key) + _MAC, salt=salt, info=_HKDF_INFO
    ).derive(key)
    return material[: len(key)], material[len(key) :]


def _chunks(pieces: Iterable[bytes | memoryview], size: int) -> Iterator[tuple[bytes, bool]]:
    """Cut the concatenation of ``pieces`` into ``size`` chunks; yield (chunk, is_last)."""
    pending: bytes | None = None
    buf: list[memoryview] = []
    have = 0
    for piece in pieces:
        view = memoryview(piece).cast("B")
        while len(view):
            take = min(size - have, len(view))
            buf.append(view[:take])
            have += take
            view = view[take:]
            if have == size:
                if pending is not None:
                    yield pending, False
                pending = b"".join(buf)
                buf, have = [], 0
    if have or pending is None:
        if pending is not None:
            yield pending, False
        yield b"".join(buf), True
    else:
        yield pending, True


def encrypt_payload(
    out: BinaryIO,
    pieces: Iterable[bytes | memoryview],
    key: bytes,
    mode: str,
    *,
    chunk_size: int = CHUNK_SIZE,
) -> None:
    """Write the envelope holding the concatenation of ``pieces`` to ``out``."""
    header = _HEADER.pack(MAGIC, VERSION, _MODE_BYTE[mode], 0, os.urandom(16))
    out.write(header)
    if mode == "AES-GCM":
        aead = AESGCM(key)
        for index, (chunk, last) in enumerate(_chunks(pieces, chunk_size)):
            nonce = os.urandom(_NONCE)
            sealed = aead.encrypt(nonce, chunk, header + _AAD_TAIL.pack(index, last))
            out.write(nonce)
            out.write(_LEN.pack(len(sealed)))
            out.write(sealed)
        return
    enc_key, mac_key = _cbc_keys(key, header[-16:])
    mac = hmac.HMAC(mac_key, hashes.SHA256())
    mac.update(header)
    for chunk, _last in _chunks(pieces, chunk_size):
        iv = os.urandom(_IV)
        padder = padding.PKCS7(128).padder()
        padded = padder.update(chunk) + padder.finalize()
        enc = Cipher(algorithms.AES(enc_key), modes.CBC(iv)).encryptor()
        sealed = enc.update(padded) + enc.finalize()
        record = iv + _LEN.pack(len(sealed))
        for part in (record, sealed):
            mac.update(part)
            out.write(part)
    out.write(mac.finalize())


def _damaged(source: str, why: str) -> CheckpointIntegrityError:
    return CheckpointIntegrityError(
        f"cannot decrypt checkpoint {source!r}: wrong dec_key or damaged/tampered file ({why})"
    )


def decrypt_payload(data: bytes | memoryview, key: bytes, mode: str, *, source: str) -> bytes:
    """Return the plaintext of an envelope, verifying it; ``source`` names the file in errors."""
    view = memoryview(data).cast("B")
    if len(view) < _HEADER.size:
        raise _damaged(source, "file shorter than the encryption header")
    magic, version, mode_byte, _reserved, salt = _HEADER.unpack_from(view)
    if magic != MAGIC:
        raise CheckpointFormatError(f"checkpoint {source!r} is not encrypted by sumlens")
    if version != VERSION:
        raise CheckpointFormatError(
            f"checkpoint {source!r} uses encryption envelope version {version}; "
            f"this sumlens reads version {VERSION}"
        )
    file_mode = _MODE_NAME.get(mode_byte)
    if file_mode is None:
        raise _damaged(source, f"unknown mode byte {mode_byte}")
    if file_mode != mode:
        raise CheckpointError(
            f"checkpoint {source!r} is encrypted with {file_mode}, but dec_mode={mode!r}"
        )
    header = bytes(view[: _HEADER.size])
    if mode == "AES-CBC":
        if len(view) < _HEADER.size + _MAC:
            raise _damaged(source, "file truncated")
        enc_key, mac_key = _cbc_keys(key, salt)
        mac = hmac.HMAC(mac_key, hashes.SHA256())
        mac.update(view[:-_MAC])
        try:
            mac.verify(bytes(view[-_MAC:]))
        except InvalidSignature:
            raise _damaged(source, "HMAC-SHA256 mismatch") from None
        body_end = len(view) - _MAC
        iv_len = _IV
    else:
        aead = AESGCM(key)
        body_end = len(view)
        iv_len = _NONCE
    out: list[bytes] = []
    pos = _HEADER.size
    index = 0
    while True:
        if pos + iv_len + _LEN.size > body_end:
            raise _damaged(source, "truncated record")
        iv = bytes(view[pos : pos + iv_len])
        (n,) = _LEN.unpack_from(view, pos + iv_len)
        start = pos + iv_len + _LEN.size
        end = start + n
        if end > body_end:
            raise _damaged(source, "record runs past the end of the file")
        last = end == body_end
        sealed = view[start:end]
        if mode == "AES-GCM":
            try:
                out.append(aead.decrypt(iv, sealed, header + _AAD_TAIL.pack(index, last)))
            except InvalidTag:
                raise _damaged(source, f"AES-GCM authentication failed on record {index}") from None
        else:
            if n % 16:
                raise _damaged(source, "ciphertext not a multiple of the block size")
            dec = Cipher(algorithms.AES(enc_key), modes.CBC(iv)).decryptor()
            padded = dec.update(sealed) + dec.finalize()
            unpadder = padding.PKCS7(128).unpadder()
            try:
                out.append(unpadder.update(padded) + unpadder.finalize())
            except ValueError:
                raise _damaged(source, "bad padding") from None
        pos = end
        index += 1
        if last:
            break
    return b"".join(out)
