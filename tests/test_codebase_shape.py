"""The codebase keeps its shape: a short README, small functions, one-way imports, small folders."""
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


# --- The layout (pipeline/README.md): floors, steps inside pipeline/, folder sizes ---
FLOORS = ("components", "modules", "pipeline", "bench")  # bottom to top
MAX_MODULES_PER_FOLDER = 15
# pipeline/'s steps, bottom to top; a module imports only lower steps or its own group.
PIPELINE_STEPS = (("errors", "startup"), ("config",), ("config_file", "beam_deps"),
                  ("planning", "report", "prediction"), ("dag",),
                  ("local", "kubeflow", "continuous"), ("commands",),
                  ("cli", "flag_reference", "kfp_entrypoint"))


def _module_name(path: pathlib.Path) -> str:
    parts = path.relative_to(REPO).with_suffix("").parts
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


def _package_files():
    return [p for p in _tracked_python() if p.relative_to(REPO).parts[0] in FLOORS]


def test_no_import_runs_up_a_floor():
    wrong = []
    for path in _package_files():
        floor = FLOORS.index(path.relative_to(REPO).parts[0])
        for name in _imports(path):
            top = name.split(".")[0]
            if top in FLOORS and FLOORS.index(top) > floor:
                wrong.append(f"{path.relative_to(REPO)} imports {name}")
    assert not wrong, wrong


def test_pipeline_imports_only_its_lower_steps():
    wrong = []
    for path in _package_files():
        module = _module_name(path)
        if not module.startswith("pipeline.") or module == "pipeline":
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
    for floor in FLOORS[:3]:
        for folder in [REPO / floor, *(REPO / floor).rglob("*")]:
            if folder.is_dir() and (folder / "__init__.py").exists():
                modules = [p for p in folder.glob("*.py") if p.name != "__init__.py"]
                if len(modules) > MAX_MODULES_PER_FOLDER:
                    crowded[str(folder.relative_to(REPO))] = len(modules)
    assert not crowded, crowded
