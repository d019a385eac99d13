"""``python -m skbmodel``: the model's subcommands (skbmodel.cli) plus ``export`` from the view layer.

This entry point is the one place in the package that knows about skbview (charts, reports); no module
of skbmodel imports it, so the model itself imports only numpy, pandas and the standard library.
"""
import sys

from skbview.cli_export import add_parser as add_export_parser

from .cli import main

sys.exit(main(extra=(add_export_parser,)))
