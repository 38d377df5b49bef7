"""The ``dmltile`` command line (typer + rich). Each module in this package registers its commands."""

from __future__ import annotations

from .app import app, main  # noqa: F401
from . import validate  # noqa: F401,E402  (registers commands on import)
from . import check  # noqa: F401,E402
from . import dxdispatch  # noqa: F401,E402  (export --dxdispatch, compare-dxdispatch)
from . import explain  # noqa: F401,E402
from . import run  # noqa: F401,E402
from . import authoring  # noqa: F401,E402
from . import info  # noqa: F401,E402
