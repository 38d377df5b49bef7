"""`validate --fix` and `fmt -w` write a file back as it was stored: its encoding, byte order mark and
line endings, its mode, owner and group, its other hard links; a read-only file only with --force.
Comments in a descriptor (JSONC) are read, and kept by --fix."""

from __future__ import annotations

import codecs
import json
import os
import stat

import pytest

from tests.cli_support import DOC_EXAMPLE, invoke, script

TEXT = DOC_EXAMPLE.read_text()
DOC = json.loads(TEXT)


def broken(doc: dict = DOC) -> str:
    """The example with a misspelt key that --fix removes: `"Stride"` beside `"Strides"`."""
    bad = json.loads(json.dumps(doc))
    bad["Desc"]["InputTensor"]["Desc"]["Stride"] = [1]
    return json.dumps(bad, indent=2) + "\n"


def fixed_document(data: bytes, encoding: str) -> dict:
    return json.loads(data.decode(encoding))


@pytest.mark.parametrize(
    "encoding,bom",
    [
        ("utf-8", codecs.BOM_UTF8),
        ("utf-16-le", codecs.BOM_UTF16_LE),
        ("utf-16-be", codecs.BOM_UTF16_BE),
        ("utf-16-le", b""),
        ("utf-32-le", codecs.BOM_UTF32_LE),
    ],
)
@pytest.mark.parametrize("newline", ["\r\n", "\n"])
def test_fix_keeps_encoding_bom_and_line_endings(tmp_path, encoding, bom, newline):
    plain = tmp_path / "plain.json"  # the same fix in a UTF-8 file with LF endings
    plain.write_text(broken())
    assert invoke("validate", "--fix", plain).exit_code == 0
    path = tmp_path / "doc.json"
    path.write_bytes(bom + broken().replace("\n", newline).encode(encoding))
    result = invoke("validate", "--fix", path)
    assert result.exit_code == 0, result.output
    data = path.read_bytes()
    assert data.startswith(bom) and (not bom or not data[len(bom) :].startswith(bom))
    text = data[len(bom) :].decode(encoding)
    assert json.loads(text) == DOC  # fixed: the stray key gone, nothing else changed
    assert text == plain.read_text().replace("\n", newline)


def test_diff_reads_a_utf16_file_too(tmp_path):
    path = tmp_path / "doc.json"
    path.write_bytes(broken().encode("utf-16"))
    before = path.read_bytes()
    result = invoke("validate", "--diff", path)
    assert '-        "Stride": [' in result.output and path.read_bytes() == before


def test_fix_keeps_comments_and_trailing_commas_of_a_descriptor(tmp_path):
    path = tmp_path / "doc.jsonc"
    text = broken().replace('"Sizes"', '// what it holds:\n        "Sizes"', 1)
    text = "/* a Tile descriptor */\n" + text.replace(
        '"GuaranteedBaseOffsetAlignment": 0\n', '"GuaranteedBaseOffsetAlignment": 0,\n', 1
    )
    path.write_text(text)
    result = invoke("validate", "--fix", path)
    out = path.read_text()
    assert result.exit_code == 0, result.output
    assert (
        out.startswith("/* a Tile descriptor */\n") and "// what it holds:" in out and '"Stride"' not in out
    )


def test_mode_and_hard_links_are_kept(tmp_path):
    path, other = tmp_path / "doc.json", tmp_path / "same.json"
    path.write_text(broken())
    os.chmod(path, 0o640)
    os.link(path, other)
    inode = os.stat(path).st_ino
    assert invoke("validate", "--fix", path).exit_code == 0
    assert json.loads(other.read_text()) == DOC  # the other name sees the fix: one file, in place
    assert os.stat(path).st_ino == inode and stat.S_IMODE(os.stat(path).st_mode) == 0o640


def test_mode_is_kept_when_the_file_is_replaced(tmp_path):
    path = tmp_path / "doc.json"
    path.write_text(broken())
    os.chmod(path, 0o604)
    assert invoke("validate", "--fix", path).exit_code == 0
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o604 and json.loads(path.read_text()) == DOC


@pytest.mark.skipif(not hasattr(os, "geteuid") or os.geteuid() != 0, reason="giving a file away needs root")
def test_owner_and_group_are_kept(tmp_path):
    path = tmp_path / "doc.json"
    path.write_text(broken())
    os.chown(path, 12345, 23456)
    assert invoke("validate", "--fix", path).exit_code == 0
    st = os.stat(path)
    assert (st.st_uid, st.st_gid) == (12345, 23456) and json.loads(path.read_text()) == DOC


@pytest.mark.parametrize("command", [["validate", "--fix"], ["fmt", "-w"]], ids=["validate --fix", "fmt -w"])
def test_a_read_only_file_is_refused_unless_force(tmp_path, command):
    path = tmp_path / "doc.json"
    path.write_text(broken() if command[0] == "validate" else json.dumps(DOC))
    os.chmod(path, 0o444)
    before = path.read_bytes()
    refused = script(*command, path)  # the console script: a refusal is its exit status and message
    assert refused.returncode == 2 and "read-only" in refused.stderr and "--force" in refused.stderr
    assert path.read_bytes() == before
    forced = invoke(*command, "--force", path)
    assert forced.exit_code == 0, forced.output
    assert json.loads(path.read_text()) == DOC and stat.S_IMODE(os.stat(path).st_mode) == 0o444


def test_fmt_keeps_crlf_and_bom(tmp_path):
    path = tmp_path / "doc.json"
    path.write_bytes(codecs.BOM_UTF8 + json.dumps(DOC).encode())  # one line: fmt spreads it out
    path.write_bytes(path.read_bytes().replace(b"}", b"}\r\n", 1))
    assert invoke("fmt", "-w", path).exit_code == 0
    data = path.read_bytes()
    assert data.startswith(codecs.BOM_UTF8) and b"\r\n" in data and b"\n" not in data.replace(b"\r\n", b"")
    assert json.loads(data.decode("utf-8-sig")) == DOC
