"""A run's config has one home: resolution (graphnorm/train/resolve.py) makes it, the plan
(graphnorm/train/plan.py) derives every run from it (ensemble members, benchmark runs, hpopt
trials, TDC suite tasks, the epoch limit), and nothing else edits a config afterwards.

Read with ``ast`` from every module of the package, in the style of tests/nn/
test_import_layers.py: outside the homes, no ``dataclasses.replace``/``replace`` of a
config, no ``setattr`` on a config or an argparse namespace with config keys, no attribute
assignment to a config (``object.__setattr__`` included). TrainConfig is also frozen, so an
edit that slipped past this reading fails when it runs.
"""
import ast
import dataclasses
import re
from pathlib import Path

import pytest

PKG = Path(__file__).resolve().parents[2] / "graphnorm"

# where a config may be made or derived: the resolver and the plan; recipes.py's pure rule
# settle_backbone as well, as long as only the resolver and the plan call it (checked below)
HOMES = {"train/resolve.py", "train/plan.py", "train/recipes.py"}
# Sites not moved yet, each with why; empty: every site is moved. A new entry needs a reason.
NOT_YET_MOVED: dict[str, str] = {}

# names that hold a TrainConfig (cfg, config, run_cfg, ...); names that do where the
# attribute or keys set are config fields (base, member: elsewhere a model's base module);
# the argparse namespace a config is resolved from (args)
CONFIG_NAME = re.compile(r"^(\w*_)?(cfg|config|conf)(_\w*)?s?$")
MAYBE_CONFIG_NAME = re.compile(r"^(base|member|members|trial|run)$")
NAMESPACE_NAME = re.compile(r"^(args|namespace|ns)$")


def _config_fields() -> set[str]:
    from graphnorm.train.config import TrainConfig

    return {f.name for f in dataclasses.fields(TrainConfig)}


def _other_dataclass_fields() -> set[str]:
    """Field names of graphnorm's other dataclasses (annotated names in a class body): a
    ``replace(spec, task=...)`` of a TableSpec is not a config's, a ``replace(x, seed=...)``
    may be; names only TrainConfig has mark a config's replace whatever it is called."""
    out = set()
    for path in PKG.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.ClassDef) and node.name != "TrainConfig":
                out |= {s.target.id for s in node.body
                        if isinstance(s, ast.AnnAssign) and isinstance(s.target, ast.Name)}
    return out


def _name(node) -> str:
    """The identifier an expression ends in: ``cfg`` -> cfg, ``self.cfg`` -> cfg."""
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    return ""


def _is_replace(call: ast.Call) -> bool:
    """``dataclasses.replace(...)``, ``copy.replace(...)`` or a bare ``replace(...)`` (from
    dataclasses import replace); not ``str.replace`` (a method of some other value)."""
    f = call.func
    return (isinstance(f, ast.Name) and f.id == "replace") or (
        isinstance(f, ast.Attribute) and f.attr == "replace"
        and isinstance(f.value, ast.Name) and f.value.id in ("dataclasses", "copy"))


def _edits(tree: ast.AST, fields: set[str], config_only: set[str]) -> list[tuple[int, str]]:
    """(line, what) of every edit of a config in a module's syntax tree."""
    found = []

    def config_like(node, keys=()) -> bool:
        """``keys``: the attributes set; a MAYBE name counts when one is a config field (or
        the keys are not known: ``**values``, a variable setattr key)."""
        name = _name(node)
        return bool(CONFIG_NAME.match(name)) or bool(
            MAYBE_CONFIG_NAME.match(name) and (keys is None or set(keys) & fields))

    def assigned(target, line):
        if isinstance(target, (ast.Tuple, ast.List)):
            for t in target.elts:
                assigned(t, line)
        elif isinstance(target, ast.Attribute):
            if config_like(target.value, {target.attr}):
                found.append((line, f"{_name(target.value)}.{target.attr} = ..."))
            elif NAMESPACE_NAME.match(_name(target.value)) and target.attr in fields:
                found.append((line, f"{_name(target.value)}.{target.attr} = ... (a config key)"))
        elif isinstance(target, ast.Subscript) and _name(target.value) == "__dict__" \
                and isinstance(target.value, ast.Attribute) and config_like(target.value.value):
            found.append((line, f"{_name(target.value.value)}.__dict__[...] = ..."))

    for node in ast.walk(tree):
        if isinstance(node, ast.Assign):
            for t in node.targets:
                assigned(t, node.lineno)
        elif isinstance(node, (ast.AugAssign, ast.AnnAssign)):
            assigned(node.target, node.lineno)
        elif isinstance(node, ast.Call):
            if _is_replace(node) and node.args:
                keys = {k.arg for k in node.keywords if k.arg}
                splat = any(k.arg is None for k in node.keywords)
                if config_like(node.args[0], None if splat else keys) or keys & config_only:
                    found.append((node.lineno, f"replace({_name(node.args[0]) or '...'}, "
                                               f"{', '.join(sorted(keys)) or '**...'})"))
            f = node.func
            setter = (isinstance(f, ast.Name) and f.id == "setattr") or (
                isinstance(f, ast.Attribute) and f.attr == "__setattr__")
            if setter and len(node.args) >= 2:
                obj, key = node.args[0], node.args[1]
                literal = isinstance(key, ast.Constant) and isinstance(key.value, str)
                known = (not literal) or key.value in fields
                if config_like(obj, {key.value} if literal else None) or (
                        NAMESPACE_NAME.match(_name(obj)) and known):
                    found.append((node.lineno, f"setattr({_name(obj)}, "
                                               f"{key.value if literal else '<a key>'!r}, ...)"))
    return found


def config_edits(package: Path = PKG) -> list[str]:
    """Every edit of a config outside the homes and the not-yet-moved list."""
    fields = _config_fields()
    config_only = fields - _other_dataclass_fields()
    out = []
    for path in sorted(package.rglob("*.py")):
        rel = path.relative_to(package).as_posix()
        if rel in HOMES:
            continue
        for line, what in _edits(ast.parse(path.read_text(), str(path)), fields, config_only):
            if f"{rel}:{what}" not in NOT_YET_MOVED:
                out.append(f"graphnorm/{rel}:{line}: {what}")
    return out


def test_no_config_is_edited_after_resolution_outside_resolve_and_plan():
    assert config_edits() == [], ("a config edited after resolution: plan the run in "
                                  "graphnorm/train/plan.py and execute its config as given")


def test_the_check_finds_each_kind_of_edit(tmp_path):
    """The reading above can fail: each kind of edit, in a module of a copy of the package,
    is found (and none in code that leaves configs alone)."""
    pkg = tmp_path / "graphnorm"
    pkg.mkdir()
    (pkg / "fine.py").write_text(
        "import dataclasses\n"
        "def f(spec, text, parent, table, cfg):\n"
        "    spec = dataclasses.replace(spec, task='regression')\n"  # a TableSpec's field
        "    setattr(parent, 'norm', None)\n"  # a module's child, not a config
        "    table.smiles_column = 'smiles'\n"
        "    return text.replace('a', 'b'), cfg.init_from.replace('{variant}', 'ln')\n")
    (pkg / "bad.py").write_text(
        "import dataclasses\nfrom dataclasses import replace\n"
        "def f(cfg, args, run_cfg, x, key):\n"
        "    cfg = dataclasses.replace(cfg, threads=1)\n"
        "    x = replace(x, tree_member=True)\n"  # a field only TrainConfig has
        "    setattr(args, key, 1)\n"
        "    args.data = 't.csv'\n"
        "    run_cfg.seed = 3\n"
        "    object.__setattr__(cfg, 'seed', 2)\n")
    found = config_edits(pkg)
    assert [f.split(":")[0] for f in found] == ["graphnorm/bad.py"] * 6, found
    assert sorted(int(f.split(":")[1]) for f in found) == [4, 5, 6, 7, 8, 9], found


def test_settle_backbone_is_called_by_the_resolver_and_the_plan_only():
    """recipes.py may derive a config (settle_backbone) because only the homes call it."""
    callers = set()
    for path in PKG.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Call) and _name(node.func) == "settle_backbone":
                callers.add(path.relative_to(PKG).as_posix())
    assert callers <= {"train/resolve.py", "train/plan.py"}, callers


def test_a_config_cannot_be_edited_once_made():
    from graphnorm.train.config import TrainConfig

    cfg = TrainConfig()
    with pytest.raises(dataclasses.FrozenInstanceError):
        cfg.seed = 1
    assert dataclasses.replace(cfg, seed=1).seed == 1 and cfg.seed == 0
