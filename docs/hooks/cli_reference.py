"""MkDocs hook: the CLI reference page (``cli.md``) rendered from ``graphnorm.cli.build_parser()``
at build time, so no flag list is copied by hand and none can drift from ``graphnorm --help``.

``render()`` is also what ``tests/docs/test_cli_reference.py`` checks against the parser.
"""
from __future__ import annotations

import argparse
import re

PAGE = "cli.md"
_MD_SPECIAL = re.compile(r"([\\`*_\[\]|<>#])")


def _escape(text: str) -> str:
    """Help text as literal Markdown (argparse help mentions [VNode], <target>, a|b, x_y)."""
    return _MD_SPECIAL.sub(r"\\\1", " ".join(text.split()))


def _subcommands(parser: argparse.ArgumentParser):
    """(name, one-line help, subparser) per subcommand, in the parser's order."""
    action = next(a for a in parser._actions if isinstance(a, argparse._SubParsersAction))
    helps = {c.dest: c.help or "" for c in action._choices_actions}
    return [(name, helps.get(name, ""), sub) for name, sub in action.choices.items()]


def documented_actions(parser: argparse.ArgumentParser):
    """The actions ``--help`` shows: everything but -h and suppressed aliases."""
    return [a for a in parser._actions
            if a.help != argparse.SUPPRESS and not isinstance(a, (argparse._HelpAction,
                                                                   argparse._SubParsersAction))]


def _expand(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    """The help text exactly as ``--help`` prints it (%(default)s etc. filled in)."""
    return parser._get_formatter()._expand_help(action) if action.help else ""


def _flag_row(parser: argparse.ArgumentParser, action: argparse.Action) -> str:
    if action.option_strings:
        name = ", ".join(action.option_strings)
        if action.nargs != 0:
            meta = parser._get_formatter()._format_args(action, action.dest.upper())
            name = f"{name} {meta}"
    else:
        name = action.metavar or action.dest
    choices = f" Choices: {', '.join(map(str, action.choices))}." if action.choices else ""
    required = " **Required.**" if action.required and action.option_strings else ""
    return f"| `{name}` | {_escape(_expand(parser, action))}{_escape(choices)}{required} |"


def render(parser: argparse.ArgumentParser | None = None) -> str:
    """The Markdown of the CLI reference page."""
    if parser is None:
        from graphnorm.cli import build_parser
        parser = build_parser()
    lines = ["# Command-line reference", "",
             "Generated from `graphnorm.cli.build_parser()` when the site is built "
             "(`docs/hooks/cli_reference.py`): it is what `graphnorm <command> --help` prints.",
             "", "```text", parser.format_usage().strip(), "```", ""]
    subs = _subcommands(parser)
    lines += ["| command | what it does |", "|---|---|"]
    lines += [f"| [`{n}`](#graphnorm-{n}) | {_escape(h)} |" for n, h, _ in subs]
    for name, help_, sub in subs:
        lines += ["", f"## graphnorm {name}", "", _escape(help_) + ".", ""]
        if sub.description:
            lines += [_escape(sub.description), ""]
        lines += ["```text", sub.format_usage().strip(), "```", ""]
        rows = [_flag_row(sub, a) for a in documented_actions(sub)]
        lines += ["| argument | help |", "|---|---|", *rows]
    return "\n".join(lines) + "\n"


def on_files(files, config):
    """Add the generated page to the site's files (it lives in no file under docs/)."""
    from mkdocs.structure.files import File

    files.append(File.generated(config, PAGE, content=render()))
    return files
