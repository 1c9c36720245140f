"""The command line: the same handlers as the window, printed as text or JSON."""

from __future__ import annotations

import json
import os
import sys
from typing import Sequence

from embviz.cli.commands import run_command
from embviz.cli.parser import build_parser

__all__ = ["build_parser", "main", "run_command"]


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        from embviz.ui.app import run_app

        return run_app(model=args.model, device=args.device, session=args.session)
    if args.command == "screenshot":
        from embviz.ui.screenshots import run_screenshots

        return _guarded(lambda: run_screenshots(args.out, model=args.model, device=args.device, text_size=args.text_size))
    def run() -> int:
        obj, text = run_command(args)
        if getattr(args, "json", False):
            print(json.dumps(obj, ensure_ascii=False))
        else:
            print(text)
        return 0

    return _guarded(run)


def _guarded(fn) -> int:
    """One plain line on stderr and a non-zero exit for any failure; no traceback."""
    from embviz.core.errors import EmbvizError

    try:
        return fn()
    except EmbvizError as exc:
        print(f"embviz: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        print("embviz: interrupted", file=sys.stderr)
        return 130
    except Exception as exc:  # the last line of defence: never a traceback
        if os.environ.get("EMBVIZ_DEBUG"):
            raise
        from embviz.core.errors import first_line

        print(f"embviz: unexpected error ({type(exc).__name__}: {first_line(exc)})", file=sys.stderr)
        return 1
