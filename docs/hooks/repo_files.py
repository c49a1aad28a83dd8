"""MkDocs hook: links from docs/ pages to files of the repository outside docs/.

The pages link figures and result files the way GitHub shows them (e.g.
``../experiments/results/explain/example/grid_amide_count.png`` from ``docs/``). MkDocs only
knows files under docs/, and strict mode would fail on them; turning the link check off would
also hide broken links inside the site. Instead such a file is copied into the site under
``_repo/`` and the link rewritten to it, so strict mode still fails on a target that does not
exist. Folders and Markdown files outside docs/ cannot become pages: a link to one fails the
build; name them in a code span (``experiments/results/zinc-subset/``) instead.
"""
from __future__ import annotations

import posixpath
import re
from pathlib import Path

from mkdocs.exceptions import PluginError

PREFIX = "_repo"
# ](target) of Markdown links and images; targets with a scheme, absolute or anchors are skipped
_LINK = re.compile(r"\]\((?P<target>[^)\s#]+)(?P<rest>[^)]*)\)")


def _outside_targets(page_uri: str, markdown: str, docs_dir: Path, repo: Path):
    """(link text as written, path relative to the repository) of links leaving docs/."""
    for m in _LINK.finditer(markdown):
        target = m.group("target")
        if "://" in target or target.startswith(("/", "mailto:")):
            continue
        path = (docs_dir / posixpath.dirname(page_uri) / target).resolve()
        if path.is_relative_to(docs_dir):
            continue  # MkDocs checks those itself
        if not path.is_relative_to(repo):
            raise PluginError(f"{page_uri}: link {target!r} leaves the repository")
        if not path.is_file():
            raise PluginError(f"{page_uri}: link {target!r}: no such file in the repository")
        if path.suffix == ".md":
            raise PluginError(f"{page_uri}: link {target!r} is a Markdown file outside docs/; "
                              "name it in a code span instead")
        yield target, path.relative_to(repo).as_posix()


def _dirs(config) -> tuple[Path, Path]:
    docs_dir = Path(config["docs_dir"]).resolve()
    return docs_dir, Path(config["config_file_path"]).resolve().parent


def on_files(files, config):
    """Copy every repository file that a page links into the site under _repo/."""
    from mkdocs.structure.files import File

    docs_dir, repo = _dirs(config)
    wanted = set()
    for page in files.documentation_pages():
        wanted |= {rel for _, rel in _outside_targets(page.src_uri, page.content_string,
                                                      docs_dir, repo)}
    for rel in sorted(wanted):
        files.append(File.generated(config, f"{PREFIX}/{rel}", abs_src_path=str(repo / rel)))
    return files


def on_page_markdown(markdown, page, config, files):
    """Point each such link at the copy; MkDocs then checks it like any other."""
    docs_dir, repo = _dirs(config)
    here = posixpath.dirname(page.file.src_uri)
    for target, rel in set(_outside_targets(page.file.src_uri, markdown, docs_dir, repo)):
        new = posixpath.relpath(f"{PREFIX}/{rel}", here or ".")
        markdown = markdown.replace(f"]({target}", f"]({new}")
    return markdown
