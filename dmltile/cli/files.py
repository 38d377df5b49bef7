"""Every file a command writes goes through ``write_atomic``: nothing is lost, nothing half-written.

The data goes to a temporary file beside the target, is flushed and fsynced, and only then replaces
the target with ``os.replace`` (atomic on one file system), with the old file's mode, owner and group
copied onto it. Any failure (a full disk, a file-size limit, no permission) removes the temporary
file, leaves the old target exactly as it was, and raises WriteError. Two kinds of file cannot be
replaced without losing something, and are written in place instead, once the whole new text is
complete and checked and a temporary copy of it has been written (so a full disk is found before
the file is touched): a file with other hard links (a new file would leave them holding the old
text), and one whose owner the copy could not be given.

A target that already exists is replaced only when the caller says so (``--force``, or ``--fix`` and
``fmt -w`` on their own input); a read-only one only with ``--force``; a target that is not a
regular file (a directory, a device such as /dev/full, a pipe) is never replaced.

Text files are written back as they were read (``read_text_form``, ``encode_text``): in their
encoding (UTF-8, UTF-16 or UTF-32), with their byte order mark, and with their line endings.
"""

from __future__ import annotations

import codecs
import json
import os
import stat
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import IO

from ..errors import InputError, WriteError
from ..validate.source import read_regular


def check_target(path: Path, what: str, force: bool, replace: bool = False) -> None:
    """Raise WriteError unless ``path`` may be written: missing, or an existing regular file with
    ``force`` (or ``replace``: the command rewrites its own input), and a read-only one with ``force``."""
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
    if not (force or replace):
        raise WriteError(f"{what} {path} already exists; pass --force to replace it")
    if not force and not mode & 0o222:
        raise WriteError(
            f"{what} {path} is read-only (mode {stat.S_IMODE(mode):04o}); pass --force to write it"
        )


def check_targets(targets: Sequence[tuple[Path, str]], force: bool) -> None:
    """Check every file a command will write before writing any (so none is left half-done)."""
    for path, what in targets:
        check_target(path, what, force)


def write_atomic(
    path: Path, write: Callable[[IO[bytes]], object], what: str, force: bool = False, replace: bool = False
) -> None:
    """Write a file atomically: ``write(f)`` fills a temporary file beside ``path``, which is flushed,
    fsynced and moved over ``path`` with the old file's mode and owner; written in place instead where
    moving would lose a hard link or the owner. WriteError (the old file intact) on any failure."""
    path = Path(path)
    if path.is_symlink() and (force or replace):
        path = Path(os.path.realpath(path))  # replace the file the link points to, and keep the link
    check_target(path, what, force, replace)
    parent = path.parent if str(path.parent) else Path(".")
    try:
        old: os.stat_result | None = os.stat(path)
    except OSError:
        old = None
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{path.name}.", suffix=".tmp", dir=parent)
    except OSError as e:
        raise WriteError(f"{what} {path}: cannot write ({e.strerror or e})") from None
    try:
        with os.fdopen(fd, "wb") as f:
            write(f)
            f.flush()
            os.fsync(f.fileno())
        if old is not None and (old.st_nlink > 1 or not _same_owner(tmp, old)):
            _write_in_place(path, Path(tmp))
            os.unlink(tmp)
        else:
            os.chmod(tmp, stat.S_IMODE(old.st_mode) if old is not None else 0o666 & ~_umask())
            os.replace(tmp, path)
    except BaseException as e:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        if isinstance(e, OSError):
            kept = " (the existing file is unchanged)" if old is not None else ""
            raise WriteError(f"{what} {path}: cannot write ({e.strerror or e}){kept}") from None
        raise
    _sync_folder(parent)


def _same_owner(tmp: str, old: os.stat_result) -> bool:
    """Give the temporary file the old file's owner and group; whether it now has them."""
    try:
        os.chown(tmp, old.st_uid, old.st_gid)
    except OSError:
        pass
    now = os.stat(tmp)
    return (now.st_uid, now.st_gid) == (old.st_uid, old.st_gid)


def _write_in_place(path: Path, new: Path) -> None:
    """Copy the complete, fsynced ``new`` file's bytes into ``path`` itself (its inode, so its links,
    owner and mode stay), then cut it to their length. On a failure the old bytes are put back."""
    data = new.read_bytes()
    with open(path, "r+b") as f:
        before = f.read()
        try:
            f.seek(0)
            f.write(data)
            f.truncate()
            f.flush()
            os.fsync(f.fileno())
        except OSError:
            f.seek(0)
            f.write(before)
            f.truncate()
            raise


def write_text(
    path: Path, text: str, what: str, force: bool = False, form: TextForm | None = None, replace: bool = False
) -> None:
    """``write_atomic`` for text, encoded as ``form`` says (default: UTF-8, no BOM, as written)."""
    data = encode_text(text, form or TextForm())
    write_atomic(path, lambda f: f.write(data), what, force, replace)


@dataclass(frozen=True)
class TextForm:
    """How a text file's characters are stored: its encoding, byte order mark and line endings."""

    encoding: str = "utf-8"
    bom: bytes = b""
    newline: str = "\n"


_BOMS = (  # UTF-32's marks first: UTF-32-LE's starts with UTF-16-LE's
    (codecs.BOM_UTF32_LE, "utf-32-le"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16-le"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
)


def read_text_form(path: Path) -> tuple[str, TextForm]:
    """A descriptor file's text (line endings as ``\\n``) and the form to write it back in: UTF-8,
    UTF-16 or UTF-32 (as JSON may be stored, told by a byte order mark or by where the zero bytes
    of the first characters are), the mark, and CRLF, CR or LF endings. InputError when the bytes
    are not text in that encoding."""
    data = read_regular(path, "descriptor")
    bom, encoding = next(((b, e) for b, e in _BOMS if data.startswith(b)), (b"", ""))
    encoding = encoding or json.detect_encoding(data)
    try:
        text = data[len(bom) :].decode(encoding)
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not {encoding.upper()} text ({e.reason} at byte {e.start})") from None
    newline = "\r\n" if "\r\n" in text else ("\r" if "\r" in text and "\n" not in text else "\n")
    return text.replace(newline, "\n") if newline != "\n" else text, TextForm(encoding, bom, newline)


def encode_text(text: str, form: TextForm) -> bytes:
    """``text`` (``\\n`` line endings) as ``form`` stores it."""
    if form.newline != "\n":
        text = text.replace("\n", form.newline)
    return form.bom + text.encode(form.encoding)


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
