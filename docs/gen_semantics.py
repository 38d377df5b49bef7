"""Generate docs/tile-semantics.md: ONNX vs OpenVINO vs numpy.tile vs DirectML, side by side.

Every example on the page is run by this script and its printed result is what the page shows;
type lists and limits come from dmltile's own tables. ``python docs/gen_semantics.py`` rewrites
the page, ``--check`` exits 1 when the page is out of date (the test suite runs the check).
"""

from __future__ import annotations

import contextlib
import io
import sys
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import dmltile
from dmltile.core.tensor import UINT32_MAX
from dmltile.lower.from_numpy import INTP_MAX
from dmltile.lower.from_onnx import TILE_TYPES
from dmltile.lower.from_openvino import OPENVINO_TYPES, SIZE_T_MAX
from dmltile.validate.levels import tile_rows

PAGE = Path(__file__).with_name("tile-semantics.md")
NAMESPACE = {"dmltile": dmltile, "np": np}


@dataclass
class Row:
    topic: str
    onnx: str
    openvino: str
    numpy: str
    directml: str
    examples: list[str]


def _types(names) -> str:
    return ", ".join(names)


def _dml_types() -> str:
    return "<br>".join(
        f"{r.feature_level.dotted}: " + ", ".join(d.name for d in r.tensors["InputTensor"].data_types)
        for r in tile_rows()
    )


def _dml_dims() -> str:
    parts, last = [], None
    for r in tile_rows():
        dims = r.tensors["InputTensor"].dims_text()
        if dims != last:
            parts.append(f"{dims} dims from {r.feature_level.dotted}")
        last = dims
    return ", ".join(parts)


ROWS = [
    Row(
        "Repeats input",
        "Tile-6/-13: a 1-D int64 tensor. Tile-1 (opsets 1-5): inputs `tiles` and `axis` instead",
        "a 1-D tensor of any integer type",
        "an int or a sequence of ints",
        "`Repeats`: a UINT array of `RepeatsCount` values, fixed in the descriptor when the operator is compiled",
        [
            'dmltile.lower("onnx", [2, 3], np.array([2, 2], dtype=np.int32))',
            'dmltile.lower("openvino", [2, 3], np.array([2, 2], dtype=np.uint8)).output_shape',
            'dmltile.lower("numpy", [2, 3], 2).output_shape',
            'dmltile.lower("onnx", [2, 3], None, opset=1, tiles=3, axis=0).output_shape',
        ],
    ),
    Row(
        "Rank",
        '`len(repeats)` must equal the input rank ("no broadcast")',
        "the longer side wins: fewer repeats get leading 1s, more repeats give the data leading size-1 axes",
        "as OpenVINO: the result has `max(d, A.ndim)` dimensions",
        "`RepeatsCount` = `DimensionCount`; "
        + _dml_dims()
        + "; dmltile pads with leading 1s or merges axes that tile alike",
        [
            'dmltile.lower("onnx", [2, 3], [2, 2, 2])',
            'dmltile.lower("openvino", [2, 3], [2, 2, 2]).output_shape',
            'dmltile.lower("numpy", [4, 2, 3], [2, 2]).output_shape',
            'dmltile.lower("onnx", [2, 3], [2, 2], feature_level="1.0").descriptor.input.sizes',
            'dmltile.lower("numpy", [2, 3, 1, 4, 5], [2, 1, 1, 1, 1], feature_level="2.1").descriptor.input.sizes',
        ],
    ),
    Row(
        "Zero repeats",
        "allowed: an empty output",
        "allowed: an empty output",
        "allowed: an empty output",
        '"Values must be larger than 0" and sizes of 0 are invalid: an empty output needs no dispatch',
        [
            'dmltile.lower("onnx", [2, 3], [0, 2]).status',
            'dmltile.lower("onnx", [2, 3], [0, 2]).output_shape',
            'dmltile.validate({"InputTensor": {"DataType": "FLOAT32", "Sizes": [2, 3]}, '
            '"OutputTensor": {"DataType": "FLOAT32", "Sizes": [0, 6]}, "Repeats": [0, 2]}).codes',
        ],
    ),
    Row(
        "Negative repeats",
        'rejected (onnxruntime: "Tile repeat value must be non-negative")',
        "clamped to 0",
        'an error ("negative dimensions are not allowed"), except on a zero-length axis',
        "not expressible (`Repeats` are UINT)",
        [
            'dmltile.lower("onnx", [2, 3], [2, -1])',
            'dmltile.lower("openvino", [2, 3], [2, -1]).output_shape',
            'dmltile.lower("numpy", [2, 3], [2, -1])',
            'dmltile.lower("numpy", [0, 3], [-1, 2]).output_shape',
        ],
    ),
    Row(
        "Data types",
        "Tile-1: "
        + _types(TILE_TYPES[1])
        + "<br>Tile-6: "
        + _types(TILE_TYPES[6])
        + "<br>Tile-13: Tile-6's and bfloat16",
        _types(OPENVINO_TYPES) + " (no complex types)",
        "any dtype",
        _dml_types() + "<br>dmltile copies other fixed-size types bit-exactly as unsigned integers",
        [
            'dmltile.lower("onnx", [2, 3], [2, 2], "bfloat16", opset=12)',
            'dmltile.lower("onnx", [2, 3], [2, 2], "bool", feature_level="2.1").descriptor.input.data_type.name',
            'dmltile.lower("onnx", [2, 3], [2, 2], "float64", feature_level="4.1").descriptor.input.sizes',
            'dmltile.lower("onnx", [2, 3], [2, 2], "int64", feature_level="1.0").unsupported_reason',
            'dmltile.lower("onnx", [2, 3], [2, 2], "string").unsupported_reason',
        ],
    ),
    Row(
        "Limits",
        f"output dims are int64 (at most {2**63 - 1})",
        f"dims are int64 and the output element count must fit size_t ({SIZE_T_MAX})",
        f"the output must fit an intp byte count ({INTP_MAX} bytes)",
        f"at most {UINT32_MAX} elements per tensor, every size a UINT",
        [
            'dmltile.lower("onnx", [2**40, 3], [2**30, 1])',
            'dmltile.lower("openvino", [2**40, 2**40], [1, 1])',
            'dmltile.lower("onnx", [2**8, 2**8], [2**8, 2**8]).unsupported_reason',
        ],
    ),
]


NOTES = [
    "ONNX Tile-1's page declares `tiles` and `axis` with type T (the float data type) but constrains T1 to "
    'int64 "for tiles and axis"; dmltile accepts any whole number for both. The page gives no axis range and '
    "Tile-1 predates negative axes (opset 11), so `axis` must be in 0..rank-1.",
    "ONNX's page does not say what a negative repeat means; onnxruntime rejects it, and so does dmltile.",
    "OpenVINO's page does not mention negative repeats either: the clamp to 0 is OpenVINO's shape inference "
    "(`tile_shape_inference.hpp`), and the rank-1 and integer-type checks are `Tile::validate_and_infer_types`.",
    "Tested peers on this machine: onnxruntime's CPU Tile has no bfloat16 or complex kernels (those types are "
    "checked against numpy.tile); OpenVINO 2026.4's CPU plugin computes int64 in int32 precision and corrupted "
    "its heap when running empty Tile outputs (those are checked by OpenVINO's shape inference only).",
    "DirectML's page is the authority for everything in the DirectML column; dmltile's descriptors are "
    "checked by its validator, which encodes that page's rules.",
]

PLAN_EXAMPLES = [
    'dmltile.lower("openvino", [2, 3], np.array([-1, 4, 2], dtype=np.int8), "int64").output_shape',
    'print("\\n".join(dmltile.lower("openvino", [2, 3], np.array([3, 4, 2], dtype=np.int8), "int64", '
    'feature_level="2.1").steps))',
]


def run_example(code: str) -> str:
    """What the example prints: its value's repr (or its print output), or the error it raises as ``Type: message``."""
    buffer = io.StringIO()
    try:
        with contextlib.redirect_stdout(buffer):
            value = eval(code, dict(NAMESPACE))
    except dmltile.DmlTileError as e:
        return f"{type(e).__name__}: {e}"
    return buffer.getvalue().rstrip("\n") if value is None else repr(value)


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def render() -> str:
    """The whole page, examples run now."""
    out = [
        "# Tile in ONNX, OpenVINO, numpy and DirectML",
        "",
        "<!-- Generated by docs/gen_semantics.py from dmltile's code and tables; do not edit by hand. -->",
        "",
        "The same idea, output[i] = input[i] * repeats[i], with different rules around it. Sources: the ONNX",
        "Tile page (versions 13, 6, 1), the OpenVINO Tile-1 specification (and its shape inference for what",
        "the page leaves open), numpy.tile's documentation and implementation, and the DirectML",
        "`DML_TILE_OPERATOR_DESC` page. `dmltile.lower()` applies each framework's rules and maps the result",
        "onto DirectML; every example below is run by the generator and shows what it printed.",
        "",
        "| | ONNX | OpenVINO | numpy.tile | DirectML |",
        "|---|---|---|---|---|",
    ]
    for row in ROWS:
        out.append(
            f"| **{row.topic}** | "
            + " | ".join(_cell(c) for c in (row.onnx, row.openvino, row.numpy, row.directml))
            + " |"
        )
    out.append("")
    for row in ROWS:
        out += [f"## {row.topic}", "", "```python", ">>> import dmltile, numpy as np"]
        for code in row.examples:
            out += [f">>> {code}", run_example(code)]
        out += ["```", ""]
    out += ["## How a plan reads", "", "```python", ">>> import dmltile, numpy as np"]
    for code in PLAN_EXAMPLES:
        out += [f">>> {code}", run_example(code)]
    out += ["```", ""]
    out += ["## Notes on the sources", ""] + [f"* {n}" for n in NOTES] + [""]
    return "\n".join(out)


def main(argv: list[str]) -> int:
    text = render()
    if "--check" in argv:
        if not PAGE.is_file() or PAGE.read_text() != text:
            print(f"{PAGE} is out of date: run python docs/gen_semantics.py", file=sys.stderr)
            return 1
        return 0
    PAGE.write_text(text)
    print(f"wrote {PAGE}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
