"""DESIGN.md's rules between rooms, checked on the source: every `import` statement is parsed (AST), relative
imports resolved to absolute module names, and the imports of each layer compared with what it may use."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
COMPUTE = ("masc_ui.metrics", "masc_ui.segmentation", "masc_ui.models", "masc_ui.analysis")
"""The compute layer: tensors and arrays in, dataclasses out."""
USE_CASES = ("masc_ui.workbench",)
"""The only modules that may import `storage` (DESIGN.md: the use cases)."""
EDGE = ("masc_ui.ui", "masc_ui.cli")
"""The edge: parse or show, call a use case."""
FOUNDATION = (
    "masc_ui.errors",
    "masc_ui.settings",
    "masc_ui.imaging",
    "masc_ui.caching",
    "masc_ui.version",
    "masc_ui.space_storage",
    "masc_ui.scratch",
)
"""Below the models: media, settings, errors and the one cache; they import nothing of the layers above."""


def _module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def _is_script_entry(node: ast.AST) -> bool:
    """`if __name__ == "__main__":` (what `python -m module` runs: a script, not a dependency of the module)."""
    test = getattr(node, "test", None)
    return (
        isinstance(node, ast.If)
        and isinstance(test, ast.Compare)
        and isinstance(test.left, ast.Name)
        and test.left.id == "__name__"
    )


def _walk(tree: ast.AST):
    for node in ast.iter_child_nodes(tree):
        if _is_script_entry(node):
            continue
        yield node
        yield from _walk(node)


def _imports(path: Path) -> set[str]:
    """Absolute names of every module `path` imports (at any depth of the file, lazy imports included; the
    `if __name__ == "__main__":` block of a runnable module left out)."""
    module = _module_name(path)
    package = module if path.name == "__init__.py" else module.rpartition(".")[0]
    found: set[str] = set()
    for node in _walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - (node.level - 1)]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            found.add(target)
            found.update(f"{target}.{alias.name}" for alias in node.names)  # `from pkg import module`
    return found


def _modules(*packages: str) -> dict[str, set[str]]:
    out = {}
    for package in packages:
        folder = ROOT.joinpath(*package.split("."))
        files = [folder.with_suffix(".py")] if folder.with_suffix(".py").is_file() else sorted(folder.rglob("*.py"))
        for path in files:
            out[_module_name(path)] = _imports(path)
    return out


def _uses(imports: set[str], *roots: str) -> list[str]:
    return sorted(name for name in imports for root in roots if name == root or name.startswith(root + "."))


def test_the_import_reader_sees_relative_and_lazy_imports(tmp_path):
    imports = _imports(ROOT / "masc_ui" / "workbench" / "recorder.py")
    assert "masc_ui.segmentation.masks" in imports and "storage" in imports  # relative, and inside a function


@pytest.mark.parametrize("module, imports", sorted(_modules(*COMPUTE).items()))
def test_compute_never_imports_storage_gradio_or_the_layers_above(module, imports):
    assert not _uses(imports, "storage", "gradio", "masc_ui.workbench", *EDGE, "masc_ui.datasets"), module


@pytest.mark.parametrize("module, imports", sorted(_modules("masc_ui.models").items()))
def test_the_models_never_import_the_metrics_or_segmentation(module, imports):
    """Network architectures and their demo checkpoints live in `models/` (`nets/`, `demo/`): the metrics use
    them, never the other way round."""
    assert not _uses(imports, "masc_ui.metrics", "masc_ui.segmentation", "masc_ui.analysis", "masc_ui.overlays"), module


@pytest.mark.parametrize("module, imports", sorted(_modules(*FOUNDATION).items()))
def test_the_foundation_imports_nothing_above_it(module, imports):
    assert not _uses(
        imports,
        "storage",
        "gradio",
        "torch",
        "masc_ui.models",
        "masc_ui.metrics",
        "masc_ui.segmentation",
        "masc_ui.analysis",
        "masc_ui.datasets",
        "masc_ui.workbench",
        "masc_ui.overlays",
        *EDGE,
    ), module


@pytest.mark.parametrize("module, imports", sorted(_modules("masc_ui.datasets").items()))
def test_the_importers_only_parse(module, imports):
    """`datasets/` turns files into plain entries; writing them is the workbench's ingest use case."""
    assert not _uses(imports, "storage", "gradio", "masc_ui.workbench", *EDGE), module


@pytest.mark.parametrize("module, imports", sorted(_modules("masc_ui.workbench").items()))
def test_the_use_cases_never_import_the_edge(module, imports):
    assert not _uses(imports, "gradio", *EDGE), module


@pytest.mark.parametrize("module, imports", sorted(_modules("storage").items()))
def test_storage_never_imports_torch_gradio_or_masc_ui(module, imports):
    assert not _uses(imports, "torch", "gradio", "masc_ui", "numpy", "PIL"), module


@pytest.mark.parametrize("module, imports", sorted(_modules("masc_ui.ui").items()))
def test_the_ui_never_imports_storage_or_the_models(module, imports):
    assert not _uses(imports, "storage", "masc_ui.models", "masc_ui.datasets", "masc_ui.cli"), module


@pytest.mark.parametrize("module, imports", sorted(_modules("masc_ui.ui").items()))
def test_the_ui_shows_what_the_use_cases_hand_it(module, imports):
    """The UI builds no metric `Sample`, reads no registry and calls no analysis or segmentation function: the use
    cases hand it what it shows (`Scoring.make_sample`, `Scoring.metric_specs`, `CriterionReport.agreement_text`)."""
    assert not _uses(imports, "masc_ui.metrics", "masc_ui.analysis", "masc_ui.segmentation"), module


CLI_MAY_USE = ("masc_ui.workbench", "masc_ui.errors", "masc_ui.settings", "masc_ui.cli")
"""What the command line imports: its use cases come from the workbench (`masc-ui serve` also starts the UI)."""


@pytest.mark.parametrize("module, imports", sorted(_modules("masc_ui.cli").items()))
def test_the_cli_takes_everything_from_the_workbench(module, imports):
    allowed = CLI_MAY_USE + (("masc_ui.ui.launch",) if module == "masc_ui.cli.serve" else ())
    ours = {name for name in imports if name == "masc_ui" or name.startswith("masc_ui.")}
    assert not [name for name in ours if not _uses({name}, *allowed)], module


USE_CASE_CLASSES = {
    "Workbench",
    "Database",
    "Scoring",
    "Segmentation",
    "VideoViews",
    "Recorder",
    "Saving",
    "StoredSamples",
    "Comparisons",
    "RatingTasks",
    "PairwiseTasks",
    "Agreement",
    "Leaderboards",
    "PairwiseAnalysis",
    "Imports",
    "BatchScoring",
    "ModelRegistry",
    "Accounts",
}
"""What only the composition root (`masc_ui.workbench.factory.build_workbench` and the `Workbench`) builds."""


def _constructed(path: Path) -> set[str]:
    """Names of the use-case classes `path` calls (constructs)."""
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Call):
            name = node.func.id if isinstance(node.func, ast.Name) else getattr(node.func, "attr", None)
            if name in USE_CASE_CLASSES:
                found.add(name)
    return found


@pytest.mark.parametrize(
    "path", sorted([*ROOT.joinpath("masc_ui", "cli").glob("*.py"), *ROOT.joinpath("masc_ui", "ui").glob("*.py")])
)
def test_the_edge_builds_no_use_case(path):
    """One composition root: the CLI and the UI get every use case from the workbench (the CLI's local operator
    acts with no logins: `Accounts()` is what it hands the factory)."""
    allowed = {"Accounts"} if path.name == "common.py" and path.parent.name == "cli" else set()
    assert _constructed(path) <= allowed, path


def test_only_the_use_cases_import_storage():
    everything = _modules("masc_ui")
    users = {m for m, imports in everything.items() if _uses(imports, "storage")}
    assert users and all(m.startswith(USE_CASES) for m in users), sorted(
        users - {m for m in users if m.startswith(USE_CASES)}
    )
    assert not any(_uses(imports, "storage") for m, imports in everything.items() if m.startswith(EDGE))


def _find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    seen: set[str] = set()
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        if node in stack:
            return stack[stack.index(node) :] + [node]
        if node in seen:
            return None
        stack.append(node)
        for nxt in sorted(graph.get(node, ())):
            found = visit(nxt)
            if found:
                return found
        stack.pop()
        seen.add(node)
        return None

    for node in sorted(graph):
        found = visit(node)
        if found:
            return found
    return None


def test_the_packages_import_each_other_without_cycles():
    """Package level, every package of `masc_ui` (metrics, models, segmentation, analysis, imaging, datasets,
    workbench, ui, cli, ...), with no exception: an edge means "some module of A imports some module of B"."""
    graph: dict[str, set[str]] = {}
    for module, imports in _modules("masc_ui").items():
        part = module.split(".")[1] if module.count(".") else module
        if part == "__main__":
            continue
        targets = {name.split(".")[1] for name in imports if name.startswith("masc_ui.") and name.count(".")}
        graph.setdefault(part, set()).update(t for t in targets if t != part and t != "__version__")
    assert "segmentation" not in graph["models"] and "models" in graph["segmentation"]
    assert "metrics" not in graph["models"] and "cli" not in graph["workbench"]
    assert _find_cycle(graph) is None, _find_cycle(graph)


def test_metric_families_import_each_other_without_cycles():
    """Inside `metrics/`: the family subpackages (masc, clip, vqa, faces, video, ...) and the shared top modules
    (base, sample, registry, ...) form no cycle at package level (the registry names scorers by string)."""
    graph: dict[str, set[str]] = {}
    for module, imports in _modules("masc_ui.metrics").items():
        parts = module.split(".")
        part = parts[2] if len(parts) > 2 else "__init__"
        targets = {n.split(".")[2] for n in imports if n.startswith("masc_ui.metrics.") and n.count(".") >= 2}
        graph.setdefault(part, set()).update(t for t in targets if t != part)
    graph.pop("__init__", None)
    assert _find_cycle(graph) is None, _find_cycle(graph)


def test_no_module_imports_itself_back():
    """Module level, every module of the package and storage: no import cycle (lazy imports counted)."""
    everything = {**_modules("masc_ui"), **_modules("storage")}
    graph = {}
    for m, imports in everything.items():
        known = {t for t in imports if t in everything and t != m}
        # `from package import module` names the package too; the edge that matters is the module's
        graph[m] = {t for t in known if not any(u.startswith(t + ".") for u in known)}
    assert _find_cycle(graph) is None, _find_cycle(graph)
