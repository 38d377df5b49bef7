"""The built wheel carries the feature-level tables and works from outside the source tree."""

import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent

pytestmark = pytest.mark.wheel


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    out = tmp_path_factory.mktemp("dist")
    subprocess.run(
        [sys.executable, "-m", "hatchling", "build", "-t", "wheel", "-d", str(out)],
        cwd=ROOT,
        check=True,
        capture_output=True,
    )
    (whl,) = out.glob("dmltile-*.whl")
    return whl


def test_wheel_contains_the_tables(wheel):
    names = zipfile.ZipFile(wheel).namelist()
    assert "dmltile/feature_levels/tile.toml" in names and "dmltile/feature_levels/levels.toml" in names
    assert "dmltile/feature_levels/operator_types.txt" in names
    for report in ("validate", "check", "levels", "rules", "doctor", "compare-dxdispatch", "error"):
        assert f"dmltile/cli/schemas/{report}.schema.json" in names  # the --json reports' schemas


def test_installed_wheel_validates_outside_the_source_tree(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    script = (
        "import dmltile, pathlib, sys\n"
        "assert pathlib.Path(dmltile.__file__).is_relative_to(sys.argv[1]), dmltile.__file__\n"
        "from importlib import resources\n"
        "tables = pathlib.Path(str(resources.files('dmltile').joinpath('feature_levels')))\n"
        "assert tables.is_relative_to(sys.argv[1]) and (tables / 'tile.toml').is_file(), tables\n"
        "d = dmltile.tile_desc([2, 3], [2, 2], 'INT64')\n"
        "print(dmltile.validate(d, '3.1').codes, dmltile.min_feature_level(d).dotted)\n"
    )
    run = subprocess.run(
        [
            sys.executable,
            "-I",
            "-c",
            f"import sys; sys.path.insert(0, {str(target)!r}); exec({script!r})",
            str(target),
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "['DML302', 'DML302'] 4.1"
