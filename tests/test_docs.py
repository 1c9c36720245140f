"""The README and the user guide in docs/: short, linked, and the command line's page current."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from embviz.cli.parser import build_parser
from embviz.cli.reference import REGENERATE, render, subcommands

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
README_LINES = 120

_FENCE = re.compile(r"^(```|~~~)")
_CODE_SPAN = re.compile(r"`[^`\n]*`")
_LINK = re.compile(r"!?\[[^\]\n]*\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)")
_HEADING = re.compile(r"^(#{1,6})\s+(.*?)\s*#*\s*$")


def _prose(text: str, blank_code: bool = True) -> list[tuple[int, str]]:
    """The lines outside fenced code blocks, numbered from 1, with inline code blanked out."""
    lines, fenced = [], False
    for number, line in enumerate(text.splitlines(), start=1):
        if _FENCE.match(line.lstrip()):
            fenced = not fenced
            continue
        if not fenced:
            lines.append((number, _CODE_SPAN.sub("``", line) if blank_code else line))
    return lines


def slug(heading: str) -> str:
    """GitHub's anchor for a heading's text: its visible words, lower-cased, spaces as hyphens."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text only
    text = text.replace("`", "").replace("*", "").strip().lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    """Every heading's anchor in a Markdown file, numbered as GitHub numbers repeated ones."""
    seen: dict[str, int] = {}
    found: set[str] = set()
    for _, line in _prose(path.read_text(encoding="utf-8"), blank_code=False):
        match = _HEADING.match(line)
        if match is None:
            continue
        base = slug(match.group(2))
        count = seen.get(base, 0)
        seen[base] = count + 1
        found.add(base if count == 0 else f"{base}-{count}")
    return found


def broken_links(path: Path) -> list[str]:
    """Each relative link of a Markdown file whose file, or whose #anchor in it, is not there."""
    problems = []
    for number, line in _prose(path.read_text(encoding="utf-8")):
        for target in _LINK.findall(line):
            if re.match(r"^[a-z][a-z0-9+.-]*:", target):  # https:, mailto: …: not ours to check
                continue
            file_part, _, anchor = target.partition("#")
            where = (path.parent / file_part).resolve() if file_part else path
            if not where.exists():
                problems.append(f"{path.name}:{number}: {target} (no file {file_part})")
            elif anchor and where.is_file() and where.suffix == ".md" and anchor not in anchors(where):
                problems.append(f"{path.name}:{number}: {target} (no heading #{anchor} in {where.name})")
    return problems


def _documents() -> list[Path]:
    return [README, *sorted((ROOT / "docs").glob("*.md"))]


def test_the_readme_is_short_and_names_the_two_commands() -> None:
    text = README.read_text(encoding="utf-8")
    lines = len(text.splitlines())
    assert lines <= README_LINES, f"README.md has {lines} lines; at most {README_LINES}: move the rest into docs/"
    assert "make run" in text and "make test" in text


@pytest.mark.parametrize("path", _documents(), ids=lambda p: p.name)
def test_every_relative_link_resolves(path: Path) -> None:
    problems = broken_links(path)
    assert not problems, "links to nothing:\n" + "\n".join(problems)


def test_the_link_check_finds_a_broken_link_and_anchor(tmp_path: Path) -> None:
    (tmp_path / "a.md").write_text("# A page\n\n## Its part, `one`\n\n```\n# not a heading\n```\n", encoding="utf-8")
    doc = tmp_path / "doc.md"
    doc.write_text("[ok](a.md#its-part-one) [gone](missing.md) [bad](a.md#not-a-heading) `[code](x.md)`\n",
                   encoding="utf-8")
    problems = broken_links(doc)
    assert len(problems) == 2
    assert "missing.md" in problems[0] and "#not-a-heading" in problems[1]


def test_slugs_are_githubs() -> None:
    assert slug("The default model's first open") == "the-default-models-first-open"
    assert slug("Every family, exact or refused in one sentence") == "every-family-exact-or-refused-in-one-sentence"
    assert slug("embviz odd-one-out") == "embviz-odd-one-out"
    assert slug("What `--json` prints") == "what---json-prints"


def test_the_command_line_page_is_current() -> None:
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    assert page == render(), f"docs/cli.md is out of date with embviz/cli/parser.py; regenerate it: {REGENERATE}"


def test_every_subcommand_has_its_section() -> None:
    page = (ROOT / "docs" / "cli.md").read_text(encoding="utf-8")
    headings = {line[3:] for line in page.splitlines() if line.startswith("## ")}
    missing = [name for name in subcommands(build_parser()) if f"embviz {name}" not in headings]
    assert not missing, f"docs/cli.md has no section for {missing}; regenerate it: {REGENERATE}"
