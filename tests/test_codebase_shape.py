"""Issue 19's limits, kept: a short README with docs beside it, small functions."""
import ast
import pathlib
import subprocess

REPO = pathlib.Path(__file__).resolve().parent.parent
MAX_FUNCTION_LINES = 50
MAX_README_LINES = 250


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


def test_readme_is_short_and_its_doc_links_exist():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert len(readme.splitlines()) <= MAX_README_LINES
    links = {part.split(")")[0].split("#")[0] for part in readme.split("](")[1:]}
    missing = [link for link in links if "://" not in link and not (REPO / link).exists()]
    assert not missing, missing


def test_every_component_folder_has_a_readme():
    folders = [p for p in (REPO / "components").iterdir() if (p / "__init__.py").exists()]
    assert folders and all((p / "README.md").exists() for p in folders), folders
