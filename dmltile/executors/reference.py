"""The NumPy backend: a byte-buffer simulator of DML_OPERATOR_TILE.

A tensor is a byte buffer; element ``(i0..in)`` lives at byte ``sum(i_k * Strides[k]) * elem_size``.
Tile copies bytes, so every DataType is moved as unsigned integers of its width: bit-exact, NaN
payloads included.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from ..errors import DmlTileError
from ..operator import OperatorDesc
from ..tensor import BufferTensorDesc

POISON_BYTE = 0xCD  # what --poison-padding writes into output bytes the desc does not address


def bits_dtype(t: BufferTensorDesc) -> np.dtype:
    """The unsigned NumPy type with the element's width (Tile moves bits, not values)."""
    return np.dtype(f"u{t.data_type.element_size}")


def byte_view(buf: Any, name: str, need: int, writable: bool) -> np.ndarray:
    """A flat uint8 view of any buffer-protocol object, checked against the desc's byte size."""
    try:
        view = np.frombuffer(buf, dtype=np.uint8) if not isinstance(buf, np.ndarray) else buf.reshape(-1).view(np.uint8)
    except (TypeError, ValueError) as e:
        raise DmlTileError(f"{name}: expected a contiguous buffer (bytes, bytearray, memoryview or ndarray): {e}") from None
    if view.size < need:
        raise DmlTileError(f"{name} has {view.size} bytes, but its TotalTensorSizeInBytes is {need}; "
                           f"bind a buffer of at least {need} bytes")
    if writable and not view.flags.writeable:
        raise DmlTileError(f"{name} is read-only; pass a bytearray or a writable ndarray")
    return view


def strided(view: np.ndarray, t: BufferTensorDesc) -> np.ndarray:
    """The tensor ``t`` inside the byte buffer ``view``, as an array of its Sizes (element bits)."""
    dt = bits_dtype(t)
    byte_strides = tuple(s * dt.itemsize for s in t.effective_strides)
    return np.lib.stride_tricks.as_strided(view.view(dt) if view.size % dt.itemsize == 0 else view[: view.size // dt.itemsize * dt.itemsize].view(dt),
                                           shape=t.sizes, strides=byte_strides, writeable=view.flags.writeable)


def addressed_mask(t: BufferTensorDesc) -> np.ndarray:
    """True for every byte of the tensor's TotalTensorSizeInBytes that some element occupies."""
    mask = np.zeros(t.total_tensor_size_in_bytes, dtype=bool)
    elem = t.data_type.element_size
    offsets = np.zeros(1, dtype=np.int64)
    for size, stride in zip(t.sizes, t.effective_strides):
        offsets = (offsets[:, None] + np.arange(size, dtype=np.int64) * stride * elem).ravel()
    for b in range(elem):
        mask[offsets + b] = True
    return mask


def run_tile_buffers(desc: OperatorDesc, in_buf: Any, out_buf: Any, poison_padding: bool = False) -> None:
    """Execute ``desc`` from ``in_buf`` into ``out_buf`` (both raw byte buffers)."""
    src = byte_view(in_buf, "input buffer", desc.input.total_tensor_size_in_bytes, writable=False)
    dst = byte_view(out_buf, "output buffer", desc.output.total_tensor_size_in_bytes, writable=True)
    if poison_padding:
        region = dst[: desc.output.total_tensor_size_in_bytes]
        region[~addressed_mask(desc.output)] = POISON_BYTE
    x = strided(src, desc.input)
    y = strided(dst, desc.output)
    np.copyto(y, np.tile(x, desc.repeats))
