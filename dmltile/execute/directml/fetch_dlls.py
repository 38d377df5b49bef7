"""Fetch the DirectML.dll of each chosen version out of its Windows wheel on PyPI, checking both SHA-256s.

The versions, their wheels and the pinned hashes are ``feature_levels/directml_versions.toml``. Each
DLL goes to ``HOME/dll/<folder>/DirectML.dll`` (folder: the onnxruntime-directml version for that
package, ``<package>-<version>`` for the others) with ``wheel.txt`` (the wheel's file name) and
``source.txt`` (``package==version``). An onnxruntime-directml wheel also gives ``HOME/ort/<version>``
its onnxruntime.dll (the C API that ort_runner drives), or a note that it ships none; the wheel
itself is deleted.

    python fetch_dlls.py HOME [WHAT ...]
    python fetch_dlls.py --onnxruntime HOME VERSION ...   (onnxruntime.dll of those onnxruntime-directml
                                                           wheels, downloaded only when not extracted yet)

WHAT: ``default`` (the rows marked ``default = true``; also what no WHAT means), ``all``, a DirectML
version (``1.7.0``, ``1.7.0.0``, ``1.0.2006.1020``), a wheel (``tensorflow-directml==1.15.5``), or a
bare onnxruntime-directml version that is not a DirectML version in the table (``1.16.0``; a wheel
missing from the table is fetched unpinned, with a warning). Stdlib only: ``setup.sh`` runs it with
the system Python (3.11 or later, or 3.10 with tomli).
"""

from __future__ import annotations

import hashlib
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover
    # Python 3.10 reads TOML with tomli (a dmltile dependency there); checkers targeting 3.10 from a
    # newer Python may not find it (hence unused-ignore).
    import tomli as tomllib  # type: ignore[import-not-found, unused-ignore]

TABLE = Path(__file__).resolve().parents[2] / "feature_levels" / "directml_versions.toml"
ORT = "onnxruntime-directml"
ORT_DLL = "onnxruntime.dll"
ORT_FILES = (ORT_DLL, "onnxruntime_providers_shared.dll", "DirectML.dll")
NO_ORT_DLL = "no-onnxruntime-dll.txt"  # the note on a wheel that ships no onnxruntime.dll


class FetchError(Exception):
    """A wheel or DLL could not be fetched, or its hash is not the pinned one."""


def rows() -> list[dict[str, Any]]:
    """The version table's rows."""
    table: list[dict[str, Any]] = tomllib.loads(TABLE.read_text(encoding="utf-8"))["version"]
    return table


def _short(version: str) -> str:
    parts = version.split(".")
    return ".".join(parts[:3]) if len(parts) == 4 and parts[3] == "0" else version


def select(what: list[str], table: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows (or unpinned onnxruntime-directml wheels) that WHAT names, each once, in table order."""
    chosen: list[dict[str, Any]] = []
    for word in what or ["default"]:
        if word == "all":
            found = table
        elif word == "default":
            found = [r for r in table if r.get("default")]
        else:
            found = [r for r in table if word in (r["directml"], _short(r["directml"]), r["wheel"])]
            if not found:
                wheel = word if "==" in word else f"{ORT}=={word}"
                found = [r for r in table if r["wheel"] == wheel] or [{"wheel": wheel}]
        chosen.extend(r for r in found if r not in chosen)
    return chosen


def folder(wheel: str) -> str:
    """``1.24.4`` for onnxruntime-directml==1.24.4, ``tensorflow-directml-1.15.5`` for the others."""
    package, version = wheel.split("==")
    return version if package == ORT else f"{package}-{version}"


def sha256(path: Path) -> str:
    """SHA-256 of a file, hex."""
    h = hashlib.sha256()
    with path.open("rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def _python_tags(row: dict[str, Any]) -> list[str]:
    """``3.11`` from a pinned ``…-cp311-…`` file name; unpinned wheels try 3.11, 3.8, 3.7."""
    name = row.get("wheel_file")
    if name:
        tag = name.split("-")[2].removeprefix("cp")
        return [f"{tag[0]}.{tag[1:]}"]
    return ["3.11", "3.8", "3.7"]


def _download(row: dict[str, Any], wheels: Path) -> Path:
    package, version = row["wheel"].split("==")
    for python in _python_tags(row):
        proc = subprocess.run(
            [sys.executable, "-m", "pip", "download", "-q", "--disable-pip-version-check", "--no-deps", "--pre",
             "--only-binary=:all:", "--platform", "win_amd64", "--python-version", python, row["wheel"],
             "-d", str(wheels)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        found = sorted(wheels.glob(f"{package.replace('-', '_')}-{version}-*.whl"))
        if proc.returncode == 0 and found:
            return found[0]
    raise FetchError(f"no Windows wheel of {row['wheel']} on the package index: {proc.stderr.strip()[-300:]}")


def _member(z: zipfile.ZipFile, row: dict[str, Any]) -> str:
    if row.get("dll_member"):
        return str(row["dll_member"])
    names = [n for n in z.namelist() if n.endswith("capi/DirectML.dll")]
    if not names:
        raise FetchError(f"{row['wheel']}: no capi/DirectML.dll in the wheel")
    return names[0]


def _ort_folder(row: dict[str, Any], home: Path) -> Path:
    return home / "ort" / row["wheel"].split("==")[1]


def onnxruntime_done(row: dict[str, Any], home: Path) -> bool:
    """The wheel's onnxruntime.dll is in place, or its note says it ships none and the table agrees
    (a note on a wheel the table says carries one is a wrong note: it is checked again)."""
    target = _ort_folder(row, home)
    if (target / ORT_DLL).is_file():
        return True
    return (target / NO_ORT_DLL).is_file() and not row.get("ships_onnxruntime_dll")


def extract_onnxruntime(whl: Path, row: dict[str, Any], home: Path) -> str:
    """onnxruntime.dll (the C API), its providers_shared DLL and DirectML.dll of an onnxruntime-directml
    wheel into HOME/ort/<version>; a wheel without onnxruntime.dll gets a note, unless the table says
    it carries one: then FetchError."""
    target = _ort_folder(row, home)
    target.mkdir(parents=True, exist_ok=True)
    with zipfile.ZipFile(whl) as z:
        members = {n.rsplit("/", 1)[-1]: n for n in z.namelist() if n.rsplit("/", 2)[-2:-1] == ["capi"]}
        if ORT_DLL not in members:
            if row.get("ships_onnxruntime_dll"):
                raise FetchError(
                    f"{whl.name} has no capi/{ORT_DLL}, though the version table says this wheel ships it "
                    "(ships_onnxruntime_dll): the download is not the wheel that was measured"
                )
            (target / NO_ORT_DLL).write_text(
                f"{whl.name} ships no {ORT_DLL} (only the Python extension onnxruntime_pybind11_state.pyd), "
                "so its C API cannot be driven\n"
            )
            return f"no {ORT_DLL}"
        for name in ORT_FILES:
            if name in members:
                tmp = target / f"{name}.tmp"
                tmp.write_bytes(z.read(members[name]))
                tmp.replace(target / name)
    (target / NO_ORT_DLL).unlink(missing_ok=True)
    return ORT_DLL


def fetch_onnxruntime(row: dict[str, Any], home: Path) -> str:
    """onnxruntime.dll of one onnxruntime-directml wheel, downloading the wheel only when it is not
    extracted yet (``fetch`` extracts it already when it downloads the wheel for its DirectML.dll)."""
    if onnxruntime_done(row, home):
        return "present"
    if not row.get("wheel_sha256"):
        raise FetchError(f"{row['wheel']} has no pinned SHA-256 in {TABLE.name}; its DLLs are not run")
    wheels = home / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    whl = _download(row, wheels)
    try:
        _check_wheel(whl, row)
        return extract_onnxruntime(whl, row, home)
    finally:
        whl.unlink()


def _check_wheel(whl: Path, row: dict[str, Any]) -> None:
    got = sha256(whl)
    if row.get("wheel_sha256") and got != row["wheel_sha256"]:
        raise FetchError(f"{whl.name}: SHA-256 {got} is not the pinned {row['wheel_sha256']}")


def fetch(row: dict[str, Any], home: Path) -> str:
    """Put one row's DLL in place (checking the pinned hashes); what was done, for the log."""
    target = home / "dll" / folder(row["wheel"])
    dll = target / "DirectML.dll"
    pinned = row.get("dll_sha256")
    if dll.is_file() and (pinned is None or sha256(dll) == pinned):
        return "present"
    wheels = home / "wheels"
    wheels.mkdir(parents=True, exist_ok=True)
    whl = _download(row, wheels)
    try:
        _check_wheel(whl, row)
        target.mkdir(parents=True, exist_ok=True)
        tmp = target / "DirectML.dll.tmp"
        with zipfile.ZipFile(whl) as z:
            tmp.write_bytes(z.read(_member(z, row)))
        got = sha256(tmp)
        if pinned and got != pinned:
            tmp.unlink()
            raise FetchError(f"{row['wheel']}: DirectML.dll SHA-256 {got} is not the pinned {pinned}")
        (target / "shader-blobs.done").unlink(missing_ok=True)  # a new DLL: decode its shaders again
        tmp.replace(dll)
        (target / "wheel.txt").write_text(whl.name + "\n")
        (target / "source.txt").write_text(row["wheel"] + "\n")
        if row["wheel"].startswith(ORT + "==") and not onnxruntime_done(row, home):
            extract_onnxruntime(whl, row, home)  # the same download serves the onnxruntime step
    finally:
        whl.unlink()  # only the DLLs are kept
    return "fetched" + ("" if pinned else " (not pinned: no row in the version table)")


def main(argv: list[str]) -> int:
    if not argv:
        print(
            "usage: fetch_dlls.py HOME [default|all|DIRECTML_VERSION|PACKAGE==VERSION ...]\n"
            "       fetch_dlls.py --onnxruntime HOME ONNXRUNTIME_DIRECTML_VERSION ...",
            file=sys.stderr,
        )
        return 2
    onnxruntime = argv[0] == "--onnxruntime"
    if onnxruntime:
        argv = argv[1:]
        if not argv:
            return main([])
    home = Path(argv[0])
    try:
        if onnxruntime:
            for row in select([f"{ORT}=={v}" for v in argv[1:]], rows()):
                print(f"  {row['wheel']:<42} {fetch_onnxruntime(row, home)}")
            return 0
        for row in select(argv[1:], rows()):
            what = fetch(row, home)
            print(f"  {row['wheel']:<42} DirectML {row.get('directml', '?'):<14} {what}")
    except FetchError as exc:
        print(f"fetch_dlls: {exc}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
