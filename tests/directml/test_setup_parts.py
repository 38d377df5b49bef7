"""The DirectML set-up's Python parts, without Wine or a network: the pinned version table as
fetch_dlls.py reads it, and shader_blobs.py on buffers built here with zlib (MSZIP) and, when Debian's
libwim15 is installed, on a real DLL's LZMS buffers."""

from __future__ import annotations

import ctypes.util
import re
import struct
import zlib
from pathlib import Path

import pytest

from dmltile.execute.directml import fetch_dlls, oracle, shader_blobs
from dmltile.validate.versions import known_versions

ROWS = fetch_dlls.rows()
HEX64 = re.compile(r"[0-9a-f]{64}")


def test_every_row_pins_its_wheel_and_dll() -> None:
    """Each version row names a wheel file of its package and version, the DLL's path in it, and both SHA-256s."""
    assert len(ROWS) == len(known_versions()) >= 16
    for row in ROWS:
        package, version = row["wheel"].split("==")
        assert row["wheel_file"].startswith(f"{package.replace('-', '_')}-{version}-"), row["wheel"]
        assert row["wheel_file"].endswith("-win_amd64.whl")
        assert HEX64.fullmatch(row["wheel_sha256"]) and HEX64.fullmatch(row["dll_sha256"]), row["wheel"]
        assert row["dll_member"].rsplit("/", 1)[-1].startswith("DirectML"), row["dll_member"]
    assert len({r["dll_sha256"] for r in ROWS}) == len({r["directml"] for r in ROWS}) == len(ROWS)


def test_selection_by_directml_version_wheel_default_and_all() -> None:
    def wheels(*what: str) -> list[str]:
        return [r["wheel"] for r in fetch_dlls.select(list(what), ROWS)]

    assert wheels("1.7.0") == wheels("1.7.0.0") == ["tensorflow-directml==1.15.5"]
    assert wheels("1.0.2006.1020") == ["tensorflow-directml==1.15.3.dev200619"]
    # a DirectML version wins over an onnxruntime-directml version of the same spelling
    assert wheels("1.13.1") == ["onnxruntime-directml==1.17.3"]
    assert wheels("onnxruntime-directml==1.13.1") == ["onnxruntime-directml==1.13.1"]
    # neither: an onnxruntime-directml wheel the table lacks, fetched unpinned
    assert fetch_dlls.select(["1.16.0"], ROWS) == [{"wheel": "onnxruntime-directml==1.16.0"}]
    assert len(wheels("all")) == len(ROWS) and wheels() == wheels("default")
    defaults = {r["max_feature_level"] for r in fetch_dlls.select([], ROWS)}
    assert defaults == {r["max_feature_level"] for r in ROWS}  # the default set has every level a wheel has
    assert wheels("1.7.0", "tensorflow-directml==1.15.5") == ["tensorflow-directml==1.15.5"]


def test_folders_and_python_tags() -> None:
    assert fetch_dlls.folder("onnxruntime-directml==1.24.4") == "1.24.4"
    assert fetch_dlls.folder("torch-directml==0.1.13.dev221206") == "torch-directml-0.1.13.dev221206"
    tags = {fetch_dlls._python_tags(r)[0] for r in ROWS}
    assert tags <= {"3.7", "3.8", "3.10", "3.11"} and "3.10" in tags


def _mszip_buffer(data: bytes, block: int = 32768) -> bytes:
    """A Compression API MSZIP buffer of ``data``: each block a raw deflate stream that may refer back
    into the previous block (zlib's preset dictionary), after "CK"."""
    out = bytearray(struct.pack("<4sHBBQQ", shader_blobs.MAGIC, 24, 0, shader_blobs.MSZIP, len(data), block))
    for start in range(0, len(data), block):
        window = data[max(0, start - 32768) : start]
        z = (
            zlib.compressobj(9, zlib.DEFLATED, -15, zdict=window)
            if window
            else zlib.compressobj(9, zlib.DEFLATED, -15)
        )
        packed = b"CK" + z.compress(data[start : start + block]) + z.flush()
        out += struct.pack("<I", len(packed)) + packed
    return bytes(out)


def test_mszip_buffers_are_found_decoded_and_keyed(tmp_path: Path) -> None:
    """Two buffers between unrelated bytes (one of them containing the magic by chance) come back whole,
    decoded, under the key that the shim computes (CRC-32, Adler-32, length)."""
    text = b"".join(b"DXBC shader %d " % i for i in range(9000))  # 3 blocks, back-references across them
    small = b"tiny"
    one, two = _mszip_buffer(text), _mszip_buffer(small)
    image = b"MZ" + bytes(100) + shader_blobs.MAGIC + b"junk" * 10 + one + b"\0" * 7 + two + b"tail"
    found = list(shader_blobs.blobs(image, shader_blobs._Lzms()))
    assert found == [(one, text), (two, small)]
    dll = tmp_path / "DirectML.dll"
    dll.write_bytes(image)
    assert shader_blobs.write_blobs(tmp_path / "out", dll) == (2, 2, len(text) + len(small))
    key = f"{zlib.crc32(one):08x}{zlib.adler32(one):08x}-{len(one)}"
    assert (tmp_path / "out" / f"{key}.bin").read_bytes() == text
    assert shader_blobs.write_blobs(tmp_path / "out", dll)[1] == 0  # nothing new the second time


LZMS_DLL = oracle.default_home() / "dll" / "tensorflow-directml-1.15.5" / "DirectML.dll"


@pytest.mark.skipif(
    not LZMS_DLL.is_file() or ctypes.util.find_library("wim") is None,
    reason="needs DirectML 1.7.0 (make directml) and libwim15",
)
def test_lzms_buffers_of_directml_170_decode_to_shader_containers() -> None:
    """Every LZMS buffer of DirectML 1.7.0 decodes (wimlib) into DXBC shader containers."""
    lzms = shader_blobs._Lzms()
    try:
        found = list(shader_blobs.blobs(LZMS_DLL.read_bytes(), lzms))
    finally:
        lzms.close()
    assert len(found) == 678
    assert sum(len(out) for _, out in found) == 62_513_220
    assert all(out.count(b"DXBC") >= 1 for _, out in found)


# -- onnxruntime.dll out of an onnxruntime-directml wheel ---------------------------------------------
def _wheel(path: Path, members: dict[str, bytes]) -> Path:
    import zipfile

    with zipfile.ZipFile(path, "w") as z:
        for name, data in members.items():
            z.writestr(name, data)
    return path


ORT_ROW = next(r for r in ROWS if r["wheel"] == "onnxruntime-directml==1.24.4")
OLD_ROW = next(r for r in ROWS if r["wheel"] == "onnxruntime-directml==1.18.0")
CAPI = "onnxruntime/capi/"


def test_the_table_says_which_onnxruntime_wheels_ship_the_c_api() -> None:
    """1.20.1 and 1.24.4 carry onnxruntime.dll; the older onnxruntime-directml wheels only the Python extension."""
    ships = {r["wheel"] for r in ROWS if r.get("ships_onnxruntime_dll")}
    assert ships == {"onnxruntime-directml==1.20.1", "onnxruntime-directml==1.24.4"}


def test_a_wheel_with_onnxruntime_dll_is_extracted_and_a_stale_note_removed(tmp_path: Path) -> None:
    folder = tmp_path / "ort" / "1.24.4"
    folder.mkdir(parents=True)
    (folder / fetch_dlls.NO_ORT_DLL).write_text("wrong: written by a set-up whose check broke")
    assert not fetch_dlls.onnxruntime_done(ORT_ROW, tmp_path)  # the table says it ships one: look again
    whl = _wheel(
        tmp_path / "w.whl",
        {
            CAPI + "onnxruntime.dll": b"ort",
            CAPI + "onnxruntime_providers_shared.dll": b"shared",
            CAPI + "DirectML.dll": b"dml",
            CAPI + "onnxruntime_pybind11_state.pyd": b"pyd",
        },
    )
    assert fetch_dlls.extract_onnxruntime(whl, ORT_ROW, tmp_path) == "onnxruntime.dll"
    assert sorted(p.name for p in folder.iterdir()) == sorted(fetch_dlls.ORT_FILES)
    assert (folder / "onnxruntime.dll").read_bytes() == b"ort"
    assert fetch_dlls.onnxruntime_done(ORT_ROW, tmp_path)


def test_a_wheel_the_table_says_ships_the_dll_and_does_not_stops_the_set_up(tmp_path: Path) -> None:
    whl = _wheel(tmp_path / "w.whl", {CAPI + "onnxruntime_pybind11_state.pyd": b"pyd"})
    with pytest.raises(fetch_dlls.FetchError, match="ships_onnxruntime_dll"):
        fetch_dlls.extract_onnxruntime(whl, ORT_ROW, tmp_path)
    assert not (tmp_path / "ort" / "1.24.4" / fetch_dlls.NO_ORT_DLL).exists()


def test_a_wheel_without_the_c_api_gets_its_note_once(tmp_path: Path) -> None:
    whl = _wheel(tmp_path / "w.whl", {CAPI + "onnxruntime_pybind11_state.pyd": b"pyd"})
    assert fetch_dlls.extract_onnxruntime(whl, OLD_ROW, tmp_path) == "no onnxruntime.dll"
    assert "ships no onnxruntime.dll" in (tmp_path / "ort" / "1.18.0" / fetch_dlls.NO_ORT_DLL).read_text()
    assert fetch_dlls.onnxruntime_done(OLD_ROW, tmp_path)


def test_the_set_up_script_pipes_nothing_into_an_early_exiting_grep() -> None:
    """Under `set -o pipefail`, `producer | grep -q` is false whenever grep's early exit kills the
    producer with SIGPIPE: the script matches captured output instead."""
    script = (Path(fetch_dlls.__file__).parent / "setup.sh").read_text()
    code = [line.split("#", 1)[0] for line in script.splitlines()]
    assert "set -euo pipefail" in script
    assert not [line for line in code if re.search(r"\|\s*grep\s+-\w*q", line)]
