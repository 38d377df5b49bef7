"""A finished command line: metavars, command order, completion, stdin, whole
lines when piped, directories with other JSON in them, check on a descriptor."""

from __future__ import annotations

import json
import re
import shutil
import subprocess

from ..cli_support import DOC_EXAMPLE, EXAMPLES, ROOT, SCRIPT, invoke, script


def test_help_lists_commands_in_use_order_and_offers_completion():
    out = invoke("--help").stdout
    order = [
        "validate",
        "explain",
        "run",
        "new",
        "check",
        "fmt",
        "schema",
        "levels",
        "rules",
        "export",
        "compare-dxdispatch",
        "doctor",
    ]
    positions = [re.search(rf"│ {re.escape(name)}\s", out).start() for name in order]
    assert positions == sorted(positions)
    assert "--install-completion" in out


def test_help_shows_no_python_types_as_metavars():
    for command in ("validate", "explain", "run", "new", "check", "fmt", "export", "levels", "doctor"):
        out = script(command, "--help").stdout
        for bad in ("<bool>", "<str>", "<list[Path]>", "<Path>", "<int>", "{files}", "{file}"):
            assert bad not in out, (command, bad)
    assert "LEVEL" in script("validate", "--help").stdout


def test_help_paragraphs_are_not_hard_wrapped():
    out = script("validate", "--help").stdout
    assert "(with --all-levels: at some level)" in out  # one line in a 100-column window


def test_dash_reads_the_descriptor_from_stdin():
    text = DOC_EXAMPLE.read_text()
    for command in (
        ["validate", "-", "-l", "1.0"],
        ["explain", "-"],
        ["fmt", "-"],
        ["run", "-", "--seed", "0"],
    ):
        proc = subprocess.run([str(SCRIPT), *command], input=text, capture_output=True, text=True, cwd=ROOT)
        assert proc.returncode == 0, (command, proc.stderr)
    proc = subprocess.run([str(SCRIPT), "validate", "-"], input="{", capture_output=True, text=True, cwd=ROOT)
    assert proc.returncode == 2 and "no such file" not in proc.stderr


def test_piped_output_is_never_wrapped_mid_line(tmp_path):
    long_dir = tmp_path / ("a-very-long-folder-name-" * 4)
    long_dir.mkdir()
    shutil.copy(EXAMPLES / "invalid_output_sizes.json", long_dir / "d.json")
    proc = script("validate", long_dir / "d.json")
    assert any(str(long_dir / "d.json") in line for line in proc.stdout.splitlines())
    proc = script("explain", long_dir / "d.json")
    assert any(
        "OutputTensor.Sizes[3] is 8, but InputTensor.Sizes[3] * Repeats[3] = 3 * 3 = 9" in line
        for line in proc.stdout.splitlines()
    )


def test_piped_explain_wraps_to_columns_and_keeps_every_word():
    proc = script("explain", EXAMPLES / "valid_fl3_1_float32_6d.json")  # COLUMNS=100, stdout a pipe
    lines = proc.stdout.splitlines()
    assert lines and max(len(line) for line in lines) <= 100
    words = " ".join(proc.stdout.split())
    assert "null means packed, 0 broadcasts" in words  # wrapped, not cut
    assert re.search(r"Tile copies the whole input .*\[2, 2, 3, 4, 4, 6\]\.", words)
    assert [line for line in lines if line.startswith("───")]
    assert all(line == line.rstrip() for line in lines)


def test_validating_a_directory_skips_other_json_once(tmp_path):
    for f in EXAMPLES.glob("valid_*.json"):
        shutil.copy(f, tmp_path / f.name)
    (tmp_path / "reports.json").write_text(script("validate", EXAMPLES, "--json").stdout)
    (tmp_path / "tile.schema.json").write_text(script("schema").stdout)
    proc = script("validate", tmp_path)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "DML003" not in proc.stdout + proc.stderr
    assert proc.stderr.count("skipped 2 JSON files") == 1
    doc = json.loads(script("validate", tmp_path, "--json").stdout)
    assert {s["file"].rsplit("/", 1)[-1] for s in doc["skipped"]} == {"reports.json", "tile.schema.json"}
    # named explicitly, a file is still judged
    assert script("validate", tmp_path / "reports.json").returncode == 1


def test_check_on_a_descriptor_points_at_validate():
    proc = script("check", DOC_EXAMPLE)
    assert proc.returncode == 2
    assert (
        "dmltile validate" in proc.stderr
        and "ParseError" not in proc.stderr
        and "Traceback" not in proc.stderr
    )


def test_the_levels_table_and_the_readme_say_the_same_about_levels_between_rows():
    phrase = "nearest row at or below it"
    assert phrase in " ".join(script("levels").stdout.split())
    assert phrase in (ROOT / "README.md").read_text().replace("\n", " ")


def test_a_directory_of_only_other_json_is_no_descriptor_at_all(tmp_path):
    (tmp_path / "tile.schema.json").write_text(script("schema").stdout)
    proc = script("validate", tmp_path)
    assert (
        proc.returncode == 2 and "holds no *.json descriptor files (1 other JSON file skipped)" in proc.stderr
    )


def test_the_readme_poison_padding_example_has_padding_to_poison(tmp_path):
    line = next(
        line
        for line in (ROOT / "README.md").read_text().splitlines()
        if "--poison-padding" in line and "run " in line
    )
    args = line.split("dmltile", 1)[1].split()
    (tmp_path / "examples").symlink_to(EXAMPLES, target_is_directory=True)
    proc = script(*args, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    poisoned = int(re.search(r"(\d+) padding bytes poisoned with 0xCD", proc.stdout).group(1))
    assert poisoned > 0
    data = (tmp_path / "out.bin").read_bytes()
    assert data.count(0xCD) >= poisoned
