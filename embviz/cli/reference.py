"""The command line's reference page, rendered from the argparse parser itself.

`python -m embviz.cli.reference` prints it; `python -m embviz.cli.reference docs/cli.md` writes it.
tests/test_docs.py checks that docs/cli.md is what this renders now.
"""

from __future__ import annotations

import argparse
import inspect
import sys
from pathlib import Path
from typing import Any, Sequence

from embviz.cli.parser import build_parser

REGENERATE = "python -m embviz.cli.reference docs/cli.md"
_WIDE = 10_000  # usage lines on one line, whatever the terminal's width


def subcommands(parser: argparse.ArgumentParser) -> dict[str, tuple[str, argparse.ArgumentParser]]:
    """Every subcommand's name → (its one-line help, its parser), in the parser's order."""
    found: dict[str, tuple[str, argparse.ArgumentParser]] = {}
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            helps = {choice.dest: choice.help or "" for choice in action._choices_actions}
            for name, sub in action.choices.items():
                found[name] = (helps.get(name, ""), sub)
    return found


def _usage(parser: argparse.ArgumentParser) -> str:
    options: dict[str, Any] = {"width": _WIDE}
    if "color" in inspect.signature(argparse.HelpFormatter).parameters:  # Python 3.14: no colour codes
        options["color"] = False
    formatter = argparse.HelpFormatter(parser.prog, **options)
    formatter.add_usage(parser.usage, parser._actions, parser._mutually_exclusive_groups, prefix="")
    return formatter.format_help().strip()


def _cell(text: str) -> str:
    return " ".join(text.split()).replace("|", "\\|")


def _name(action: argparse.Action) -> str:
    if action.option_strings:
        names = ", ".join(action.option_strings)
        if action.nargs == 0:
            return f"`{names}`"
        metavar = action.metavar or action.dest.upper()
        if action.choices is not None and action.metavar is None:
            metavar = "{" + ",".join(str(c) for c in action.choices) + "}"
        repeat = " …" if action.nargs in ("+", "*") else ""
        return f"`{names} {metavar}{repeat}`"
    metavar = action.metavar or action.dest
    repeat = " …" if action.nargs in ("+", "*") else ""
    return f"`{metavar}{repeat}`"


def _default(action: argparse.Action) -> str:
    if action.required:
        return "required"
    if isinstance(action, argparse._VersionAction):
        return "—"
    if action.default is argparse.SUPPRESS:
        return "the top-level option's"
    if action.nargs == 0:
        return "off"
    if action.default is None or action.default == []:
        return "none"
    return f"`{action.default}`"


def _help(action: argparse.Action, prog: str) -> str:
    text = action.help or ""
    if "%(" in text:
        text = text % {**vars(action), "prog": prog}
    if action.choices is not None and not isinstance(action.choices, dict):
        text = (text + "; " if text else "") + "one of " + ", ".join(f"`{c}`" for c in action.choices)
    return _cell(text) or "—"


def _options(parser: argparse.ArgumentParser) -> list[str]:
    rows = [action for action in parser._actions
            if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction))]
    if not rows:
        return []
    lines = ["| argument | default | what it does |", "| --- | --- | --- |"]
    lines += [f"| {_name(a)} | {_default(a)} | {_help(a, parser.prog)} |" for a in rows]
    return lines


def render(parser: argparse.ArgumentParser | None = None) -> str:
    """The whole reference as Markdown: the top level, then every subcommand in the parser's order."""
    parser = parser or build_parser()
    commands = subcommands(parser)
    lines = [
        "# Command line reference",
        "",
        f"Generated from `embviz/cli/parser.py` by `{REGENERATE}`; do not edit it by hand.",
        "How words are read, what `--json` prints and examples: [cli-output.md](cli-output.md).",
        "Every command also takes `-h` / `--help`.",
        "",
        f"- [{parser.prog}](#{parser.prog}): the window",
    ]
    lines += [f"- [{parser.prog} {name}](#{parser.prog}-{name}): {_cell(help_text)}"
              for name, (help_text, _) in commands.items()]
    lines += ["", f"## {parser.prog}", "", _cell(parser.description or ""), "",
              "```", _usage(parser), "```", "", *_options(parser)]
    for name, (help_text, sub) in commands.items():
        lines += ["", f"## {parser.prog} {name}", "", _cell(sub.description or help_text), "",
                  "```", _usage(sub), "```", ""]
        lines += _options(sub)
    return "\n".join(lines) + "\n"


def main(argv: Sequence[str] | None = None) -> int:
    args = list(sys.argv[1:] if argv is None else argv)
    text = render()
    if args:
        Path(args[0]).write_text(text, encoding="utf-8")
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
