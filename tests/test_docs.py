"""The docs stay true: every file they name exists, and the README lists the real commands.

What counts as naming a file, in every Markdown file git knows (tracked or new):
- a Markdown link's target, resolved against the file's own folder;
- an inline code span of one word that starts with a top-level folder (`core/limits.py`,
  `bench/ingestion/ingest_speed`, `docs/`: a file, a folder, or a module without its `.py`,
  from the root or from the doc's folder), or that ends in a known extension: bare
  (`limits.py`: some repository file has that name) or under other folders
  (`planning/rules.py`: the doc's folder holds it, or some repository path ends with it);
- in longer code spans and in code blocks (commands, listings), a word that starts with a
  top-level folder (`scripts/bench.sh`, `kubeflow/submit.py`).
"""
import functools
import argparse
import ast
import pathlib
import re
import subprocess

REPO = pathlib.Path(__file__).resolve().parent.parent
EXTENSIONS = (".py", ".md", ".yaml", ".yml", ".json", ".sh", ".txt", ".toml", ".cfg", ".ini",
              ".jinja", ".html", ".png")
# Not repository files, and so never checked; each rule is one kind of name:
# - a URL (gs://, https://) or a path outside the repository (/usr/bin, ~/photos, $OUT);
# - a placeholder: <output>/summary.json, {SPAN}, *.py, or a word in capitals (GROUP/NAME);
# - what git ignores: a run's outputs/, bench/results/, .venv/ (git check-ignore);
# - a path inside an installed library (tfx/, tensorflow/), named as upstream's;
# - a file a run writes or reads (summary.json, labels.txt): a name the code itself spells
#   as a string literal (see _names_the_code_spells).
LIBRARIES = ("tfx", "tensorflow", "tensorflow_transform", "tfx_bsl", "apache_beam", "keras",
             "tf_keras", "tensorflow_data_validation", "tensorflow_model_analysis", "kfp",
             "model_card_toolkit")
# Placeholders, shell expansions and code: <output>, {SPAN}, *.py, $OUT, f(x), GROUP/NAME.
PLACEHOLDER = re.compile(r"[<>{}*$()\\]|(^|/)[A-Z][A-Z0-9_]*(\.\w+)?(/|$)")
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)")
FENCE = re.compile(r"^ {0,3}```.*?^ {0,3}```", re.M | re.S)
SPAN = re.compile(r"`([^`]+)`")


@functools.lru_cache(maxsize=None)
def _repo() -> dict:
    """The files git knows (tracked, or new and not ignored) that exist, their folders, their
    names, and the top-level entries."""
    out = subprocess.run(["git", "ls-files", "-co", "--exclude-standard"], cwd=REPO,
                         capture_output=True, text=True, check=True).stdout.splitlines()
    files = {name for name in out if (REPO / name).is_file()}
    folders = {str(parent) for f in files for parent in pathlib.PurePosixPath(f).parents
               if str(parent) != "."}
    return {"files": files, "folders": folders, "tops": {f.split("/")[0] for f in files},
            "names": {pathlib.PurePosixPath(f).name for f in files}}


def _names_the_code_spells() -> set:
    """File names that a non-test module holds as a string literal ("summary.json", or
    "/labels.txt" in an f-string): what a run writes or reads, not a repository file."""
    names = set()
    for path in (f for f in _repo()["files"] if f.endswith(".py") and not f.startswith("tests/")):
        for node in ast.walk(ast.parse((REPO / path).read_text(encoding="utf-8"))):
            if isinstance(node, ast.Constant) and isinstance(node.value, str) \
                    and "\n" not in node.value and " " not in node.value:
                names.add(node.value.rsplit("/", 1)[-1])
    return names


def _ignored(paths: set) -> set:
    """The paths git ignores. Each is also asked as a folder (`bench/results/`): a pattern
    for a folder does not match its name alone when the folder does not exist (a fresh
    clone has no bench/results/)."""
    asked = sorted(paths | {p.rstrip("/") + "/" for p in paths})
    found = subprocess.run(["git", "check-ignore", "--no-index", "--stdin"], cwd=REPO,
                           input="\n".join(asked), capture_output=True, text=True)
    ignored = set(found.stdout.splitlines())
    return {p for p in paths if p in ignored or p.rstrip("/") + "/" in ignored}


def _words(text: str):
    """(word, strict) for every candidate: strict words only count with a top-level folder."""
    for block in FENCE.findall(text):
        yield from ((word, True) for word in block.split()[1:])
    prose = FENCE.sub("", text)
    for span in SPAN.findall(prose):
        words = span.split()
        yield from ((word, len(words) > 1) for word in words)


def _clean(word: str) -> str:
    word = word.strip("'\"()[],;").split("=")[-1]
    word = re.sub(r"(\.\w+)[:#].*$", r"\1", word)  # modules/distribution.py:select_strategy
    return word.split("#")[0].rstrip(".:")


def _exempt(word: str) -> bool:
    return ("://" in word or word.startswith(("/", "~", "$", "-", "."))
            or bool(PLACEHOLDER.search(word)) or word.split("/")[0] in LIBRARIES)


def _is_reference(word: str, strict: bool) -> bool:
    """Whether a word names a repository file: a path from a top-level folder, or (alone
    in its code span) a file name with a known extension, bare or under folders."""
    if not word or _exempt(word):
        return False
    if "/" in word and word.split("/")[0] in _repo()["tops"]:
        return True
    return not strict and word.endswith(EXTENSIONS)


def _exists(word: str, folder: pathlib.PurePosixPath, code_names: set) -> bool:
    """A file, a folder or a module (`modules/params`, `modules/params.TrainerParams`)."""
    repo = _repo()
    if "/" not in word:
        return word in repo["names"] or word in code_names
    path = word.rstrip("/")
    stem = re.sub(r"\.\w+$", "", path)  # a module path followed by .attribute
    for base in (pathlib.PurePosixPath(), folder):
        for candidate in {str(pathlib.PurePosixPath(base, p)) for p in (path, stem)}:
            if candidate in repo["files"] | repo["folders"] or candidate + ".py" in repo["files"]:
                return True
    if path.split("/")[0] in repo["tops"]:
        return False
    # Under folders that are not top-level: the tail of a repository path (planning/rules.py),
    # or a file a run writes (serving/served.json).
    return (path.rsplit("/", 1)[-1] in code_names
            or any(f.endswith("/" + path) for f in repo["files"]))


def _link_exists(target: str, folder: pathlib.PurePosixPath) -> bool:
    path = target.split("#")[0]
    if not path:
        return True
    resolved = (REPO / folder / path).resolve()
    return resolved.exists() and REPO in resolved.parents


def _missing_in(doc: str, text: str, code_names: set) -> list:
    """What the Markdown `text` of `doc` (a path from the root) names that does not exist."""
    folder = pathlib.PurePosixPath(doc).parent
    missing = [f"{doc}: ({target})" for target in LINK.findall(FENCE.sub("", text))
               if "://" not in target and not target.startswith("mailto:")
               and not _link_exists(target, folder)]
    words = {_clean(word) for word, strict in _words(text) if _is_reference(_clean(word), strict)}
    return missing + [f"{doc}: `{word}`" for word in sorted(words)
                      if not _exists(word, folder, code_names)]


def _missing(docs: dict) -> list:
    """Every name in `docs` ({path: Markdown text}) that is neither a file nor exempt."""
    code_names = _names_the_code_spells()
    missing = [entry for doc, text in sorted(docs.items())
               for entry in _missing_in(doc, text, code_names)]
    ignored = _ignored({entry.split("`")[1] for entry in missing if "`" in entry})
    return [entry for entry in missing if "`" not in entry or entry.split("`")[1] not in ignored]


def test_every_file_a_doc_names_exists():
    docs = {f: (REPO / f).read_text(encoding="utf-8") for f in _repo()["files"]
            if f.endswith(".md")}
    missing = _missing(docs)
    assert not missing, "docs name files that do not exist:\n" + "\n".join(missing)


def test_the_check_finds_a_stale_name_and_passes_the_rest():
    doc = """Moved: `components/common/limits.py`, `drift.py`, [old](../pipeline/config.md),
`kubeflow/compiler.py`, and `python pipeline/cli.py --help`.
Here: `core/limits.py`, `limits.py`, `planning/rules.py`, `modules/params.TrainerParams`,
`bench/ingestion/ingest_speed`, [docs](../docs/kubeflow.md#tests), `summary.json`,
`<output>/report/index.html`, `outputs/summary.json`, `bench/results/suite.json`,
`gs://b/photos`, `~/photos`, `tfx/orchestration/kubeflow/v2/step_builder.py`.

```bash
bash scripts/bench.sh training/levers --data DIR
```
"""
    assert sorted(_missing({"pipeline/README.md": doc})) == [
        "pipeline/README.md: (../pipeline/config.md)",
        "pipeline/README.md: `components/common/limits.py`",
        "pipeline/README.md: `drift.py`",
        "pipeline/README.md: `kubeflow/compiler.py`",
        "pipeline/README.md: `pipeline/cli.py`"]


def _commands_section() -> str:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    return readme.split("\n## Commands\n", 1)[1].split("\n## ", 1)[0]


def test_readme_commands_name_every_subcommand():
    from cli.main import build_parser
    subparsers = next(action for action in build_parser()._actions
                      if isinstance(action, argparse._SubParsersAction))
    section = _commands_section()
    unnamed = [name for name in subparsers.choices
               if not re.search(rf"imagepipe {name}\b", section)]
    assert not unnamed, f"README.md's ## Commands does not name: {unnamed}"


def test_readme_commands_give_every_exit_code():
    from cli import main
    codes = {name: value for name, value in vars(main).items()
             if name.startswith("EXIT_") and isinstance(value, int)}
    assert set(codes) >= {"EXIT_OK", "EXIT_PIPELINE_FAILED", "EXIT_BAD_INPUT", "EXIT_ALERTING"}
    section = _commands_section()
    absent = [f"{name} ({value})" for name, value in codes.items()
              if not re.search(rf"^\| `?{value}`? \|", section, re.M)]
    assert not absent, f"README.md's ## Commands has no exit-code table row for: {absent}"
