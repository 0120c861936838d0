"""The numba engine of :func:`~sumlens.io.scalars.read_scalars`: one compiled pass per chunk.

A file is read in large chunks (with zero padding behind the data, so that varints and
fixed-width fields can be loaded without bounds checks) and each chunk goes through one
compiled kernel that

* frames records and verifies both CRCs (software slicing-by-8 CRC-32C), following the
  damage rules of :mod:`sumlens.io.framing` exactly (torn tail, bad payload CRC skipped
  and counted, bad length CRC resynchronised byte by byte);
* walks the protobuf fields of each good record by hand and writes every scalar into
  preallocated output arrays (tag id, step, wall time, value, record index);
* lists every record it cannot vouch for (anything but well-formed summary values, in
  MindSpore files also a value whose protobuf would not parse, whose tensor might not
  convert, or whose histogram counts or image sizes are negative) as ``(offset,
  length)``. Those records are decoded afterwards with the protobuf decoders of
  :mod:`sumlens.io.decode`, so their points and every count they cause
  (``skipped_plugins``, rejected records) are exactly those of the python engine.

When an output array or the tag table is full the kernel returns; Python grows it and
the kernel resumes at the record it stopped at. Tags live in a small hash table inside
the kernel (exact byte comparison); each distinct tag is decoded to ``str`` once.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from sumlens._numba import numba
from sumlens.io.decode import DECODERS, INDEXERS, PayloadError
from sumlens.io.events import Event
from sumlens.io.framing import HEADER_SIZE, OVERHEAD, ReadStats, valid_header_at
from sumlens.io.reader import NotAnEventFileError
from sumlens.io.storage import LOCAL_STORAGE, Storage

if sys.byteorder != "little":  # pragma: no cover - the loads below assume little-endian
    raise ImportError("sumlens.io._fastscan needs a little-endian machine")

CHUNK_SIZE = 16 * 1024 * 1024
"""Bytes read at a time; a record larger than this gets a chunk of its own size."""
PADDING = 16
"""Zero bytes behind each chunk's data: unchecked loads never run past the buffer."""

_KIND_CODES = {"summary": 0, "tensorboard": 1, "lineage": 2}

# Kernel results per record.
_OK = 0
_FALLBACK = 1
_PTS_FULL = 2
_TAGS_FULL = 3
# What one summary value is, for the event loop: a scalar point to write, a value the
# kernel vouches for and leaves out (MindSpore's other values), or one for protobuf.
_V_POINT = 0
_V_SKIP = 1
_V_FALLBACK = 2
# Kernel results per call.
_DONE = 0
_GROW_POINTS = 1
_GROW_FALLBACK = 2
_GROW_TAGS = 3

# Slots of the int64 state array shared by the kernel and Python.
_S_POINTS, _S_FALLBACK, _S_TAGS, _S_TAG_BYTES = 0, 1, 2, 3
_S_RECORDS, _S_CORRUPT, _S_SKIPPED, _S_RECORD_INDEX = 4, 5, 6, 7
_S_WANT_OTHER = 8  # 1: MindSpore records holding other values go to protobuf too
_STATE_SIZE = 9

# Slots of the descriptor the kernel builds: addresses and sizes of everything it uses.
_D_TAG_BYTES, _D_TAG_BYTES_CAP, _D_TAG_START, _D_TAG_LEN, _D_TAG_BAD = 0, 1, 2, 3, 4
_D_TAG_CAP, _D_SLOTS, _D_SLOTS_SIZE, _D_STATE = 5, 6, 7, 8
_D_PT_TAG, _D_PT_STEP, _D_PT_WALL, _D_PT_VAL, _D_PT_REC, _D_PT_CAP = 9, 10, 11, 12, 13, 14
_D_SCHEMA, _D_VALUE_MSG, _D_STACK, _D_STACK_SIZE = 15, 16, 17, 18
_D_SIZE = 19

_MASK_DELTA = 0xA282EAD8
_M32 = 0xFFFFFFFF


def _crc_tables() -> np.ndarray:
    """Slicing-by-8 tables for reflected CRC-32C, flattened to 8 x 256 uint32."""
    poly = 0x82F63B78
    table = np.zeros((8, 256), dtype=np.uint32)
    for n in range(256):
        c = n
        for _ in range(8):
            c = (c >> 1) ^ poly if c & 1 else c >> 1
        table[0, n] = c
    for k in range(1, 8):
        prev = table[k - 1]
        table[k] = (prev >> 8) ^ table[0, prev & 0xFF]
    return table.reshape(-1)


_CRC_TABLE = _crc_tables()

# ---------------------------------------------------------------- unchecked memory
#
# The kernel turns every array into its data address once; helpers get plain int64
# addresses (numba would otherwise count references on each array passed to each helper,
# which cost more than the parsing) and load or store through these intrinsics, unaligned
# and unchecked: callers keep offsets inside the arrays (the chunk has zero padding).


def _address_impl(typingctx, array):
    def codegen(context, builder, signature, args):
        ary = context.make_array(signature.args[0])(context, builder, args[0])
        return builder.ptrtoint(ary.data, ir.IntType(64))

    return types.int64(array), codegen


_address = intrinsic(_address_impl)


def _pointer(builder, address, offset):
    i64 = ir.IntType(64)
    if offset.type != i64:
        offset = builder.sext(offset, i64)
    if address.type != i64:
        address = builder.sext(address, i64)
    return builder.add(address, offset)


def _loader(nbtype: types.Type, lltype: ir.Type):
    """An intrinsic loading ``lltype`` at ``address + offset`` (bytes) as ``nbtype``."""

    def impl(typingctx, address, offset):
        def codegen(context, builder, signature, args):
            ptr = builder.inttoptr(_pointer(builder, *args), lltype.as_pointer())
            value = builder.load(ptr, align=1)
            if isinstance(lltype, ir.IntType) and lltype.width < 64:
                value = builder.zext(value, ir.IntType(64))
            return value

        return nbtype(address, offset), codegen

    return intrinsic(impl)


def _storer(nbtype: types.Type, lltype: ir.Type):
    """An intrinsic storing a value (cast to ``nbtype``) at ``address + offset`` (bytes)."""

    def impl(typingctx, address, offset, value):
        def codegen(context, builder, signature, args):
            ptr = builder.inttoptr(_pointer(builder, args[0], args[1]), lltype.as_pointer())
            cast = context.cast(builder, args[2], signature.args[2], nbtype)
            builder.store(cast, ptr, align=1)
            return context.get_dummy_value()

        return types.none(address, offset, value), codegen

    return intrinsic(impl)


_ld_u8 = _loader(types.int64, ir.IntType(8))
_ld_u32 = _loader(types.int64, ir.IntType(32))
_ld_i64 = _loader(types.int64, ir.IntType(64))
_ld_f32 = _loader(types.float32, ir.FloatType())
_ld_f64 = _loader(types.float64, ir.DoubleType())
_st_u8 = _storer(types.uint8, ir.IntType(8))
_st_i32 = _storer(types.int32, ir.IntType(32))
_st_i64 = _storer(types.int64, ir.IntType(64))
_st_f64 = _storer(types.float64, ir.DoubleType())

_jit = numba.njit(cache=True, nogil=True)
_inline = numba.njit(cache=True, nogil=True, inline="always")

_BAD = 1 << 62
"""Position a malformed varint returns: past every message end."""
_SCALARS = int.from_bytes(b"scalars", "little")

# ----------------------------------------------------------------------- primitives


@_inline
def _crc32c(buf, pos, n, table):
    crc = np.int64(_M32)
    while n >= 8:
        word = _ld_i64(buf, pos)
        lo = (word ^ crc) & _M32
        hi = (word >> 32) & _M32
        crc = (
            _ld_u32(table, 4 * (1792 + (lo & 0xFF)))
            ^ _ld_u32(table, 4 * (1536 + ((lo >> 8) & 0xFF)))
            ^ _ld_u32(table, 4 * (1280 + ((lo >> 16) & 0xFF)))
            ^ _ld_u32(table, 4 * (1024 + (lo >> 24)))
            ^ _ld_u32(table, 4 * (768 + (hi & 0xFF)))
            ^ _ld_u32(table, 4 * (512 + ((hi >> 8) & 0xFF)))
            ^ _ld_u32(table, 4 * (256 + ((hi >> 16) & 0xFF)))
            ^ _ld_u32(table, 4 * (hi >> 24))
        )
        pos += 8
        n -= 8
    while n > 0:
        crc = _ld_u32(table, 4 * ((crc ^ _ld_u8(buf, pos)) & 0xFF)) ^ (crc >> 8)
        pos += 1
        n -= 1
    return crc ^ _M32


@_inline
def _masked(crc):
    return ((((crc >> 15) | (crc << 17)) & _M32) + _MASK_DELTA) & _M32


@_inline
def _header_ok(buf, pos, table):
    return _masked(_crc32c(buf, pos, 8, table)) == _ld_u32(buf, pos + 8)


@_inline
def _varint(buf, pos):
    """(value, next position); next position is ``_BAD`` for a varint of over 10 bytes."""
    b = _ld_u8(buf, pos)
    if b < 0x80:
        return b, pos + 1
    result = b & 0x7F
    shift = 7
    pos += 1
    while True:
        b = _ld_u8(buf, pos)
        pos += 1
        if shift == 63:
            if b > 1:
                return result, _BAD
            return result | (b << 63), pos
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return result, pos
        shift += 7


@_jit
def _utf8_ok(buf, pos, n):
    """Strict UTF-8 (no overlongs, surrogates or code points past U+10FFFF)."""
    end = pos + n
    while pos < end:
        b = _ld_u8(buf, pos)
        if b < 0x80:
            pos += 1
            continue
        if 0xC2 <= b <= 0xDF:
            need, lo, hi = 1, 0x80, 0xBF
        elif b == 0xE0:
            need, lo, hi = 2, 0xA0, 0xBF
        elif 0xE1 <= b <= 0xEC or b == 0xEE or b == 0xEF:
            need, lo, hi = 2, 0x80, 0xBF
        elif b == 0xED:
            need, lo, hi = 2, 0x80, 0x9F
        elif b == 0xF0:
            need, lo, hi = 3, 0x90, 0xBF
        elif 0xF1 <= b <= 0xF3:
            need, lo, hi = 3, 0x80, 0xBF
        elif b == 0xF4:
            need, lo, hi = 3, 0x80, 0x8F
        else:
            return False
        if end - pos <= need:
            return False
        c = _ld_u8(buf, pos + 1)
        if c < lo or c > hi:
            return False
        for k in range(2, need + 1):
            c = _ld_u8(buf, pos + k)
            if c < 0x80 or c > 0xBF:
                return False
        pos += need + 1
    return True


# ------------------------------------------------------------------------ tag table


@_inline
def _get(d, slot):
    return _ld_i64(d, 8 * slot)


@_inline
def _tag_id(buf, pos, n, d):
    """Id of the tag ``buf[pos:pos+n]``: -1 when the table is full, -2 for bad UTF-8."""
    h = np.int64(-3750763034362895579)  # FNV-1a offset basis
    for k in range(n):
        h = (h ^ _ld_u8(buf, pos + k)) * 1099511628211
    slots = _get(d, _D_SLOTS)
    size = _get(d, _D_SLOTS_SIZE)
    tag_bytes = _get(d, _D_TAG_BYTES)
    mask = size - 1
    slot = h & mask
    while True:
        entry = _ld_i64(slots, 8 * slot)
        if entry == 0:
            break
        tid = entry - 1
        if _ld_i64(_get(d, _D_TAG_LEN), 8 * tid) == n:
            start = tag_bytes + _ld_i64(_get(d, _D_TAG_START), 8 * tid)
            same = True
            for k in range(n):
                if _ld_u8(start, k) != _ld_u8(buf, pos + k):
                    same = False
                    break
            if same:
                return -2 if _ld_u8(_get(d, _D_TAG_BAD), tid) else tid
        slot = (slot + 1) & mask
    return _new_tag(buf, pos, n, d, slot)


@_jit
def _new_tag(buf, pos, n, d, slot):
    """Insert a tag :func:`_tag_id` did not find (at hash slot ``slot``)."""
    state = _get(d, _D_STATE)
    count = _ld_i64(state, 8 * _S_TAGS)
    used = _ld_i64(state, 8 * _S_TAG_BYTES)
    if (
        (count + 1) * 2 > _get(d, _D_SLOTS_SIZE)
        or count >= _get(d, _D_TAG_CAP)
        or used + n > _get(d, _D_TAG_BYTES_CAP)
    ):
        return -1
    tag_bytes = _get(d, _D_TAG_BYTES)
    for k in range(n):
        _st_u8(tag_bytes, used + k, _ld_u8(buf, pos + k))
    _st_i64(_get(d, _D_TAG_START), 8 * count, used)
    _st_i64(_get(d, _D_TAG_LEN), 8 * count, n)
    bad = not _utf8_ok(buf, pos, n)
    _st_u8(_get(d, _D_TAG_BAD), count, 1 if bad else 0)
    _st_i64(_get(d, _D_SLOTS), 8 * slot, count + 1)
    _st_i64(state, 8 * _S_TAGS, count + 1)
    _st_i64(state, 8 * _S_TAG_BYTES, used + n)
    return -2 if bad else count


@_jit
def _rehash(tag_bytes, tag_start, tag_len, count, slots):
    mask = slots.size - 1
    for tid in range(count):
        h = np.int64(-3750763034362895579)
        start = tag_start[tid]
        for k in range(tag_len[tid]):
            h = (h ^ np.int64(tag_bytes[start + k])) * 1099511628211
        slot = h & mask
        while slots[slot] != 0:
            slot = (slot + 1) & mask
        slots[slot] = tid + 1


# ------------------------------------------------------- MindSpore message checking

# Field codes of the schema table: what a field number of a message type must hold.
_F_NONE, _F_VARINT, _F_FIXED64, _F_FIXED32, _F_BYTES = 0, 1, 2, 3, 4
_F_REP_VARINT, _F_REP_FIXED32, _F_REP_FIXED64 = 5, 6, 7
_F_COUNT, _F_SIZE32 = 8, 9  # varints the decoders refuse when negative (as int64, as int32)
_F_MSG = 16  # + message id
_MAX_FIELD = 16

# MindSpore messages a summary value can hold (besides scalars), by id.
_MS_IMAGE, _MS_HISTOGRAM, _MS_BUCKET, _MS_TENSOR = 0, 1, 2, 3
_MS_LANDSCAPE, _MS_POINT, _MS_LOSS_PATH, _MS_LANDSCAPE_META = 4, 5, 6, 7


def _ms_schema() -> np.ndarray:
    schema = np.zeros((8, _MAX_FIELD), dtype=np.int64)
    fields = {
        _MS_IMAGE: {1: _F_SIZE32, 2: _F_SIZE32, 3: _F_VARINT, 4: _F_BYTES},
        _MS_HISTOGRAM: {
            1: _F_MSG + _MS_BUCKET,
            2: _F_COUNT,
            3: _F_COUNT,
            4: _F_COUNT,
            5: _F_FIXED64,
            6: _F_FIXED64,
            7: _F_FIXED64,
            8: _F_COUNT,
        },
        _MS_BUCKET: {1: _F_FIXED64, 2: _F_FIXED64, 3: _F_COUNT},
        _MS_TENSOR: {
            1: _F_REP_VARINT,
            2: _F_VARINT,
            3: _F_REP_FIXED32,
            4: _F_REP_VARINT,
            5: _F_REP_VARINT,
            6: _F_REP_FIXED64,
            7: _F_REP_VARINT,
            8: _F_BYTES,
        },
        _MS_LANDSCAPE: {
            1: _F_MSG + _MS_POINT,
            2: _F_MSG + _MS_LOSS_PATH,
            3: _F_MSG + _MS_LANDSCAPE_META,
            4: _F_MSG + _MS_POINT,
        },
        _MS_POINT: {1: _F_MSG + _MS_TENSOR, 2: _F_MSG + _MS_TENSOR, 3: _F_MSG + _MS_TENSOR},
        _MS_LOSS_PATH: {1: _F_REP_VARINT, 2: _F_MSG + _MS_POINT},
        _MS_LANDSCAPE_META: {1: _F_BYTES, 2: _F_BYTES, 3: _F_VARINT},
    }
    for msg, codes in fields.items():
        for number, code in codes.items():
            schema[msg, number] = code
    return schema


_MS_SCHEMA = _ms_schema()
# Value field number -> message id of the non-scalar MindSpore values.
_MS_VALUE_MSG = np.full(_MAX_FIELD, -1, dtype=np.int64)
_MS_VALUE_MSG[4] = _MS_IMAGE
_MS_VALUE_MSG[8] = _MS_TENSOR
_MS_VALUE_MSG[9] = _MS_HISTOGRAM
_MS_VALUE_MSG[10] = _MS_LANDSCAPE


@_jit
def _packed_varints(buf, pos, end):
    """Number of varints filling ``buf[pos:end]`` exactly, or -1."""
    count = 0
    while pos < end:
        _, pos = _varint(buf, pos)
        count += 1
    return count if pos == end else -1


@_jit
def _message_ok(buf, pos, end, msg, d):
    """Whether ``buf[pos:end]`` is a message ``msg`` protobuf surely parses and the decoders
    surely accept (conservative): no count or image size is negative."""
    schema = _get(d, _D_SCHEMA)
    stack = _get(d, _D_STACK)
    stack_size = _get(d, _D_STACK_SIZE)
    depth = 0
    while True:
        if pos >= end:
            if pos != end:
                return False
            if depth == 0:
                return True
            depth -= 1
            end = _ld_i64(stack, 16 * depth)
            msg = _ld_i64(stack, 16 * depth + 8)
            continue
        key, pos = _varint(buf, pos)
        if pos >= end:
            return False
        number = key >> 3
        wire = key & 7
        if number <= 0 or number >= _MAX_FIELD:
            return False
        code = _ld_i64(schema, 8 * (msg * _MAX_FIELD + number))
        if wire == 0:
            if (
                code != _F_VARINT
                and code != _F_REP_VARINT
                and code != _F_COUNT
                and code != _F_SIZE32
            ):
                return False
            value, pos = _varint(buf, pos)
            if code == _F_COUNT and value < 0:  # a negative count (int64)
                return False
            if code == _F_SIZE32 and (value >> 31) & 1:  # a negative size once read as int32
                return False
        elif wire == 1:
            if code != _F_FIXED64 and code != _F_REP_FIXED64:
                return False
            pos += 8
        elif wire == 5:
            if code != _F_FIXED32 and code != _F_REP_FIXED32:
                return False
            pos += 4
        elif wire == 2:
            n, pos = _varint(buf, pos)
            if n < 0 or n > end - pos:
                return False
            if code == _F_BYTES:
                pos += n
            elif code >= _F_MSG:
                if 2 * depth + 2 > stack_size:
                    return False
                _st_i64(stack, 16 * depth, end)
                _st_i64(stack, 16 * depth + 8, msg)
                depth += 1
                end = pos + n
                msg = code - _F_MSG
            elif code == _F_REP_VARINT:
                if _packed_varints(buf, pos, pos + n) < 0:
                    return False
                pos += n
            elif code == _F_REP_FIXED32:
                if n % 4:
                    return False
                pos += n
            elif code == _F_REP_FIXED64:
                if n % 8:
                    return False
                pos += n
            else:
                return False
        else:
            return False


_MS_MAX_DIMS = 32
""":data:`sumlens.io.decode.MAX_DIMS`, spelled out: numba's cache sees only this file."""
_MS_MAX_DIM = 1 << 40
_MS_MAX_SIZE = 1 << 59
"""Largest product of non-zero dims the kernel vouches for (8-byte items: 2**62 bytes)."""
_MS_LAST_DTYPE = 47
"""The last MindSpore ``DataType``; protobuf keeps other values as unknown fields."""


@_jit
def _ms_tensor_ok(buf, pos, end):
    """Whether a (well-formed) MindSpore TensorProto surely converts (conservative).

    True only where :func:`~sumlens.io.decode.ms_tensor_to_array` cannot refuse it: at
    most 32 dims, none negative or huge, values filling the shape exactly, and floats
    that need no range check (``float_data`` as float32 or float64, ``double_data`` as
    float64). Anything else goes to protobuf.
    """
    size = np.int64(1)  # product of the non-zero dims
    empty = False
    ndims = 0
    dtype = np.int64(0)
    counts = np.zeros(8, dtype=np.int64)  # by field number: 3 float, 4 int32, 5 int64 ...
    raw = False
    while pos < end:
        key, pos = _varint(buf, pos)
        number = key >> 3
        wire = key & 7
        if number == 1:
            n = 1
            if wire == 2:
                length, pos = _varint(buf, pos)
                n = _packed_varints(buf, pos, pos + length)
            for _ in range(n):
                dim, pos = _varint(buf, pos)
                ndims += 1
                if dim < 0 or dim > _MS_MAX_DIM or ndims > _MS_MAX_DIMS:
                    return False
                if dim == 0:
                    empty = True
                elif dim > _MS_MAX_SIZE // size:
                    return False
                else:
                    size *= dim
        elif number == 2:
            dtype, pos = _varint(buf, pos)
            if dtype < 0 or dtype > _MS_LAST_DTYPE:
                return False
        elif number == 8:
            n, pos = _varint(buf, pos)
            raw = n > 0  # optional bytes: the last one counts
            pos += n
        elif wire == 2:
            n, pos = _varint(buf, pos)
            if number == 3:
                counts[3] += n // 4
            elif number == 6:
                counts[6] += n // 8
            else:
                counts[number] += _packed_varints(buf, pos, pos + n)
            pos += n
        else:
            counts[number] += 1
            if wire == 0:
                _, pos = _varint(buf, pos)
            else:
                pos += 4 if wire == 5 else 8
    count = 0 if empty else size
    for number in (3, 6, 5, 4, 7):  # the order ms_tensor_to_array picks them in
        if counts[number]:
            if counts[number] != count:
                return False
            if number == 3:  # float32, by data_type or by default (0 and types numpy lacks)
                return dtype == 0 or dtype >= 11
            return number == 6 and dtype == 12
    if raw:
        return False  # raw_data: let protobuf and numpy decide
    return count == 0


# ------------------------------------------------------------------- record parsing


@_inline
def _emit(d, n, tid, step, wall, value, rec):
    _st_i32(_get(d, _D_PT_TAG), 4 * n, tid)
    _st_i64(_get(d, _D_PT_STEP), 8 * n, step)
    _st_f64(_get(d, _D_PT_WALL), 8 * n, wall)
    _st_f64(_get(d, _D_PT_VAL), 8 * n, value)
    _st_i64(_get(d, _D_PT_REC), 8 * n, rec)


@_inline
def _value_msg(d, number):
    return _ld_i64(_get(d, _D_VALUE_MSG), 8 * number)


@_jit
def _event_header(buf, pos, end):
    """(status, wall_time, step, summary start, summary end) of an Event holding a Summary."""
    wall = 0.0
    step = np.int64(0)
    start = np.int64(-1)
    stop = np.int64(-1)
    while pos < end:
        key, pos = _varint(buf, pos)
        if pos >= end:
            return _FALLBACK, wall, step, start, stop
        if key == 9:
            wall = _ld_f64(buf, pos)
            pos += 8
        elif key == 16:
            step, pos = _varint(buf, pos)
        elif key == 42 and start < 0:
            n, pos = _varint(buf, pos)
            if n < 0 or n > end - pos:
                return _FALLBACK, wall, step, start, stop
            start = pos
            stop = pos + n
            pos = stop
        else:
            return _FALLBACK, wall, step, start, stop
    if pos != end or start < 0:
        return _FALLBACK, wall, step, start, stop
    return _OK, wall, step, start, stop


@_inline
def _ms_value(buf, pos, stop, d):
    """(verdict, tag position, tag length, scalar) of one MindSpore ``Summary.Value``."""
    tag_pos = np.int64(-1)
    tag_n = np.int64(0)
    kinds = 0
    scalar = False
    value = np.float32(0.0)
    while pos < stop:
        key, pos = _varint(buf, pos)
        if pos >= stop:
            return _V_FALLBACK, tag_pos, tag_n, 0.0
        if key == 10 and tag_pos < 0:
            tag_n, pos = _varint(buf, pos)
            if tag_n < 0 or tag_n > stop - pos:
                return _V_FALLBACK, tag_pos, tag_n, 0.0
            tag_pos = pos
            pos += tag_n
        elif key == 29:
            value = _ld_f32(buf, pos)
            pos += 4
            kinds += 1
            scalar = True
        elif (key & 7) == 2 and 4 <= (key >> 3) <= 10 and _value_msg(d, key >> 3) >= 0:
            msg = _value_msg(d, key >> 3)
            length, pos = _varint(buf, pos)
            if length < 0 or length > stop - pos:
                return _V_FALLBACK, tag_pos, tag_n, 0.0
            if not _message_ok(buf, pos, pos + length, msg, d):
                return _V_FALLBACK, tag_pos, tag_n, 0.0
            if msg == _MS_TENSOR and not _ms_tensor_ok(buf, pos, pos + length):
                return _V_FALLBACK, tag_pos, tag_n, 0.0
            pos += length
            kinds += 1
        else:
            return _V_FALLBACK, tag_pos, tag_n, 0.0
    if pos != stop or kinds != 1 or tag_pos < 0:
        return _V_FALLBACK, tag_pos, tag_n, 0.0
    if scalar:
        return _V_POINT, tag_pos, tag_n, np.float64(value)
    if (
        _ld_i64(_get(d, _D_STATE), 8 * _S_WANT_OTHER) != 0  # the caller wants the value
        or not _utf8_ok(buf, tag_pos, tag_n)  # protobuf refuses the record: it decides
    ):
        return _V_FALLBACK, tag_pos, tag_n, 0.0
    return _V_SKIP, tag_pos, tag_n, 0.0


@_jit
def _utf8_field(buf, pos, end):
    """Position after a proto3 string field's length and bytes (``_BAD`` unless valid)."""
    n, pos = _varint(buf, pos)
    if n < 0 or n > end - pos or not _utf8_ok(buf, pos, n):
        return _BAD
    return pos + n


@_jit
def _tb_metadata(buf, pos, end):
    """(parses, plugin is "scalars") for a SummaryMetadata, conservatively."""
    scalars = False
    plugin_seen = False
    while pos < end:
        key, pos = _varint(buf, pos)
        if pos >= end:
            return False, False
        if key == 18 or key == 26:  # display_name, summary_description
            pos = _utf8_field(buf, pos, end)
        elif key == 32:  # data_class
            _, pos = _varint(buf, pos)
        elif key == 10 and not plugin_seen:  # plugin_data
            plugin_seen = True
            n, pos = _varint(buf, pos)
            if n < 0 or n > end - pos:
                return False, False
            stop = pos + n
            name_seen = False
            while pos < stop:
                key, pos = _varint(buf, pos)
                if pos >= stop:
                    return False, False
                if key == 10 and not name_seen:  # plugin_name
                    name_seen = True
                    n, pos = _varint(buf, pos)
                    if n < 0 or n > stop - pos or not _utf8_ok(buf, pos, n):
                        return False, False
                    scalars = n == 7 and _ld_i64(buf, pos) & 0xFFFFFFFFFFFFFF == _SCALARS
                    pos += n
                elif key == 18:  # content
                    n, pos = _varint(buf, pos)
                    if n < 0 or n > stop - pos:
                        return False, False
                    pos += n
                else:
                    return False, False
            if pos != stop:
                return False, False
        else:
            return False, False
    return pos == end, scalars


@_jit
def _tb_scalar_tensor(buf, pos, end):
    """(ok, value) of a TF2 scalar TensorProto: float/double, shape [], one value."""
    dtype = np.int64(0)
    content = np.int64(-1)
    content_n = np.int64(0)
    floats = np.int64(-1)
    floats_n = np.int64(0)
    doubles = np.int64(-1)
    doubles_n = np.int64(0)
    while pos < end:
        key, pos = _varint(buf, pos)
        if pos >= end:
            return False, 0.0
        if key == 8 or key == 24:  # dtype, version_number
            value, pos = _varint(buf, pos)
            if key == 8:
                dtype = value
        elif key == 18:  # tensor_shape: no dims allowed
            n, pos = _varint(buf, pos)
            if n < 0 or n > end - pos:
                return False, 0.0
            stop = pos + n
            while pos < stop:
                key, pos = _varint(buf, pos)
                if key != 24 or pos >= stop:  # only unknown_rank
                    return False, 0.0
                _, pos = _varint(buf, pos)
            if pos != stop:
                return False, 0.0
        elif key == 34 or key == 42 or key == 50:
            n, pos = _varint(buf, pos)
            if n < 0 or n > end - pos:
                return False, 0.0
            if key == 34 and content < 0:
                content, content_n = pos, n
            elif key == 42 and floats < 0:
                floats, floats_n = pos, n
            elif key == 50 and doubles < 0:
                doubles, doubles_n = pos, n
            else:
                return False, 0.0
            pos += n
        else:
            return False, 0.0
    if pos != end:
        return False, 0.0
    if dtype == 1:
        if content_n > 0:
            if content_n == 4:
                return True, np.float64(_ld_f32(buf, content))
        elif floats_n == 4:
            return True, np.float64(_ld_f32(buf, floats))
    elif dtype == 2:
        if content_n > 0:
            if content_n == 8:
                return True, _ld_f64(buf, content)
        elif floats_n == 0 and doubles_n == 8:
            return True, _ld_f64(buf, doubles)
    return False, 0.0


@_inline
def _tb_value(buf, pos, stop, d):
    """(verdict, tag position, tag length, scalar) of one TensorBoard ``Summary.Value``
    (``d`` unused: the readers of both formats take the same arguments)."""
    tag_pos, tag_n = np.int64(-1), np.int64(0)
    meta, meta_n = np.int64(-1), np.int64(0)
    tensor, tensor_n = np.int64(-1), np.int64(0)
    kinds = 0
    value = 0.0
    while pos < stop:
        key, pos = _varint(buf, pos)
        if pos >= stop:
            return _V_FALLBACK, tag_pos, tag_n, 0.0
        if key == 21:  # simple_value
            value = np.float64(_ld_f32(buf, pos))
            pos += 4
            kinds += 1
        elif key == 10 or key == 66 or key == 74:
            m, pos = _varint(buf, pos)
            if m < 0 or m > stop - pos:
                return _V_FALLBACK, tag_pos, tag_n, 0.0
            if key == 10 and tag_pos < 0:
                tag_pos, tag_n = pos, m
            elif key == 66:
                tensor, tensor_n = pos, m
                kinds += 1
            elif key == 74 and meta < 0:
                meta, meta_n = pos, m
            else:
                return _V_FALLBACK, tag_pos, tag_n, 0.0
            pos += m
        else:
            return _V_FALLBACK, tag_pos, tag_n, 0.0
    if pos != stop or kinds != 1 or tag_n <= 0:
        return _V_FALLBACK, tag_pos, tag_n, 0.0
    if meta >= 0:
        ok, scalars = _tb_metadata(buf, meta, meta + meta_n)
        if not ok:
            return _V_FALLBACK, tag_pos, tag_n, 0.0
        if tensor >= 0:
            if not scalars:
                return _V_FALLBACK, tag_pos, tag_n, 0.0
            ok, value = _tb_scalar_tensor(buf, tensor, tensor + tensor_n)
            if not ok:
                return _V_FALLBACK, tag_pos, tag_n, 0.0
    elif tensor >= 0:
        return _V_FALLBACK, tag_pos, tag_n, 0.0
    return _V_POINT, tag_pos, tag_n, value


def _event_kernel(read_value):
    """The kernel of one event of a file whose summary values ``read_value`` reads
    (:func:`_ms_value` or :func:`_tb_value`), compiled for that reader alone: one loop over
    the values serves both formats, without a branch per value."""

    @_jit
    def event(buf, pos, end, rec, npts, d):
        """(status, points written) for one event."""
        status, wall, step, pos, end = _event_header(buf, pos, end)
        if status != _OK:
            return _FALLBACK, npts
        n = npts
        while pos < end:
            key, pos = _varint(buf, pos)
            if key != 10:
                return _FALLBACK, npts
            length, pos = _varint(buf, pos)
            if length < 0 or length > end - pos:
                return _FALLBACK, npts
            stop = pos + length
            verdict, tag_pos, tag_n, value = read_value(buf, pos, stop, d)
            if verdict == _V_FALLBACK:
                return _FALLBACK, npts
            pos = stop
            if verdict == _V_POINT:
                tid = _tag_id(buf, tag_pos, tag_n, d)
                if tid == -1:
                    return _TAGS_FULL, npts
                if tid == -2:
                    return _FALLBACK, npts
                if n >= _get(d, _D_PT_CAP):
                    return _PTS_FULL, npts
                _emit(d, n, tid, step, wall, value, rec)
                n += 1
        if pos != end:
            return _FALLBACK, npts
        return _OK, n

    return event


_ms_event = _event_kernel(_ms_value)
_tb_event = _event_kernel(_tb_value)


# --------------------------------------------------------------------------- kernel


@_jit
def _scan(
    buf,
    pos,
    end,
    kind,
    table,
    pt_tag,
    pt_step,
    pt_wall,
    pt_val,
    pt_rec,
    fb_off,
    fb_len,
    fb_rec,
    tag_bytes,
    tag_start,
    tag_len,
    tag_bad,
    slots,
    state,
    schema,
    value_msg,
    stack,
):
    """Scan ``buf[pos:end]``; return (resume offset, why it returned)."""
    desc = np.empty(_D_SIZE, dtype=np.int64)
    desc[_D_TAG_BYTES] = _address(tag_bytes)
    desc[_D_TAG_BYTES_CAP] = tag_bytes.size
    desc[_D_TAG_START] = _address(tag_start)
    desc[_D_TAG_LEN] = _address(tag_len)
    desc[_D_TAG_BAD] = _address(tag_bad)
    desc[_D_TAG_CAP] = min(tag_start.size, tag_len.size, tag_bad.size)
    desc[_D_SLOTS] = _address(slots)
    desc[_D_SLOTS_SIZE] = slots.size
    desc[_D_STATE] = _address(state)
    desc[_D_PT_TAG] = _address(pt_tag)
    desc[_D_PT_STEP] = _address(pt_step)
    desc[_D_PT_WALL] = _address(pt_wall)
    desc[_D_PT_VAL] = _address(pt_val)
    desc[_D_PT_REC] = _address(pt_rec)
    desc[_D_PT_CAP] = min(pt_tag.size, pt_step.size, pt_wall.size, pt_val.size, pt_rec.size)
    desc[_D_SCHEMA] = _address(schema)
    desc[_D_VALUE_MSG] = _address(value_msg)
    desc[_D_STACK] = _address(stack)
    desc[_D_STACK_SIZE] = stack.size
    d = _address(desc)
    data = _address(buf)
    crc_table = _address(table)
    npts = state[_S_POINTS]
    nfb = state[_S_FALLBACK]
    records = state[_S_RECORDS]
    corrupt = state[_S_CORRUPT]
    skipped = state[_S_SKIPPED]
    rec = state[_S_RECORD_INDEX]
    why = _DONE
    while end - pos >= 12:
        if not _header_ok(data, pos, crc_table):
            start = pos
            pos += 1
            while pos <= end - 12 and not _header_ok(data, pos, crc_table):
                pos += 1
            skipped += pos - start
            continue
        length = _ld_i64(data, pos)
        payload = pos + 12
        if length < 0 or length > end - payload - 4:
            break
        crc = _masked(_crc32c(data, payload, length, crc_table))
        if crc != _ld_u32(data, payload + length):
            corrupt += 1
            pos = payload + length + 4
            continue
        if kind == 0:
            result, written = _ms_event(data, payload, payload + length, rec, npts, d)
        elif kind == 1:
            result, written = _tb_event(data, payload, payload + length, rec, npts, d)
        else:
            result, written = _FALLBACK, npts
        if result == _PTS_FULL:
            why = _GROW_POINTS
            break
        if result == _TAGS_FULL:
            why = _GROW_TAGS
            break
        if result == _FALLBACK:
            if nfb >= fb_off.size:
                why = _GROW_FALLBACK
                break
            fb_off[nfb] = payload
            fb_len[nfb] = length
            fb_rec[nfb] = rec
            nfb += 1
        else:
            npts = written
        records += 1
        rec += 1
        pos = payload + length + 4
    state[_S_POINTS] = npts
    state[_S_FALLBACK] = nfb
    state[_S_RECORDS] = records
    state[_S_CORRUPT] = corrupt
    state[_S_SKIPPED] = skipped
    state[_S_RECORD_INDEX] = rec
    return pos, why


@_jit
def _group(pt_tag, pt_step, pt_wall, pt_val, pt_rec, n, ntags):
    """Points grouped by tag id (file order within a tag), the bounds of each tag's run
    and the index of each tag's first point."""
    bounds = np.zeros(ntags + 1, dtype=np.int64)
    first = np.full(ntags, -1, dtype=np.int64)
    for i in range(n):
        t = pt_tag[i]
        if bounds[t + 1] == 0:
            first[t] = i
        bounds[t + 1] += 1
    for t in range(ntags):
        bounds[t + 1] += bounds[t]
    fill = bounds[:-1].copy()
    steps = np.empty(n, dtype=np.int64)
    walls = np.empty(n, dtype=np.float64)
    values = np.empty(n, dtype=np.float64)
    recs = np.empty(n, dtype=np.int64)
    for i in range(n):
        t = pt_tag[i]
        j = fill[t]
        fill[t] = j + 1
        steps[j] = pt_step[i]
        walls[j] = pt_wall[i]
        values[j] = pt_val[i]
        recs[j] = pt_rec[i]
    return steps, walls, values, recs, bounds, first


# ----------------------------------------------------------------------------- Python


class _Buffers:
    """Everything the kernel writes into, grown in Python when it says so."""

    def __init__(self, points: int) -> None:
        self.state = np.zeros(_STATE_SIZE, dtype=np.int64)
        self.pt_tag = np.empty(points, dtype=np.int32)
        self.pt_step = np.empty(points, dtype=np.int64)
        self.pt_wall = np.empty(points, dtype=np.float64)
        self.pt_val = np.empty(points, dtype=np.float64)
        self.pt_rec = np.empty(points, dtype=np.int64)
        self.fb_off = np.empty(256, dtype=np.int64)
        self.fb_len = np.empty(256, dtype=np.int64)
        self.fb_rec = np.empty(256, dtype=np.int64)
        self.tag_bytes = np.empty(16384, dtype=np.uint8)
        self.tag_start = np.empty(256, dtype=np.int64)
        self.tag_len = np.empty(256, dtype=np.int64)
        self.tag_bad = np.zeros(256, dtype=np.uint8)
        self.slots = np.zeros(512, dtype=np.int64)
        self.stack = np.empty(32, dtype=np.int64)

    def scan(self, buf: np.ndarray, pos: int, end: int, kind: int) -> tuple[int, int]:
        return _scan(
            buf, pos, end, kind, _CRC_TABLE,
            self.pt_tag, self.pt_step, self.pt_wall, self.pt_val, self.pt_rec,
            self.fb_off, self.fb_len, self.fb_rec,
            self.tag_bytes, self.tag_start, self.tag_len, self.tag_bad, self.slots,
            self.state, _MS_SCHEMA, _MS_VALUE_MSG, self.stack,
        )  # fmt: skip

    def grow(self, why: int) -> None:
        if why == _GROW_POINTS:
            for name in ("pt_tag", "pt_step", "pt_wall", "pt_val", "pt_rec"):
                setattr(self, name, _grown(getattr(self, name)))
        elif why == _GROW_FALLBACK:
            for name in ("fb_off", "fb_len", "fb_rec"):
                setattr(self, name, _grown(getattr(self, name)))
        elif why == _GROW_TAGS:
            count = int(self.state[_S_TAGS])
            for name in ("tag_bytes", "tag_start", "tag_len", "tag_bad"):
                setattr(self, name, _grown(getattr(self, name)))
            self.slots = np.zeros(self.slots.size * 2, dtype=np.int64)
            _rehash(self.tag_bytes, self.tag_start, self.tag_len, count, self.slots)

    def tags(self) -> list[str]:
        """Each tag id's text (tags with bad UTF-8 never got points: left as ``""``)."""
        out = []
        for tid in range(int(self.state[_S_TAGS])):
            start = int(self.tag_start[tid])
            raw = self.tag_bytes[start : start + int(self.tag_len[tid])].tobytes()
            out.append("" if self.tag_bad[tid] else raw.decode("utf-8"))
        return out


def _grown(array: np.ndarray) -> np.ndarray:
    out = np.empty(array.size * 2, dtype=array.dtype)
    out[: array.size] = array
    return out


def _record_size(handle, offset: int) -> int:
    """Bytes of the whole record at ``offset`` by its length field (0 if unknown).

    Only a length whose CRC checks is believed: a damaged one would have the chunk hold
    the rest of the file (the python engine's :class:`~sumlens.io.reader.RecordFile` does
    the same).
    """
    handle.seek(offset)
    header = handle.read(HEADER_SIZE)
    if len(header) < HEADER_SIZE or not valid_header_at(header, 0):
        return 0
    return int.from_bytes(header[:8], "little") + OVERHEAD


_FallbackPoint = tuple[int, int, int, float, float]  # record index, ordinal, step, wall, value
_Columns = tuple[np.ndarray, np.ndarray, np.ndarray]  # steps, wall times, values


def scan_file_scalars(
    path: os.PathLike[str] | str, kind: str, stats: ReadStats, storage: Storage = LOCAL_STORAGE
) -> dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]]:
    """Every scalar of one event file as ``{tag: (steps, wall_times, values)}`` in file order.

    Gives what the python engine gives (same points, same counts in ``stats``, the same
    :class:`~sumlens.io.reader.NotAnEventFileError` for a file holding no record).
    """
    return scan_file_scalars_from(path, kind, stats, storage=storage)[0]


def scan_file_scalars_from(
    path: os.PathLike[str] | str,
    kind: str,
    stats: ReadStats,
    start: int = 0,
    other: Callable[[Event, int, int], None] | None = None,
    limit: int | None = None,
    values: bool = True,
    storage: Storage = LOCAL_STORAGE,
) -> tuple[dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]], int]:
    """The scalars of the complete records from byte ``start`` on, and where they end.

    Returns ``(columns, end)``: a torn last record stays unread, so a later call from
    ``end`` picks it up once the writer completed it. Events that are not scalars go to
    ``other(event, offset, length)`` (in file order within each chunk) when it is given,
    with where their record's payload lies in the file. With ``limit``, reading stops
    after the chunk in which ``limit`` bytes were passed. ``values=False`` hands histograms
    and tensors to ``other`` unconverted (value None). The file is read through ``storage``,
    a chunk at a time straight into the scan's buffer (``readinto``).
    """
    decode = (DECODERS if values else INDEXERS)[kind]
    kind_code = _KIND_CODES[kind]
    name = os.path.basename(path)
    fallback: dict[str, list[_FallbackPoint]] = {}
    with storage.open_read(os.fspath(path), start) as handle:
        size = handle.seek(0, os.SEEK_END)
        bufs = _Buffers(max(1024, min((size - start) // 32, 1 << 22)))
        bufs.state[_S_WANT_OTHER] = other is not None
        chunk = np.empty(0, dtype=np.uint8)
        offset = start
        ordinal = 0
        while offset < size and (limit is None or offset - start < limit):
            want = min(max(CHUNK_SIZE, _record_size(handle, offset)), size - offset)
            if chunk.size < want + PADDING:
                chunk = np.empty(want + PADDING, dtype=np.uint8)
            handle.seek(offset)
            got = _read_into(handle, chunk, want)
            if not got:
                break
            chunk[got : got + PADDING] = 0
            pos = 0
            bufs.state[_S_FALLBACK] = 0
            while True:
                pos, why = bufs.scan(chunk, pos, got, kind_code)
                if why == _DONE:
                    break
                bufs.grow(why)
            ordinal = _decode_fallback(
                chunk, bufs, decode, name, stats, fallback, ordinal, other, offset
            )
            if pos == 0 or offset + got >= size:
                offset += pos
                break
            offset += pos
    stats.records += int(bufs.state[_S_RECORDS])
    stats.corrupt_records += int(bufs.state[_S_CORRUPT])
    stats.skipped_bytes += int(bufs.state[_S_SKIPPED])
    stats.torn_tail_bytes += size - offset
    if start == 0 and bufs.state[_S_RECORDS] == 0 and bufs.state[_S_CORRUPT] == 0 and offset > 0:
        raise NotAnEventFileError(path)
    return _columns(bufs, fallback), offset


def _read_into(handle, chunk: np.ndarray, want: int) -> int:
    view = chunk.data[:want]
    got = 0
    while got < want:
        n = handle.readinto(view[got:])
        if not n:
            break
        got += n
    return got


def _decode_fallback(
    chunk: np.ndarray,
    bufs: _Buffers,
    decode,
    name: str,
    stats: ReadStats,
    fallback: dict[str, list[_FallbackPoint]],
    ordinal: int,
    other: Callable[[Event, int, int], None] | None,
    chunk_offset: int,
) -> int:
    """Decode the records the kernel listed with protobuf; collect their scalar points.

    Events of other kinds go to ``other(event, payload offset in the file, length)``.
    """
    for k in range(int(bufs.state[_S_FALLBACK])):
        start = int(bufs.fb_off[k])
        payload = chunk[start : start + int(bufs.fb_len[k])].tobytes()
        try:
            events = decode(payload, name, stats)
        except PayloadError:
            stats.reject_record()
            continue
        rec = int(bufs.fb_rec[k])
        for event in events:
            if event.plugin == "scalar":
                fallback.setdefault(event.tag, []).append(
                    (rec, ordinal, event.step, event.wall_time, event.value)
                )
                ordinal += 1
            elif other is not None:
                other(event, chunk_offset + start, int(bufs.fb_len[k]))
    return ordinal


def _columns(bufs: _Buffers, fallback: dict[str, list[_FallbackPoint]]) -> dict[str, _Columns]:
    """Per-tag columns from the kernel's points and the protobuf-decoded ones, in file order."""
    n = int(bufs.state[_S_POINTS])
    names = bufs.tags()
    steps, walls, values, recs, bounds, firsts = _group(
        bufs.pt_tag, bufs.pt_step, bufs.pt_wall, bufs.pt_val, bufs.pt_rec, n, len(names)
    )
    found: list[tuple[tuple[int, int], str, _Columns]] = []
    for tid, tag in enumerate(names):
        lo, hi = int(bounds[tid]), int(bounds[tid + 1])
        if lo == hi:
            continue
        first = int(firsts[tid])
        cols: _Columns = (steps[lo:hi], walls[lo:hi], values[lo:hi])
        if tag in fallback:
            points = fallback.pop(tag)
            kernel_first = (int(bufs.pt_rec[first]), first)
            key = kernel_first if kernel_first[0] < points[0][0] else points[0][:2]
            rec = np.concatenate((recs[lo:hi], np.array([p[0] for p in points], np.int64)))
            merged = np.argsort(rec, kind="stable")
            step_col, wall_col, value_col = (
                np.concatenate((col, np.array([p[i] for p in points], col.dtype)))[merged]
                for i, col in zip((2, 3, 4), cols, strict=True)
            )
            cols = (step_col, wall_col, value_col)
            found.append((key, tag, cols))
        else:
            found.append(((int(bufs.pt_rec[first]), first), tag, cols))
    for tag, points in fallback.items():
        cols = (
            np.array([p[2] for p in points], np.int64),
            np.array([p[3] for p in points], np.float64),
            np.array([p[4] for p in points], np.float64),
        )
        found.append(((points[0][0], points[0][1]), tag, cols))
    found.sort(key=lambda item: item[0])
    return {tag: cols for _, tag, cols in found}


def warm_up() -> None:
    """Compile (or load from numba's cache) every kernel, so timings can leave it out."""
    bufs = _Buffers(16)
    chunk = np.zeros(64 + PADDING, dtype=np.uint8)
    for kind in (0, 1, 2):
        bufs.scan(chunk, 0, 64, kind)
    bufs.grow(_GROW_TAGS)
    _columns(bufs, {})
