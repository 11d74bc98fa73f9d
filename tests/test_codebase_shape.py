"""The codebase keeps its shape: a short README, small functions, one-way imports, small folders.

The architecture as rules: packages by role in layers (LAYERS, the same order as setup.py's
PACKAGES), a stage reaching another only through the modules it declares public, and
pipeline/'s own steps. Kept from before, and why: functions of at most 50 lines and lines of
at most 100 characters (read without scrolling); at most 15 modules a folder (a folder
that grows past it holds two concerns); one meaning per file name outside the parallel
roles (component.py, executor.py, settings.py), so that a bare file name in a doc or a
comment names one file, which tests/test_docs.py relies on.
"""
import ast
import pathlib
import subprocess

REPO = pathlib.Path(__file__).resolve().parent.parent
MAX_FUNCTION_LINES = 50
MAX_README_LINES = 250
MAX_LINE_CHARS = 100


def _tracked_python():
    out = subprocess.run(["git", "ls-files", "*.py"], cwd=REPO, capture_output=True,
                         text=True, check=True).stdout.split()
    return [REPO / name for name in out if (REPO / name).exists()]


def test_no_function_is_over_the_limit():
    long = []
    for path in _tracked_python():
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                lines = node.end_lineno - node.lineno + 1
                if lines > MAX_FUNCTION_LINES:
                    long.append(f"{path.relative_to(REPO)}:{node.lineno} {node.name} ({lines})")
    assert not long, "functions over the limit: " + ", ".join(long)


def test_no_python_line_is_over_the_limit():
    long = [f"{path.relative_to(REPO)}:{number} ({len(line)})"
            for path in _tracked_python()
            for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
            if len(line) > MAX_LINE_CHARS]
    assert not long, "lines over the limit: " + ", ".join(long)


def test_readme_is_short_and_its_doc_links_exist():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= MAX_README_LINES
    links = {part.split(")")[0].split("#")[0] for part in readme.split("](")[1:]}
    missing = [link for link in links if "://" not in link and not (REPO / link).exists()]
    assert not missing, missing


def test_every_component_folder_has_a_readme():
    folders = [p for p in (REPO / "components").iterdir() if (p / "__init__.py").exists()]
    assert folders and all((p / "README.md").exists() for p in folders), folders


# --- The layout (README.md, "Where things are"): packages by role, bottom to top ---
# A package imports only packages of lower layers, or itself; packages of one layer do not
# import each other. setup.py's PACKAGES lists the installed ones in the same order.
LAYERS = (("core",), ("components",), ("modules",), ("settings",),
          ("report", "prediction", "rollback"), ("monitor", "retention"), ("pipeline",),
          ("kfp_compiler",), ("cli",), ("kfp_emulator", "bench"))
TOPS = [name for layer in LAYERS for name in layer]
# Forwarders for packages compiled before the compiler moved: old dotted paths that
# must keep starting the new entrypoint, so they import a higher layer.
FORWARDERS = {"pipeline.kfp_entrypoint", "pipeline.kubeflow", "pipeline.kubeflow.entrypoint"}
MAX_MODULES_PER_FOLDER = 15
# pipeline/'s steps, bottom to top; a module imports only lower steps or its own group.
PIPELINE_STEPS = (("planning",), ("dag",), ("local",))


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
    if parts[0] == "kubeflow":  # kubeflow/kfp_emulator/: on sys.path as kfp_emulator
        parts = parts[1:]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _imports(path: pathlib.Path):
    """Every module this file imports, at top level or inside functions."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            yield from (alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            yield node.module
            yield from (f"{node.module}.{alias.name}" for alias in node.names)


def _step(module: str) -> tuple:
    """(step index, group) of a pipeline module: `pipeline.planning.plan` -> (3, 'planning')."""
    group = module.split(".")[1] if module.count(".") else ""
    for index, names in enumerate(PIPELINE_STEPS):
        if group in names:
            return index, group
    return None, group


def _top(path: pathlib.Path) -> str:
    return _module_name(path).split(".")[0]


def _package_files():
    return [p for p in _tracked_python() if _top(p) in TOPS]


def _layer_of(top: str) -> int:
    return next(i for i, names in enumerate(LAYERS) if top in names)


def test_setup_installs_the_layers_in_order_and_nothing_else():
    text = (REPO / "setup.py").read_text(encoding="utf-8")
    installed = ast.literal_eval(text.split("PACKAGES = ", 1)[1].split(")", 1)[0] + ")")
    assert list(installed) == [t for t in TOPS if t not in ("kfp_emulator", "bench")]


def test_no_import_runs_up_a_layer_or_across_one():
    wrong = []
    for path in _package_files():
        module, top = _module_name(path), _top(path)
        if module in FORWARDERS:
            continue
        for name in _imports(path):
            other = name.split(".")[0]
            if other in TOPS and other != top and _layer_of(other) >= _layer_of(top):
                wrong.append(f"{path.relative_to(REPO)} imports {name}")
    assert not wrong, wrong


def test_pipeline_imports_only_its_lower_steps():
    wrong = []
    for path in _package_files():
        module = _module_name(path)
        if not module.startswith("pipeline.") or module == "pipeline" or module in FORWARDERS:
            continue
        step, group = _step(module)
        assert step is not None, f"{module}: not in PIPELINE_STEPS (pipeline/README.md)"
        for name in {n for n in _imports(path) if n.startswith("pipeline.")}:
            other, other_group = _step(name)
            if other is not None and (other > step or (other == step and other_group != group)):
                wrong.append(f"{module} imports {name}")
    assert not wrong, wrong


def test_no_package_folder_holds_more_than_15_modules():
    crowded = {}
    for top in {path.relative_to(REPO).parts[0] for path in _package_files()}:
        for folder in [REPO / top, *(REPO / top).rglob("*")]:
            if folder.is_dir() and (folder / "__init__.py").exists():
                modules = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
                if len(modules) > MAX_MODULES_PER_FOLDER:
                    crowded[str(folder.relative_to(REPO))] = len(modules)
    assert not crowded, crowded


# --- File names: one meaning each ---
# Names that stand for the same role in parallel packages (TFX's component.py and
# executor.py, a stage's settings.py).
PARALLEL_ROLES = {"__init__.py", "component.py", "executor.py", "settings.py",
                  "conftest.py"}


def test_no_two_modules_share_a_file_name_unless_they_play_the_same_role():
    seen = {}
    for path in _tracked_python():
        rel = path.relative_to(REPO)
        if (rel.parts[0] != "tests" and rel.name not in PARALLEL_ROLES
                and _module_name(path) not in FORWARDERS):
            seen.setdefault(rel.name, []).append(str(rel))
    repeated = {name: paths for name, paths in seen.items() if len(paths) > 1}
    assert not repeated, repeated


# --- Inside components/ and modules/ (their READMEs) ---
# A component imports itself, core, and of another component only the modules that
# component declares public: PUBLIC_MODULES in its __init__.py (the push's versions, the
# drift verdict, the card's format). So domain code lives with the stage that owns it,
# and what other stages may rely on is written down there. modules/ (the Trainer's and
# Transform's module files) keeps to the same rule.


def _public_modules(component: str) -> tuple:
    init = REPO / "components" / component / "__init__.py"
    for node in ast.parse(init.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Assign) and node.targets[0].id == "PUBLIC_MODULES":
            return ast.literal_eval(node.value)
    return ()


def test_stages_import_another_stage_only_through_its_public_modules():
    wrong = []
    for path in _package_files():
        module = _module_name(path)
        if module.split(".")[0] not in ("components", "modules"):
            continue
        for name in {n for n in _imports(path) if n.startswith("components.")}:
            parts = name.split(".")
            if len(parts) < 3 or (module.startswith("components.")
                                  and _group(module) == parts[1]):
                continue
            public = _public_modules(parts[1])
            if not any(".".join(parts[2:]).startswith(p) for p in public):
                wrong.append(f"{module} imports {name} ({parts[1]} declares {public})")
    assert not wrong, wrong


# modules/, bottom to top; a module imports only lower layers or its own group.
MODULE_LAYERS = (("network_registry",), ("params", "autograph_rules"),
                 ("networks", "augment", "preprocessing", "schedule", "signatures",
                  "epoch_progress", "cluster"),
                 ("distribution",), ("training",), ("trainer",), ("tuning",),
                 ("examples",))


def _group(module: str) -> str:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else ""


def _inner_imports(prefix: str):
    """(module, imported module) pairs inside one floor."""
    for path in _package_files():
        module = _module_name(path)
        if module.startswith(prefix + "."):
            for name in {n for n in _imports(path) if n.startswith(prefix + ".")}:
                yield module, name


def _layer(module: str) -> int:
    group = _group(module)
    found = [i for i, names in enumerate(MODULE_LAYERS) if group in names]
    assert found, f"{module}: not in MODULE_LAYERS (tests/test_codebase_shape.py)"
    return found[0]


def test_modules_import_only_lower_layers_or_their_own_group():
    wrong = [f"{module} imports {name}" for module, name in _inner_imports("modules")
             if _group(name) != _group(module) and _layer(name) >= _layer(module)]
    assert not wrong, wrong


# Folders of Python files that are not packages on purpose: a module file users copy.
NOT_PACKAGES = {"modules/examples"}


def test_every_folder_of_python_modules_is_a_package():
    """setup.py's find_packages, and so the pipeline image's `pip install .`, skip a folder
    without __init__.py, and the tests above that look for packages would too."""
    folders = {path.parent for path in _package_files()}
    missing = [str(f.relative_to(REPO)) for f in sorted(folders)
               if not (f / "__init__.py").exists()
               and str(f.relative_to(REPO)) not in NOT_PACKAGES]
    assert not missing, missing
