"""Drive the real DirectML.dll: CreateOperator verdicts and executions of Tile descriptors.

The driver imports the standard library and ``core/layout`` only, so that ``standalone.py`` can
load it without dmltile (the set-up script runs it with any Python; the golden-data generator
loads it by path). Its modules, by job:

    installation    where the runner, the DLLs and the Wine environment are (or what is missing)
    pe_version      a DLL's FileVersion from its PE resource
    process         the runner process under Wine/Xvfb (natively on Windows), one session at a time
    version_table   the installed versions and their max feature levels (``versions.json``)
    c_view          a descriptor as the runner's C structs
    cases           a case (descriptor and buffers) as one runner line
    batch           many cases through one version, one answer each
    command_line    ``record-versions | versions | problem | run VERSION``

On Linux the runner (``runner.c`` built by ``setup.sh``) runs under Wine 8 + vkd3d over Mesa's
lavapipe inside ``xvfb-run``; on Windows ``runner.exe`` runs natively. Both speak one JSON object
per line: one descriptor in, one answer out (see ``runner.c``).

The public face, gathered here::

    setup = find_setup()                  # Setup, or None (then setup_problem() says why)
    list_versions()                       # [{"directml_version": "1.15.4", "max_feature_level": "6.4", ...}]
    run_cases(cases, version="1.15.4")    # [{"id": ..., "hresult": 0, "accepted": True, ...}]
"""

from __future__ import annotations

from .batch import run_cases
from .c_view import to_c_view
from .installation import (
    INSTALL_COMMAND,
    SETUP_SCRIPT,
    OracleError,
    Setup,
    default_home,
    find_setup,
    require_setup,
    setup_problem,
)
from .process import end_wine, parse_lines, runner_command, session
from .version_table import list_versions, record_versions, resolve_version, version_key

__all__ = [
    "INSTALL_COMMAND",
    "SETUP_SCRIPT",
    "OracleError",
    "Setup",
    "default_home",
    "end_wine",
    "find_setup",
    "list_versions",
    "parse_lines",
    "record_versions",
    "require_setup",
    "resolve_version",
    "run_cases",
    "runner_command",
    "session",
    "setup_problem",
    "to_c_view",
    "version_key",
]
