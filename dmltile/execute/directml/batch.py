"""Running many cases through one DirectML version: batches of runner lines, one answer per case,
and a restart after a case that crashed the runner or lost the device."""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .cases import runner_line
from .installation import OracleError, Setup, require_setup
from .process import end_wine, run_lines, session
from .version_table import resolve_version

S_OK = 0

# (index of the case, its runner line, the buffer layout to slice its answer with)
Pending = tuple[int, str, dict[str, Any]]


def _error_answer(case_id: Any, error: str, row: dict[str, Any]) -> dict[str, Any]:
    return {
        "id": case_id,
        "error": error,
        "directml_version": row.get("directml_version"),
        "max_feature_level": row.get("max_feature_level"),
    }


def _answer(raw: dict[str, Any], layout: dict[str, Any], row: dict[str, Any]) -> dict[str, Any]:
    out: dict[str, Any] = {
        "id": raw.get("id"),
        "directml_version": row.get("directml_version"),
        "file_version": row.get("file_version"),
        "max_feature_level": row.get("max_feature_level"),
        "wheel": row.get("wheel"),
    }
    if "create_hr" in raw:
        hr = int(raw["create_hr"], 16)
        out.update(hresult=hr, hresult_hex=f"0x{hr:08X}", accepted=hr == S_OK)
    for key in ("error", "crash"):
        if key in raw:
            out[key] = raw[key]
    if raw.get("device_removed"):
        out["device_removed"] = True
    if "crash" in raw and out.get("accepted"):
        out.update(executed=False, exec_stage="crash", exec_hresult_hex=raw["crash"])
    if "exec_stage" in raw:
        out["executed"] = bool(raw.get("executed"))
        out["exec_stage"] = raw["exec_stage"]
        out["exec_hresult_hex"] = raw.get("exec_hr")
        if raw.get("output_buffer") is not None:
            whole = bytes.fromhex(raw["output_buffer"])
            offset, size = layout["output"]
            out["output_buffer"] = whole
            out["output"] = whole[offset : offset + size]
    return out


def _run_chunk(
    setup: Setup,
    dll: Path,
    row: dict[str, Any],
    chunk: list[Pending],
    cases: list[dict[str, Any]],
    answers: list[dict[str, Any] | None],
    extra: list[str],
) -> int:
    """Run one runner process over ``chunk``, fill in the answers it gave, and return how many cases
    are settled (the process may stop early: the rest go to the next process)."""
    n_exec = sum(1 for _, line, _ in chunk if '"execute":true' in line)
    timeout = 120 + 0.05 * len(chunk) + 10 * n_exec
    rows, diag = run_lines(setup, dll, [line for _, line, _ in chunk], timeout, extra)
    startup = [r for r in rows if str(r.get("id", "")).startswith("(")]  # crashed before any case
    results = [r for r in rows if r.get("kind") is None and r not in startup]
    fatal = [r for r in rows if r.get("kind") == "fatal"] + startup
    if fatal and not results:
        raise OracleError(f"DirectML {row.get('directml_version')} failed to start: {fatal[0]} ({diag})")
    done = 0
    for (i, _, layout), raw in zip(chunk, results, strict=False):
        answers[i] = _answer(raw, layout, row)
        done += 1
    crashed = bool(results) and "crash" in results[min(done, len(results)) - 1]
    device_lost = diag.startswith("exit 4:") and done > 0  # restart at the unanswered case
    if done < len(chunk) and not crashed and not device_lost:
        # stopped early without saying why: blame the next case
        i = chunk[done][0]
        answers[i] = _error_answer(cases[i].get("id", i), f"runner stopped ({diag})", row)
        done += 1
    return done


def run_cases(
    cases: Iterable[dict[str, Any]],
    version: str,
    *,
    home: Path | None = None,
    batch_size: int = 4000,
    patch_options1: str = "auto",
) -> list[dict[str, Any]]:
    """Run Tile cases through one DirectML version; return one answer per case, in order.

    A case is a descriptor dict (wrapped or bare, enum names or integers, defaults allowed) with
    optional keys ``id``, ``execute`` (bool), ``input`` (bytes placed at ``input_offset``),
    ``output_init`` (bytes placed at ``output_offset``; the rest of the output buffer is 0xCD),
    ``input_offset``/``output_offset`` (binding offsets), ``input_size``/``output_size`` (binding
    sizes, default TotalTensorSizeInBytes rounded up to 4) and ``input_buffer_size``/``output_buffer_size``.
    Or the descriptor under ``desc`` and these keys beside it.

    An answer holds ``hresult`` (CreateOperator's HRESULT), ``accepted``, ``directml_version``,
    ``max_feature_level``, and for executed cases ``executed``, ``exec_stage``, ``output`` (the bytes of
    the output binding) and ``output_buffer`` (the whole output buffer). A case the C structs cannot
    express gets ``error`` instead; one that crashed the runner gets ``crash`` (an exception code).
    """
    setup = require_setup(home)
    row = resolve_version(version, home)
    dll = setup.dlls[row["wheel_version"]]
    cases = list(cases)
    answers: list[dict[str, Any] | None] = [None] * len(cases)
    pending: list[Pending] = []
    for i, case in enumerate(cases):
        try:
            line, layout = runner_line(case, i)
        except (ValueError, TypeError) as exc:
            answers[i] = _error_answer(case.get("id", i), f"not expressible as C structs: {exc}", row)
            continue
        pending.append((i, line, layout))
    with session(setup):
        while pending:
            done = _run_chunk(
                setup, dll, row, pending[:batch_size], cases, answers, ["--patch-options1", patch_options1]
            )
            pending = pending[done:]
            if pending:
                end_wine(setup)
    return [a if a is not None else {"error": "no answer"} for a in answers]
