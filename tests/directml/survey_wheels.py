"""Survey the Windows wheels on PyPI that carry a DirectML.dll: which DLL (FileVersion, SHA-256) each holds.

    python tests/directml/survey_wheels.py            # every wheel below; prints one JSON line per wheel
    python tests/directml/survey_wheels.py --table    # the Markdown table for docs/directml-conformance.md

Each wheel is fetched with ``pip download --no-deps --only-binary=:all: --platform win_amd64`` into
``$DMLTILE_DIRECTML_HOME/survey`` (never into the checkout), its ``DirectML*.dll`` members are read,
hashed and kept once per SHA-256 under ``survey/dll/<FileVersion>-<sha8>.dll``, and the wheel is
deleted. Answers are cached in ``survey/survey.jsonl``, so a rerun only fetches what is new. The max
feature level needs Wine and is asked by ``setup.sh`` (``versions.json``) for the DLLs it installs.
"""

from __future__ import annotations

import hashlib
import importlib.util
import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[2]


def _load(name: str) -> Any:
    """A module of dmltile/execute/directml by path (stdlib-only modules: no dmltile install needed)."""
    spec = importlib.util.spec_from_file_location(name, ROOT / f"dmltile/execute/directml/{name}.py")
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    spec.loader.exec_module(module)
    return module


oracle = _load("oracle")
fetch_dlls = _load("fetch_dlls")

# (package, version, Python tag): every release on PyPI with a win_amd64 wheel, as
# `pip index versions --pre --platform win_amd64 --only-binary=:all: --python-version TAG` lists them.
# experimental-torch-directml builds differ per Python tag (a timestamp each); one per tag is surveyed.
# onnxruntime-directml: the releases whose DLLs the set-up installs (every release's DLL is listed in
# docs/directml-conformance.md); the Python tag is the one the set-up downloads.
WHEELS: list[tuple[str, str, str]] = [
    *[
        ("tensorflow-directml", v, "37")
        for v in (
            "1.15.3.dev200619",
            "1.15.3.dev200626",
            "1.15.3.dev200911",
            "1.15.4.dev201216",
            "1.15.5.dev210422",
            "1.15.5.dev210429",
            "1.15.5",
            "1.15.6",
            "1.15.7",
            "1.15.8",
        )
    ],
    *[
        ("tensorflow-directml-plugin", v, "310")
        for v in (
            "0.0.1.dev220621",
            "0.1.0.dev220928",
            "0.1.1.dev221004",
            "0.2.0.dev221020",
            "0.3.0.dev221212",
            "0.4.0.dev230202",
        )
    ],
    *[
        ("torch-directml", v, "310")
        for v in (
            "0.1.13.dev221206",
            "0.1.13.dev221216",
            "0.1.13.1.dev230119",
            "0.1.13.1.dev230301",
            "0.1.13.1.dev230413",
            "0.2.0.dev230426",
            "0.2.1.dev240521",
            "0.2.2.dev240614",
            "0.2.3.dev240715",
            "0.2.4.dev240815",
            "0.2.4.dev240913",
            "0.2.5.dev240914",
        )
    ],
    ("experimental-torch-directml", "0.1.13.dev2012023132121", "37"),
    ("experimental-torch-directml", "0.1.13.dev23122022014639", "38"),
    ("experimental-torch-directml", "0.1.13.dev2012023133814", "310"),
    ("ort-nightly-directml", "1.11.0.dev20220320001", "37"),
    *[
        ("onnxruntime-directml", v, tag)
        for v, tag in (
            ("1.9.0", "38"),
            ("1.10.0", "38"),
            ("1.13.1", "38"),
            ("1.14.1", "38"),
            ("1.15.1", "311"),
            ("1.17.3", "311"),
            ("1.18.0", "311"),
            ("1.20.1", "311"),
            ("1.24.4", "311"),
        )
    ],
]


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def survey_one(home: Path, package: str, version: str, python: str) -> dict[str, Any]:
    """Download one wheel, record its DirectML DLLs, keep each DLL once, delete the wheel."""
    wheels = home / "survey" / "wheels"
    dlls = home / "survey" / "dll"
    wheels.mkdir(parents=True, exist_ok=True)
    dlls.mkdir(parents=True, exist_ok=True)
    row: dict[str, Any] = {"package": package, "version": version, "python": python}
    proc = subprocess.run(
        [sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-cache-dir",
         "--no-deps", "--pre", "--only-binary=:all:", "--platform", "win_amd64", "--python-version", python,
         f"{package}=={version}", "-d", str(wheels)],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    prefix = package.replace("-", "_") + "-" + version + "-"
    found = sorted(wheels.glob(prefix + "*.whl"))
    if proc.returncode or not found:
        row["error"] = proc.stderr.strip()[-300:] or "no wheel"
        return row
    whl = found[0]
    data = whl.read_bytes()
    row.update(wheel_file=whl.name, wheel_sha256=sha256(data), wheel_bytes=len(data), dlls=[])
    with zipfile.ZipFile(whl) as z:
        for name in z.namelist():
            base = name.rsplit("/", 1)[-1]
            if base.lower().startswith("directml") and base.lower().endswith(".dll"):
                blob = z.read(name)
                digest = sha256(blob)
                tmp = dlls / f"{digest}.tmp"
                tmp.write_bytes(blob)
                fv = oracle.pe_file_version(tmp)
                keep = dlls / f"{fv}-{digest[:8]}.dll"
                tmp.replace(keep)
                row["dlls"].append({"member": name, "sha256": digest, "file_version": fv, "bytes": len(blob)})
    whl.unlink()
    return row


def survey(home: Path) -> list[dict[str, Any]]:
    """Every wheel of WHEELS, answered from the cache where it was surveyed before."""
    cache = home / "survey" / "survey.jsonl"
    done: dict[tuple[str, str, str], dict[str, Any]] = {}
    if cache.is_file():
        for line in cache.read_text().splitlines():
            r = json.loads(line)
            if "error" not in r:
                done[(r["package"], r["version"], r["python"])] = r
    rows = []
    for key in WHEELS:
        row = done.get(key)
        if row is None:
            row = survey_one(home, *key)
            with cache.open("a") as f:
                f.write(json.dumps(row) + "\n")
            print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def table(rows: list[dict[str, Any]]) -> str:
    """Markdown: wheel, its DirectML DLL (FileVersion, max level as the version table records it, first
    12 hex digits of the SHA-256, and whether it is the DLL the version table installs)."""
    pinned = {r["dll_sha256"]: r for r in fetch_dlls.rows()}
    levels = {r["directml"]: r["max_feature_level"] for r in pinned.values()}
    out = [
        "| wheel | Python tag | DirectML DLL in it | FileVersion | max level | DLL SHA-256 (first 12) |",
        "|---|---|---|---|---|---|",
    ]
    for r in rows:
        wheel = f"{r['package']} {r['version']}"
        if "error" in r:
            out.append(f"| {wheel} | {r['python']} | not downloaded: {r['error'][:80]} | | | |")
            continue
        for d in r["dlls"]:
            level = levels.get(d["file_version"], "?")
            mark = " (installed)" if d["sha256"] in pinned else ""
            out.append(
                f"| {wheel} | {r['python']} | `{d['member']}` | {d['file_version']} | {level} "
                f"| {d['sha256'][:12]}{mark} |"
            )
    return "\n".join(out)


def main() -> int:
    rows = survey(oracle.default_home())
    if "--table" in sys.argv:
        print(table(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
