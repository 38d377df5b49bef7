"""Reading .npy arrays given by users: plain arrays only, with errors that say what the file is."""

from __future__ import annotations

from pathlib import Path

import numpy as np

from ..errors import InputError

NPY_MAGIC = b"\x93NUMPY"


def read_npy(path: str | Path) -> np.ndarray:
    """The array in a .npy file. InputError (naming the file) for a missing file, a file that is not
    .npy, an object (pickled) array, or a truncated one; pickles are never loaded."""
    path = Path(path)
    try:
        with open(path, "rb") as f:
            if f.read(len(NPY_MAGIC)) != NPY_MAGIC:
                raise InputError(
                    f"{path}: not a .npy file (it does not start with NumPy's magic bytes); "
                    "save arrays with numpy.save"
                )
        return np.load(path, allow_pickle=False)
    except InputError:
        raise
    except FileNotFoundError:
        raise InputError(f"{path}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{path} is a directory, not a .npy file") from None
    except ValueError as e:
        if "pickle" in str(e):
            raise InputError(
                f"{path}: holds Python objects, not numbers; dmltile reads plain numeric arrays only"
            ) from None
        raise InputError(f"{path}: not a readable .npy array ({e})") from None
    except (OSError, EOFError) as e:
        raise InputError(f"{path}: cannot read ({getattr(e, 'strerror', None) or e})") from None
