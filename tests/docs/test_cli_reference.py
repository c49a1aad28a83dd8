"""The CLI reference page lists every subcommand and flag of `graphnorm --help`, and every
`graphnorm ...` line of the README and the docs' Markdown parses with the real parser."""
import argparse
import importlib.util
import re
import shlex
from pathlib import Path

import pytest

from graphnorm.cli import build_parser

REPO = Path(__file__).resolve().parents[2]


def _hook():
    spec = importlib.util.spec_from_file_location("cli_reference",
                                                  REPO / "docs" / "hooks" / "cli_reference.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _sections(page: str) -> dict:
    """{subcommand: the names in the first column of its argument table}."""
    out = {}
    for block in re.split(r"^## graphnorm ", page, flags=re.M)[1:]:
        name = block.split("\n", 1)[0].strip()
        out[name] = set(re.findall(r"^\| `([^`]+)` \|", block, flags=re.M))
    return out


def test_cli_page_lists_every_subcommand_and_flag():
    hook = _hook()
    parser = build_parser()
    sections = _sections(hook.render(parser))
    subparsers = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    assert list(sections) == list(subparsers.choices)
    for name, sub in subparsers.choices.items():
        listed = {w for cell in sections[name] for w in re.split(r"[ ,]+", cell)}
        for action in hook.documented_actions(sub):
            names = action.option_strings or [action.metavar or action.dest]
            assert set(names) <= listed, (name, names)
        # nothing --help hides is documented (the benchmark --norm alias, -h)
        hidden = {o for a in sub._actions if a.help == argparse.SUPPRESS for o in a.option_strings}
        assert not hidden & listed, (name, hidden & listed)


def test_cli_page_help_text_is_the_parsers():
    page = _hook().render()
    assert "| `--interval LEVEL` |" in page and "split-conformal interval" in page
    assert "\\[VNode\\]" in page  # Markdown-escaped, so the brackets render as written


def _command_lines(markdown: str):
    """`graphnorm ...` lines of fenced bash blocks, continuations joined."""
    for block in re.findall(r"```bash\n(.*?)```", markdown, flags=re.S):
        for line in block.replace("\\\n", " ").splitlines():
            if line.strip().startswith("graphnorm "):
                yield line.strip()


DOCS = [REPO / "README.md", *sorted((REPO / "docs").rglob("*.md"))]


@pytest.mark.parametrize("path", DOCS, ids=lambda p: str(p.relative_to(REPO)))
def test_documented_command_lines_parse(path):
    parser = build_parser()
    for line in _command_lines(path.read_text()):
        argv = shlex.split(line, comments=True)[1:]
        if "..." in argv:  # "graphnorm train ... --flag": the rest is elided; check its flags
            sub = next(a for a in parser._actions
                       if isinstance(a, argparse._SubParsersAction)).choices[argv[0]]
            flags = {o for a in sub._actions for o in a.option_strings}
            unknown = [w for w in argv if w.startswith("--") and w not in flags]
            assert not unknown, f"{path.name}: unknown flags {unknown}: {line}"
            continue
        try:
            parser.parse_args(argv)
        except SystemExit:
            pytest.fail(f"{path.name}: does not parse: {line}")


def test_readme_is_short_and_has_the_five_commands():
    readme = (REPO / "README.md").read_text()
    assert len(readme.splitlines()) <= 150
    commands = {line.split()[1] for line in _command_lines(readme)}
    assert {"train", "predict", "benchmark", "analyze"} <= commands
    assert "make train" in readme.split("\n## ", 1)[0] and "make test" in readme
