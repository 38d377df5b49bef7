"""Every file a command writes goes through ``write_atomic``: nothing is lost, nothing half-written.

The data goes to a temporary file beside the target, is flushed and fsynced, and only then replaces
the target with ``os.replace`` (atomic on one file system). Any failure (a full disk, a file-size
limit, no permission) removes the temporary file, leaves the old target exactly as it was, and
raises WriteError. A target that already exists is replaced only when the caller says so
(``--force``, or ``fmt -w`` on its own input); a target that is not a regular file (a directory, a
device such as /dev/full, a pipe) is never replaced.
"""

from __future__ import annotations

import os
import stat
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import IO

from ..errors import WriteError


def check_target(path: Path, what: str, force: bool) -> None:
    """Raise WriteError unless ``path`` may be written: missing, or an existing regular file with ``force``."""
    try:
        mode = os.stat(path).st_mode
    except FileNotFoundError:
        parent = path.parent if str(path.parent) else Path(".")
        if not parent.is_dir():
            raise WriteError(f"{what} {path}: the folder {parent} does not exist") from None
        return
    except OSError as e:
        raise WriteError(f"{what} {path}: cannot write ({e.strerror or e})") from None
    if stat.S_ISDIR(mode):
        raise WriteError(f"{what} {path} is a directory; give a file name")
    if not stat.S_ISREG(mode):
        raise WriteError(
            f"{what} {path} is not a regular file (a device, pipe or socket); dmltile writes regular files only"
        )
    if not force:
        raise WriteError(f"{what} {path} already exists; pass --force to replace it")


def check_targets(targets: Sequence[tuple[Path, str]], force: bool) -> None:
    """Check every file a command will write before writing any (so none is left half-done)."""
    for path, what in targets:
        check_target(path, what, force)


def write_atomic(path: Path, write: Callable[[IO[bytes]], object], what: str, force: bool = False) -> None:
    """Write a file atomically: ``write(f)`` fills a temporary file beside ``path``, which is flushed,
    fsynced and moved over ``path``. WriteError (the old file intact) on any failure."""
    path = Path(path)
    if path.is_symlink() and force:
        path = Path(os.path.realpath(path))  # replace the file the link points to, and keep the link
    check_target(path, what, force)
    parent = path.parent if str(path.parent) else Path(".")
    try:
        old_mode = stat.S_IMODE(os.stat(path).st_mode)
    except OSError:
        old_mode = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent)
    except OSError as e:
        raise WriteError(f"{what} {path}: cannot write ({e.strerror or e})") from None
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        os.chmod(tmp, old_mode if old_mode is not None else 0o666 & ~_umask())
        os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            kept = " (the existing file is unchanged)" if old_mode is not None else ""
            raise WriteError(f"{what} {path}: cannot write ({e.strerror or e}){kept}") from None
        raise
    _sync_folder(parent)


def write_text(path: Path, text: str, what: str, force: bool = False) -> None:
    """``write_atomic`` for text (UTF-8)."""
    data = text.encode("utf-8")
    write_atomic(path, lambda f: f.write(data), what, force)


def _umask() -> int:
    mask = os.umask(0)
    os.umask(mask)
    return mask


def _sync_folder(folder: Path) -> None:
    """fsync the folder so the rename itself survives a crash (where the platform allows it)."""
    try:
        fd = os.open(folder, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)
