"""The import graph reads in layers: norms/chem/tasks/stats -> nn -> graph/text/vision ->
data/baselines/models -> checkpoints/pretrained -> train -> bench -> pretrain -> panel ->
inference/analysis -> explain -> serve -> CLI (docs/design.md, "Layers"), so no two packages
import each other, even through others.

Imports are read with ``ast`` from every module of the package (also those inside
functions), so a lazy import cannot hide a layer violation.
"""
import ast
from pathlib import Path

PKG = Path(__file__).resolve().parents[2] / "graphnorm"


def _module_name(path: Path) -> str:
    parts = path.relative_to(PKG.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports() -> dict[str, set[str]]:
    """module -> graphnorm modules it imports (relative imports resolved)."""
    graph = {}
    for path in PKG.rglob("*.py"):
        name = _module_name(path)
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        found = set()
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                found |= {a.name for a in node.names}
            elif isinstance(node, ast.ImportFrom):
                if node.level:
                    base = package.split(".")
                    base = base[:len(base) - node.level + 1]
                    mod = ".".join(base + ([node.module] if node.module else []))
                else:
                    mod = node.module or ""
                found.add(mod)
                found |= {f"{mod}.{a.name}" for a in node.names}  # `from pkg import module`
        graph[name] = {m for m in found if m == "graphnorm" or m.startswith("graphnorm.")}
    modules = set(graph)
    # keep only names that are modules (drop `from pkg import function`)
    return {k: {m for m in v if m in modules} - {k} for k, v in graph.items()}


def _subpackage(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


# Every package and root module of graphnorm, lowest layer first; each imports only from its
# own layer and those below. The package root (``graphnorm/__init__.py``: the version, a lazy
# `load_predictor`) is outside the layers.
LAYERS = (
    {"norms", "chem", "tasks", "stats", "run_folder", "provenance", "quiet"},  # base: contracts, chemistry, statistics, provenance
    {"nn"},  # transformer core
    {"graph", "text", "vision"},  # models
    {"data", "baselines", "models", "quantities"},  # datasets, tree/GNN baselines, the model registry, the map of endpoints to quantities
    {"checkpoints", "pretrained", "ensemble"},  # model files: format, upgrades, reader; shipped backbones; ensembles
    {"train"},
    # what uses trained models, in the order they build on each other
    {"bench"},  # benchmark runs and their summaries
    {"pretrain"},  # pre-training on the corpus (reads bench's TDC-clean check)
    {"panel"},  # the ADMET panel: its records and its building on a pre-trained run
    {"inference", "analysis"},  # predicting with a model or a panel; embedding analysis
    {"explain"},  # attributions of a model's or a panel's predictions
    {"serve"},  # the web page and API over all of them
    {"cli"},
)


def _violations(layer: str, allowed: set[str]) -> list[str]:
    return sorted(f"{mod} imports {dep}" for mod, deps in _imports().items()
                  if _subpackage(mod) == layer for dep in deps
                  if _subpackage(dep) not in allowed | {layer})


def test_norms_import_nothing_from_graphnorm():
    assert _violations("norms", set()) == []


def test_nn_imports_only_norms():
    assert _violations("nn", {"norms"}) == []


def test_model_packages_stay_below_data_train_analysis_cli():
    forbidden = {"data", "train", "analysis", "cli", "bench", "inference", "explain", "serve"}
    for layer in ("graph", "text", "vision"):
        bad = [v for v in _violations(layer, set()) if _subpackage(v.split()[-1]) in forbidden]
        assert bad == [], bad
    for layer in ("text", "vision"):  # the text and vision adapters need no molecules
        assert _violations(layer, {"norms", "nn"}) == []


def test_no_import_cycles():
    graph = _imports()
    state: dict[str, int] = {}  # 1 = on the current path, 2 = done

    def visit(node: str, path: list[str]) -> None:
        state[node] = 1
        for dep in sorted(graph.get(node, ())):
            if dep.startswith(node + "."):
                continue  # a package importing its own submodules is not a cycle
            if state.get(dep) == 1:
                cycle = path[path.index(dep):] + [dep] if dep in path else [node, dep]
                raise AssertionError("import cycle: " + " -> ".join(cycle))
            if dep not in state:
                visit(dep, path + [dep])
        state[node] = 2

    for module in sorted(graph):
        if module not in state:
            visit(module, [module])


def test_training_and_data_never_import_the_packages_that_use_models():
    """bench/, inference/, explain/, serve/ and analysis/ use trained models; train/ and
    everything below it must not need them (the layout shows the pipeline's direction)."""
    users = {"bench", "inference", "explain", "serve", "analysis", "cli"}
    for layer in ("train", "data", "baselines", "chem", "graph", "nn", "norms", "text", "vision"):
        bad = [v for v in _violations(layer, set()) if _subpackage(v.split()[-1]) in users]
        assert bad == [], bad


def test_every_package_has_a_layer_and_imports_only_its_layer_and_below():
    layer_of = {name: k for k, names in enumerate(LAYERS) for name in names}
    graph = _imports()
    packages = {_subpackage(m) for m in graph} - {""}
    assert packages - set(layer_of) == set(), "place new packages in LAYERS"
    bad = sorted(f"{mod} imports {dep}" for mod, deps in graph.items() for dep in deps
                 if _subpackage(mod) and _subpackage(dep)
                 and layer_of[_subpackage(dep)] > layer_of[_subpackage(mod)])
    assert bad == []


def test_the_task_contract_imports_nothing_from_graphnorm():
    assert _violations("tasks", set()) == []


def test_packages_that_use_models_read_them_without_train():
    """Inference, explain, serve and analysis load models through the checkpoint contract
    (graphnorm.checkpoints), never through the training package."""
    for layer in ("inference", "explain", "serve", "analysis"):
        bad = [v for v in _violations(layer, set()) if _subpackage(v.split()[-1]) == "train"]
        assert bad == [], bad


def test_the_panel_reaches_its_readers_through_its_contract_alone():
    """Inference, explain and serve read the ADMET panel through graphnorm.panel, never
    through the package that builds it (graphnorm.pretrain)."""
    for layer in ("inference", "explain", "serve"):
        bad = [v for v in _violations(layer, set()) if _subpackage(v.split()[-1]) == "pretrain"]
        assert bad == [], bad
