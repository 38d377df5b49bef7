"""Nothing lost, nothing hangs: every file a command writes is written atomically and
checked, an existing file is replaced only with --force (or fmt -w on its own input), special files
are refused before they are opened, and a broken pipe ends quietly with the command's status.

The full-disk cases run the real script in a subprocess: /dev/full, and RLIMIT_FSIZE 0 (what
``ulimit -f 0`` sets) via preexec_fn; every subprocess has a timeout, so a hang fails the test."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys

import numpy as np
import pytest

from tests.cli_support import DOC_EXAMPLE, EXAMPLES, ROOT, SCRIPT, invoke, script

pytestmark = pytest.mark.skipif(sys.platform == "win32", reason="POSIX files and limits")
SHORT = EXAMPLES / "valid_short_form.json"


def no_file_writes():
    resource.setrlimit(resource.RLIMIT_FSIZE, (0, resource.RLIM_INFINITY))


def script_full_disk(*args, cwd, env=None):
    """The real script with a file-size limit of 0 bytes: every write fails as on a full disk."""
    if not SCRIPT.exists():
        pytest.skip("the dmltile script is not installed")
    return subprocess.run(
        [str(SCRIPT), *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=60,
        preexec_fn=no_file_writes,
        env=env,
    )


def _listing(folder):
    return sorted(p.name for p in folder.iterdir())


@pytest.mark.parametrize(
    "args, target",
    [
        (("fmt", "-w", "d.json"), "d.json"),
        (("export", DOC_EXAMPLE, "--dxdispatch", "-o", "d.json", "--force"), "d.json"),
        (("run", DOC_EXAMPLE, "--output", "d.npy", "--force"), "d.npy"),
        (("run", DOC_EXAMPLE, "--output-buffer", "d.bin", "--force"), "d.bin"),
        (("explain", DOC_EXAMPLE, "--svg", "d.svg", "--force"), "d.svg"),
    ],
    ids=["fmt -w", "export -o", "run --output", "run --output-buffer", "explain --svg"],
)
def test_a_full_disk_is_an_error_and_the_old_file_is_intact(tmp_path, args, target):
    old = SHORT.read_bytes()
    (tmp_path / target).write_bytes(old)
    done = script_full_disk(*args, cwd=tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    assert "cannot write (File too large)" in done.stderr and "unchanged" in done.stderr
    assert (tmp_path / target).read_bytes() == old
    assert _listing(tmp_path) == [target]  # no temporary file left behind


def test_a_full_disk_with_no_old_file_leaves_nothing(tmp_path):
    done = script_full_disk("run", DOC_EXAMPLE, "--output-buffer", "out.bin", cwd=tmp_path)
    assert done.returncode == 2 and "cannot write" in done.stderr
    assert _listing(tmp_path) == []


@pytest.mark.skipif(not os.path.exists("/dev/full"), reason="needs /dev/full")
def test_dev_full_is_refused_not_reported_as_saved():
    for extra in ((), ("--force",)):
        done = script("run", DOC_EXAMPLE, "--output-buffer", "/dev/full", *extra)
        assert done.returncode == 2 and "not a regular file" in done.stderr + done.stdout
        assert "saved" not in done.stdout


@pytest.mark.parametrize(
    "args, target",
    [
        (("export", DOC_EXAMPLE, "--dxdispatch", "-o"), "t.json"),
        (("run", DOC_EXAMPLE, "--output"), "t.npy"),
        (("run", DOC_EXAMPLE, "--output-buffer"), "t.bin"),
        (("explain", DOC_EXAMPLE, "--svg"), "t.svg"),
    ],
)
def test_an_existing_file_is_replaced_only_with_force(tmp_path, args, target):
    path = tmp_path / target
    path.write_text("precious")
    refused = invoke(*args, path)
    assert refused.exit_code == 2 and "already exists; pass --force" in refused.output
    assert path.read_text() == "precious"
    replaced = invoke(*args, path, "--force")
    assert replaced.exit_code == 0, replaced.output
    assert path.read_text(errors="replace") != "precious"


def test_export_expect_checks_both_files_before_writing_either(tmp_path):
    (tmp_path / "t.expected.npy").write_text("precious")
    refused = invoke("export", DOC_EXAMPLE, "--dxdispatch", "-o", tmp_path / "t.json", "--expect")
    assert refused.exit_code == 2 and "t.expected.npy already exists" in refused.output
    assert _listing(tmp_path) == ["t.expected.npy"]
    done = invoke("export", DOC_EXAMPLE, "--dxdispatch", "-o", tmp_path / "t.json", "--expect", "--force")
    assert done.exit_code == 0 and np.load(tmp_path / "t.expected.npy").size == 54


def test_export_expect_onto_a_directory_is_a_clear_error_and_nothing_is_written(tmp_path):
    (tmp_path / "t.expected.npy").mkdir()
    for extra in ((), ("--force",)):
        done = invoke("export", DOC_EXAMPLE, "--dxdispatch", "-o", tmp_path / "t.json", "--expect", *extra)
        assert done.exit_code == 2 and "t.expected.npy is a directory" in done.output
        assert _listing(tmp_path) == ["t.expected.npy"]


def test_run_output_names_the_file_it_really_writes(tmp_path):
    done = invoke("run", DOC_EXAMPLE, "--output", tmp_path / "result")
    assert done.exit_code == 0 and f"{tmp_path / 'result.npy'}" in " ".join(done.stdout.split())
    assert _listing(tmp_path) == ["result.npy"]
    assert np.load(tmp_path / "result.npy").shape == (1, 1, 6, 9)


def test_fmt_w_rewrites_its_own_input_atomically(tmp_path):
    path = tmp_path / "d.json"
    path.write_text(SHORT.read_text())
    os.chmod(path, 0o640)
    done = invoke("fmt", "-w", path)
    assert done.exit_code == 0 and json.loads(path.read_text())["Type"] == "DML_OPERATOR_TILE"
    assert path.stat().st_mode & 0o777 == 0o640  # the file keeps its permissions
    assert _listing(tmp_path) == ["d.json"]


def test_fmt_w_through_a_symlink_rewrites_the_target_and_keeps_the_link(tmp_path):
    target = tmp_path / "real.json"
    target.write_text(SHORT.read_text())
    (tmp_path / "link.json").symlink_to(target)
    assert invoke("fmt", "-w", tmp_path / "link.json").exit_code == 0
    assert (tmp_path / "link.json").is_symlink()
    assert json.loads(target.read_text())["Type"] == "DML_OPERATOR_TILE"


def test_fmt_w_refuses_a_dxdispatch_model_and_leaves_it_as_it_was(tmp_path):
    model = json.loads(invoke("export", DOC_EXAMPLE, "--dxdispatch").stdout)
    model["dispatchables"]["other"] = {"type": "DML_OPERATOR_ELEMENT_WISE_IDENTITY", "desc": {}}
    path = tmp_path / "model.json"
    path.write_text(json.dumps(model))
    before = path.read_bytes()
    done = invoke("fmt", "-w", path)
    assert done.exit_code == 2 and "DxDispatch model" in done.output and "unchanged" in done.output
    assert path.read_bytes() == before


@pytest.fixture
def fifo(tmp_path):
    if not hasattr(os, "mkfifo"):
        pytest.skip("needs named pipes")
    os.mkfifo(tmp_path / "p")
    np.save(tmp_path / "x.npy", np.zeros(54, np.float32))
    return tmp_path / "p"


@pytest.mark.parametrize(
    "args",
    [
        ("export", "{p}", "--dxdispatch"),
        ("check", "{p}"),
        ("run", DOC_EXAMPLE, "--input", "{p}"),
        ("run", DOC_EXAMPLE, "--input-buffer", "{p}"),
        ("export", DOC_EXAMPLE, "--dxdispatch", "--input", "{p}"),
        ("compare-dxdispatch", "{p}", "{x}"),
        ("compare-dxdispatch", "{x}", "{p}"),
        ("validate", "{p}"),
        ("fmt", "{p}"),
        ("explain", "{p}"),
        ("run", "{p}"),
    ],
    ids=lambda a: " ".join(str(x) for x in a).replace(str(DOC_EXAMPLE), "doc"),
)
def test_a_fifo_never_hangs_a_command(fifo, args):
    real = [str(a).format(p=fifo, x=fifo.parent / "x.npy") for a in args]
    done = script(*real, timeout=30)  # a hang fails with TimeoutExpired
    assert done.returncode == 2 and "not a regular file" in done.stderr + done.stdout


@pytest.mark.skipif(not os.path.exists("/dev/zero"), reason="needs /dev/zero")
@pytest.mark.parametrize(
    "args",
    [
        ("export", "/dev/zero", "--dxdispatch"),
        ("check", "/dev/zero"),
        ("compare-dxdispatch", "/dev/zero", "{x}"),
        ("run", DOC_EXAMPLE, "--input", "/dev/zero"),
        ("run", DOC_EXAMPLE, "--input-buffer", "/dev/zero"),
    ],
)
def test_dev_zero_is_refused_not_read(args, tmp_path):
    np.save(tmp_path / "x.npy", np.zeros(54, np.float32))
    done = script(*[str(a).format(x=tmp_path / "x.npy") for a in args], timeout=30)
    assert done.returncode == 2 and "not a regular file" in done.stderr + done.stdout


def test_a_sparse_input_buffer_is_read_only_as_far_as_needed(tmp_path):
    path = tmp_path / "in.bin"
    with open(path, "wb") as f:  # 6 GiB on paper, 24 bytes of data
        f.write(np.arange(6, dtype=np.float32).tobytes())
        f.truncate(6 << 30)
    done = script("run", DOC_EXAMPLE, "--input-buffer", path, "--output", tmp_path / "y.npy", timeout=60)
    assert done.returncode == 0, done.stderr
    assert np.array_equal(np.load(tmp_path / "y.npy").ravel()[:3], [0, 1, 2])


def test_a_huge_npy_header_is_refused_before_allocating(tmp_path):
    path = tmp_path / "x.npy"
    with open(path, "wb") as f:
        np.lib.format.write_array_header_1_0(f, {"descr": "<f4", "fortran_order": False, "shape": (1 << 40,)})
    done = script("run", DOC_EXAMPLE, "--input", path)
    assert done.returncode == 2 and "holds only 0 bytes" in done.stderr


def test_an_aliasing_output_is_refused_before_any_work(tmp_path):
    desc = {
        "InputTensor": {"DataType": "UINT8", "Sizes": [1, 1]},
        "OutputTensor": {
            "DataType": "UINT8",
            "Sizes": [32768, 32768],
            "Strides": [0, 0],
            "TotalTensorSizeInBytes": 4,
        },
        "Repeats": [32768, 32768],
    }
    path = tmp_path / "alias.json"
    path.write_text(json.dumps(desc))
    # DirectML rejects output strides that alias (DML109), so validation refuses it first.
    done = script("run", path, "--output-buffer", tmp_path / "o.bin", timeout=60)
    assert done.returncode == 1 and "DML109" in done.stdout
    done = script("export", path, "--dxdispatch", "-o", tmp_path / "t.json", "--expect", timeout=60)
    assert done.returncode == 1 and "DML109" in done.stdout + done.stderr
    assert _listing(tmp_path) == ["alias.json"]


def test_duplicate_keys_are_invalid_naming_the_key(tmp_path):
    path = tmp_path / "d.json"
    text = SHORT.read_text()
    path.write_text(text.replace('"Repeats"', '"Repeats": [9], "Repeats"', 1))
    done = invoke("validate", path)
    assert done.exit_code == 1 and "DML003" in done.output and '"Repeats" appears twice' in done.output


def _pipe_status(*args) -> tuple[int, str]:
    """Run ``dmltile args | head -c 1`` and return dmltile's own exit status and its stderr."""
    producer = subprocess.Popen(
        [str(SCRIPT), *map(str, args)], stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=ROOT
    )
    head = subprocess.run(["head", "-c", "1"], stdin=producer.stdout, capture_output=True, timeout=60)
    producer.stdout.close()
    err = producer.stderr.read().decode()
    producer.stderr.close()
    assert head.returncode == 0
    return producer.wait(timeout=60), err


def _many_tile_nodes(path, repeats) -> None:
    """An ONNX model of 3,000 Tile nodes: `check` prints about 250 KB, far past a pipe's buffer."""
    onnx = pytest.importorskip("onnx")
    from onnx import TensorProto, helper, numpy_helper

    x = helper.make_tensor_value_info("x", TensorProto.FLOAT, [2, 3])
    nodes = [helper.make_node("Tile", ["x", "r"], [f"y{i}"], name=f"tile{i}") for i in range(3000)]
    outs = [helper.make_tensor_value_info(f"y{i}", TensorProto.FLOAT, None) for i in range(3000)]
    init = numpy_helper.from_array(np.array(repeats, np.int64), "r")
    graph = helper.make_graph(nodes, "g", [x], outs, initializer=[init])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)])
    model.ir_version = 10  # one every measured onnxruntime loads (DML508)
    onnx.save(model, path)


@pytest.mark.parametrize("repeats, status", [([1, 2], 0), ([1, -2], 1)], ids=["all dispatch", "invalid"])
def test_check_into_a_closed_pipe_exits_with_the_verdict_not_1(tmp_path, repeats, status):
    if not SCRIPT.exists():
        pytest.skip("the dmltile script is not installed")
    _many_tile_nodes(tmp_path / "m.onnx", repeats)
    code, err = _pipe_status("check", tmp_path / "m.onnx")
    assert code == status and err == "", err


@pytest.mark.parametrize(
    "args, status",
    [
        (("schema",), 0),
        (("validate", EXAMPLES / "invalid_zero_repeat.json", "--all-levels", "--json"), 1),
        (("run", DOC_EXAMPLE, "--seed", "1"), 0),
    ],
)
def test_a_broken_pipe_ends_quietly_with_the_commands_status(args, status):
    if not SCRIPT.exists():
        pytest.skip("the dmltile script is not installed")
    code, err = _pipe_status(*args)
    assert code == status and "Traceback" not in err and "error" not in err.lower(), err
