"""`masc-ui` command line (one module per command group): parse and check the arguments, take the use cases from the
workbench (`common.open_workbench`, the app's composition root), print. No business logic, no storage, no models here:
an argument error is said before anything heavy (torch, transformers, gradio) is imported.

The acting user of every command is `CLI_USER` (None: the local operator, who runs it on their own machine)."""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence

from ..errors import WorkbenchError
from .analysis import add_agreement, add_leaderboard
from .batch import add_batch
from .common import CATALOGUE_FLAGS, CLI_USER, one_line, settings_from_args
from .datasets import add_export, add_import, add_push
from .db import add_db
from .demo_weights import add_demo_weights
from .gold import add_gold
from .guide import add_guide
from .raters import add_raters
from .score import add_metrics, add_score
from .segment import add_segment
from .serve import add_serve
from .study import add_study
from .users import add_users

__all__ = ["CATALOGUE_FLAGS", "CLI_USER", "build_parser", "main", "settings_from_args"]

COMMANDS: list[Callable[[argparse._SubParsersAction], None]] = [
    add_demo_weights,
    add_score,
    add_metrics,
    add_segment,
    add_import,
    add_batch,
    add_agreement,
    add_leaderboard,
    add_gold,
    add_guide,
    add_raters,
    add_study,
    add_export,
    add_push,
    add_db,
    add_serve,
    add_users,
]


class _Parser(argparse.ArgumentParser):
    """argparse with one-line usage errors (exit status 2, like every other error of the command line)."""

    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"error: {self.prog}: {one_line(message)} (see `{self.prog} --help`)", file=sys.stderr)
        raise SystemExit(2)


def build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="masc-ui", description="MaSC Workbench command line")
    sub = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for add in COMMANDS:
        add(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Run one command. Every error is one line on stderr and exit status 2 (argparse's usage errors too); an
    unexpected failure says so on that line."""
    try:
        args = build_parser().parse_args(argv)
        return int(args.func(args) or 0)
    except WorkbenchError as exc:
        print(f"error: {one_line(getattr(exc, 'detail', None) or str(exc))}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
    except SystemExit:
        raise
    except UnicodeError as exc:
        print(
            f"error: {one_line(f'text that is not valid UTF-8 ({exc}); save the file or argument as UTF-8')}",
            file=sys.stderr,
        )
        return 2
    except (OSError, MemoryError) as exc:
        print(f"error: {one_line(f'{type(exc).__name__}: {exc}')}", file=sys.stderr)
        return 2
    except Exception as exc:
        print(
            f"error: unexpected {type(exc).__name__}: {one_line(str(exc))} (this is a bug: please report it "
            "with the command that failed)",
            file=sys.stderr,
        )
        return 2
