"""The built wheel carries the feature-level tables and works from outside the source tree."""

import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from dmltile.execute.fast.kernel import LIBRARY

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
    for page in ("playground.js", "playground.css", "explanation.js", "explanation.css"):
        assert f"dmltile/teach/static/{page}" in names  # the teaching pages' script and styles
    for report in ("validate", "check", "levels", "rules", "doctor", "compare-dxdispatch", "error"):
        assert f"dmltile/cli/schemas/{report}.schema.json" in names  # the --json reports' schemas
    for source in ("runner.c", "ort_runner.c", "json_lines.h", "file_version.h", "dml_types.h", "setup.sh"):
        assert f"dmltile/execute/directml/{source}" in names  # setup.sh builds the runners from these


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory):
    """The wheel installed into a folder of its own (put first on sys.path by each check)."""
    target = tmp_path_factory.mktemp("site")
    subprocess.run(
        [sys.executable, "-m", "pip", "install", "--quiet", "--no-deps", "--target", str(target), str(wheel)],
        check=True,
        capture_output=True,
    )
    return target


def test_installed_wheel_validates_outside_the_source_tree(installed, tmp_path):
    target = installed
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


def test_the_wheel_carries_and_loads_its_copy_kernel(wheel, installed, tmp_path):
    # The build hook compiles fast/c/kernel.c into the wheel (a platform wheel then) when a C
    # compiler exists; the installed package loads that library, not the checkout's.
    if not any(shutil.which(cc) for cc in ("cc", "gcc", "clang")):
        pytest.skip("no C compiler here: the wheel is pure Python and plans run on NumPy alone")
    assert f"dmltile/execute/fast/c/{LIBRARY}" in zipfile.ZipFile(wheel).namelist()
    assert not wheel.name.endswith("-none-any.whl"), wheel.name
    target = installed
    script = (
        "import sys; sys.path.insert(0, sys.argv[1])\n"
        "from dmltile.execute.fast import kernel\n"
        "print(kernel.loaded() is not None, kernel.library_path().is_relative_to(sys.argv[1]))\n"
    )
    run = subprocess.run(
        [sys.executable, "-I", "-c", script, str(target)], cwd=tmp_path, capture_output=True, text=True
    )
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["True", "True"]
