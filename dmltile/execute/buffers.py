"""CompiledTile: what every backend's compiled op shares (the descriptor, the array and buffer contracts)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..core.operator import OperatorDesc
from ..core.tensor import BufferTensorDesc, element_offsets, overlapping_strides, packed_strides
from ..errors import DmlTileError, UnsupportedError

POISON_BYTE = 0xCD  # what poison_padding writes into output bytes the desc does not address


class CompiledTile:
    """A validated Tile descriptor, ready to run many times without re-validation or re-planning.

    ``op(x, out=None)`` tiles an array of the input Sizes into an array of the output Sizes;
    ``op.run_buffers(in_buf, out_buf)`` runs on raw byte buffers through the descriptor's Strides.
    ``op.provider`` names what runs it ("numpy", or the onnxruntime execution provider).
    """

    backend = "abstract"
    provider = "none"

    def __init__(self, desc: OperatorDesc):
        self.desc = desc
        t_in, t_out = desc.input, desc.output
        self.data_type = t_in.data_type
        dtype = t_in.data_type.numpy_dtype
        if dtype is None:  # 4-bit and UNKNOWN: no valid Tile descriptor has them
            raise UnsupportedError(f"InputTensor.DataType {t_in.data_type.c_name} has no NumPy dtype")
        self.dtype: np.dtype = dtype
        self.in_shape = tuple(t_in.sizes)
        self.out_shape = tuple(t_out.sizes)
        self.out_strides = tuple(int(s) * self.dtype.itemsize for s in packed_strides(self.out_shape))

    def __repr__(self) -> str:
        return (
            f"<{type(self).__name__} {self.data_type.name} {list(self.in_shape)} x {list(self.desc.repeats)}"
            f" -> {list(self.out_shape)} on {self.provider}>"
        )

    def __call__(self, x: np.ndarray, out: np.ndarray | None = None) -> np.ndarray:
        """Tile ``x`` (the input Sizes, the DataType's dtype) into ``out`` or a new array of the output Sizes."""
        if type(x) is not np.ndarray or x.dtype != self.dtype or x.shape != self.in_shape:
            if isinstance(x, np.ndarray):
                x = np.asarray(x)  # a subclass (np.matrix, a masked array) is read as its plain data
            if not isinstance(x, np.ndarray) or x.dtype != self.dtype or x.shape != self.in_shape:
                raise self.input_error(x)
        if out is None:
            out = np.empty(self.out_shape, self.dtype)
        elif (
            type(out) is not np.ndarray
            or out.dtype != self.dtype
            or out.shape != self.out_shape
            or out.strides != self.out_strides
            or not out.flags.writeable
        ):
            self.check_out(out)
        self.tile_array(x, out)
        return out

    def tile_array(self, x: np.ndarray, out: np.ndarray) -> None:
        """The backend's copy from a checked input array into a checked, C-contiguous output array."""
        raise NotImplementedError

    def run_buffers(self, in_buf: Any, out_buf: Any, poison_padding: bool = False) -> None:
        """Run on raw byte buffers honouring Strides and TotalTensorSizeInBytes."""
        raise NotImplementedError

    # -- checks shared by the backends (only on the slow path: a mismatch) -------------------
    def input_error(self, x: Any) -> DmlTileError:
        """The error for an input that is not an ndarray of the input Sizes and dtype."""
        if not isinstance(x, np.ndarray):
            return DmlTileError(
                f"input must be a numpy.ndarray of shape {self.in_shape} and dtype {self.dtype}, "
                f"got {type(x).__name__}"
            )
        if x.shape != self.in_shape:
            return DmlTileError(f"input has shape {x.shape}, but InputTensor.Sizes is {list(self.in_shape)}")
        return DmlTileError(
            f"input has dtype {x.dtype}, but InputTensor.DataType {self.data_type.name} "
            f"needs {self.dtype}; Tile copies bits and never converts (use x.astype or x.view)"
        )

    def check_out(self, out: Any) -> None:
        """Raise unless ``out`` is a writable C-contiguous array of the output Sizes and dtype."""
        if type(out) is not np.ndarray and isinstance(out, np.ndarray):
            raise DmlTileError(
                f"out must be a plain numpy.ndarray, got the subclass {type(out).__name__}; "
                "pass out=np.empty(op.out_shape, op.dtype)"
            )
        if not isinstance(out, np.ndarray) or out.shape != self.out_shape or out.dtype != self.dtype:
            got = (
                f"shape {out.shape}, dtype {out.dtype}" if isinstance(out, np.ndarray) else type(out).__name__
            )
            raise DmlTileError(
                f"out must be an ndarray of shape {self.out_shape} and dtype {self.dtype} "
                f"(OutputTensor.Sizes, DataType), got {got}"
            )
        if not out.flags.writeable:
            raise DmlTileError("out is read-only (out.flags.writeable is False); pass a writable array")
        if not out.flags.c_contiguous:
            raise DmlTileError(f"out must be C-contiguous, got an array with strides {out.strides}")


def byte_view(buf: Any, name: str, need: int, writable: bool) -> np.ndarray:
    """A flat uint8 view of a contiguous buffer-protocol object, checked against the desc's byte size."""
    if isinstance(buf, np.ndarray):
        buf = np.asarray(buf)  # a subclass (np.matrix) is read as its plain bytes
        if not buf.flags.c_contiguous:
            raise DmlTileError(
                f"{name}: a byte buffer must be C-contiguous (got an array with strides {buf.strides})"
            )
        view = buf.reshape(-1).view(np.uint8)
    else:
        try:
            view = np.frombuffer(buf, dtype=np.uint8)
        except (TypeError, ValueError) as e:
            raise DmlTileError(
                f"{name}: expected a contiguous buffer (bytes, bytearray, memoryview or ndarray): {e}"
            ) from None
    if view.size < need:
        raise DmlTileError(
            f"{name} has {view.size} bytes, but its TotalTensorSizeInBytes is {need}; "
            f"bind a buffer of at least {need} bytes"
        )
    if writable and not view.flags.writeable:
        raise DmlTileError(f"{name} is read-only; pass a bytearray or a writable ndarray")
    return view


def strided(view: np.ndarray, t: BufferTensorDesc) -> np.ndarray:
    """The tensor ``t`` inside the byte buffer ``view``, as an array of its Sizes (unsigned ints of its width)."""
    width = t.data_type.element_size
    byte_strides = tuple(s * width for s in t.effective_strides)
    return np.ndarray(t.sizes, np.dtype(f"u{width}"), view, 0, byte_strides)


def pack_tensor(t: BufferTensorDesc, x: np.ndarray) -> np.ndarray:
    """A zeroed byte buffer of ``t``'s TotalTensorSizeInBytes with array ``x`` (``t``'s Sizes) placed
    where ``t``'s Strides put each element: what an application uploads before a dispatch.

    Elements that share an address (stride 0, a broadcast input) must hold the same bits; an ``x``
    whose values disagree there cannot be expressed by the descriptor and is refused, naming the index.
    """
    width = t.data_type.element_size
    bits = np.ascontiguousarray(x).view(f"u{width}")
    buf = np.zeros(t.total_tensor_size_in_bytes, np.uint8)
    view = strided(buf, t)
    view[...] = bits
    differs = np.argwhere(view != bits)
    if differs.size:
        index = [int(i) for i in differs[0]]
        raise DmlTileError(
            f"input element {index} shares its buffer element with another index under Strides "
            f"{list(t.effective_strides)}, but holds a different value; a broadcast input must "
            "repeat its values along stride-0 axes"
        )
    return buf


def check_input_holds(t: BufferTensorDesc, x: np.ndarray) -> None:
    """Raise (as pack_tensor does) unless a GPU buffer laid out by ``t``'s Strides can hold ``x``:
    where two indices share an element, ``x`` must hold the same bits at both. Strides that give
    every index its own element hold any array, and cost nothing to check."""
    if overlapping_strides(t.sizes, t.effective_strides) is not False:
        pack_tensor(t, x)


def buffer_views(
    desc: OperatorDesc, in_buf: Any, out_buf: Any, poison_padding: bool
) -> tuple[np.ndarray, np.ndarray]:
    """Checked uint8 views of both buffers; with ``poison_padding`` the output region is pre-filled with
    POISON_BYTE, so the bytes the copy does not address keep the marker. Refuses, before any work, an
    aliasing output with more elements than MAX_ALIASED_ELEMENTS (see ``check_aliasing_work``)."""
    check_aliasing_work(desc)
    src = byte_view(in_buf, "input buffer", desc.input.total_tensor_size_in_bytes, writable=False)
    dst = byte_view(out_buf, "output buffer", desc.output.total_tensor_size_in_bytes, writable=True)
    if poison_padding:
        dst[: desc.output.total_tensor_size_in_bytes].fill(POISON_BYTE)
    return src, dst


MAX_ALIASED_ELEMENTS = 1 << 22  # an aliasing output is written element by element: ~20 bytes each


def check_aliasing_work(desc: OperatorDesc) -> None:
    """UnsupportedError for an output whose Strides map several elements to one address (DML109) and
    that has more than MAX_ALIASED_ELEMENTS elements. Writing it in buffer mode takes memory and time
    per element, not per byte of its buffer: UINT8 [1,1] -> [32768,32768] with Strides [0,0] has a
    4-byte buffer but 2^30 elements, all writing the same byte."""
    t = desc.output
    if t.strides is None or t.element_count <= MAX_ALIASED_ELEMENTS or not output_aliases(t):
        return
    raise UnsupportedError(
        f"OutputTensor.Strides {list(t.strides)} map several of its {t.element_count} elements "
        f"(Sizes {list(t.sizes)}) to one address of its {t.total_tensor_size_in_bytes}-byte buffer (DML109); "
        f"buffer-mode runs write such outputs element by element and take at most {MAX_ALIASED_ELEMENTS} "
        "elements: refused before any work. Give the output distinct addresses (Strides null), or run on "
        "arrays with op(x)"
    )


def output_aliases(t: BufferTensorDesc) -> bool:
    """Whether two output elements may share bytes (DML109). Such outputs are written in row-major
    order with the last write winning, so results do not depend on the copy's traversal order."""
    return t.strides is not None and overlapping_strides(t.sizes, t.strides) is not False


def scatter_row_major(dst: np.ndarray, t: BufferTensorDesc, values: np.ndarray) -> None:
    """Write ``values`` (an array of ``t``'s Sizes) through ``t``'s strides into the byte buffer ``dst``;
    where elements share an address, the one last in row-major order wins (deterministic, unlike
    numpy's fancy assignment with repeated indices)."""
    width = t.data_type.element_size
    offsets = element_offsets(t.sizes, t.effective_strides)
    last = offsets.size - 1 - np.unique(offsets[::-1], return_index=True)[1]
    elements = dst[: dst.size // width * width].view(f"u{width}")
    elements[offsets[last]] = values.reshape(-1).view(f"u{width}")[last]


def addressed_mask(t: BufferTensorDesc) -> np.ndarray:
    """True for every byte of the tensor's TotalTensorSizeInBytes that some element occupies."""
    mask = np.zeros(t.total_tensor_size_in_bytes, dtype=bool)
    elem = t.data_type.element_size
    offsets = element_offsets(t.sizes, t.effective_strides) * elem
    for b in range(elem):
        mask[offsets + b] = True
    return mask
