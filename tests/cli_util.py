"""``python -m skbmodel ARGS`` as a function call in the test process (importable; not tests).

The command line is one function, ``skbmodel.cli.main`` with the view layer's ``export`` added (what
``skbmodel/__main__.py`` runs): calling it here runs the same parser, the same commands and the same
refusals as a new interpreter would, without paying a Python start-up and the model's imports for
every call. Tests of the process itself (its exit status through ``sys.exit``, what a fresh interpreter
imports) keep a real subprocess: tests/test_answers.py, tests/test_placement.py, tests/test_layers.py."""
from __future__ import annotations

import contextlib
import io
import os
from dataclasses import dataclass
from pathlib import Path

REPO_ROOT = Path(__file__).resolve().parent.parent


@dataclass
class Run:
    """What a finished command left: the fields of ``subprocess.CompletedProcess`` the tests read."""
    args: list[str]
    returncode: int
    stdout: str
    stderr: str


def _exit_code(e: SystemExit) -> int:
    """The status ``sys.exit(code)`` gives a process (argparse exits 2 on bad arguments, 0 after --help)."""
    if e.code is None:
        return 0
    return e.code if isinstance(e.code, int) else 1


def skbmodel_cli(*args, cwd: str | os.PathLike = REPO_ROOT) -> Run:
    """Run ``python -m skbmodel *args`` in this process, from ``cwd``, and return its exit status and
    output (stdout and stderr as text)."""
    from skbmodel.cli import main
    from skbview.cli_export import add_parser as add_export_parser

    argv = [str(a) for a in args]
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    os.chdir(cwd)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            try:
                rc = main(argv, extra=(add_export_parser,))
            except SystemExit as e:
                rc = _exit_code(e)
    finally:
        os.chdir(here)
    return Run(argv, int(rc), out.getvalue(), err.getvalue())


def script_main(path: str | os.PathLike, *args) -> Run:
    """Run ``python scripts/NAME.py *args`` in this process (its ``main(argv)``) from the repository root."""
    import importlib.util

    path = Path(path)
    spec = importlib.util.spec_from_file_location(f"_script_{path.stem}", path)
    mod = importlib.util.module_from_spec(spec)
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    os.chdir(REPO_ROOT)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            spec.loader.exec_module(mod)
            try:
                rc = mod.main([str(a) for a in args])
            except SystemExit as e:
                rc = _exit_code(e)
    finally:
        os.chdir(here)
    return Run([str(path), *map(str, args)], int(rc or 0), out.getvalue(), err.getvalue())
