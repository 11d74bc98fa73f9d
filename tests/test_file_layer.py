"""One file layer: only core/storage/ tells a local disk from a bucket.

Everything else calls core/storage/files.py, as TFX's components call
tfx/dsl/io/fileio.py. tf.data readers (TFRecordDataset) are not file-system
calls and stay as they are; tests/ and bench/ are not checked.
"""
import ast
import subprocess

from tests.support.paths import REPO

ALLOWED = ("core/storage/", "tests/", "bench/")
FIX = "use core/storage/files.py"
SCHEME_METHODS = ("startswith", "endswith")


def _checked_files():
    out = subprocess.run(["git", "ls-files", "*.py"], cwd=REPO, capture_output=True,
                         text=True, check=True).stdout.split()
    return [name for name in out
            if not name.startswith(ALLOWED) and (REPO / name).exists()]


def _dotted(node: ast.AST) -> str:
    """`tf.io.gfile` for an Attribute chain over a Name; '' for anything else."""
    parts = []
    while isinstance(node, ast.Attribute):
        parts.append(node.attr)
        node = node.value
    return ".".join([node.id, *reversed(parts)]) if isinstance(node, ast.Name) else ""


def _has_scheme(node: ast.AST) -> bool:
    """A string literal with "://", or a tuple or list of literals one of which has it."""
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        return any(_has_scheme(element) for element in node.elts)
    return isinstance(node, ast.Constant) and isinstance(node.value, str) \
        and "://" in node.value


def _import_problem(node: ast.AST) -> str:
    """Why an import reaches around the layer, or ''."""
    if isinstance(node, ast.Import):
        names = [alias.name for alias in node.names]
    elif isinstance(node, ast.ImportFrom) and node.module:
        names = [f"{node.module}.{alias.name}" for alias in node.names]
    else:
        return ""
    bad = [name for name in names if "gfile" in name.split(".")
           or name.startswith("tfx.dsl.io.fileio")]
    return f"imports {', '.join(bad)}" if bad else ""


def _problem(node: ast.AST) -> str:
    """What `node` does that only core/storage/ may do, or ''."""
    if isinstance(node, ast.Attribute):
        if node.attr == "gfile":
            return f"uses {_dotted(node) or '...gfile'}"
        if isinstance(node.value, ast.Name) and node.value.id in ("gfile", "fileio"):
            return f"uses {node.value.id}.{node.attr}"
    if isinstance(node, ast.Compare) and any(isinstance(op, (ast.In, ast.NotIn))
                                             for op in node.ops):
        if _has_scheme(node.left):
            return 'tests a path for "://" by hand'
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) \
            and node.func.attr in SCHEME_METHODS and any(map(_has_scheme, node.args)):
        return f"tests a path's scheme by hand ({node.func.attr})"
    return _import_problem(node)


def _violations(name: str, source: str):
    for node in ast.walk(ast.parse(source, filename=name)):
        problem = _problem(node)
        if problem:
            yield f"{name}:{node.lineno}: {problem}: {FIX}"


def test_file_operations_go_through_components_storage():
    found = sorted(v for name in _checked_files()
                   for v in _violations(name, (REPO / name).read_text(encoding="utf-8")))
    assert not found, "file-system calls outside core/storage/:\n" + "\n".join(found)


def test_the_check_sees_every_way_around_the_layer_and_nothing_else():
    source = '''"""Docs may say tf.io.gfile.glob, "://" in path and startswith("gs://")."""
import tensorflow as tf
from tfx.dsl.io import fileio
from tensorflow.io import gfile
def f(path, url):
    tf.io.gfile.glob(path)
    gfile.exists(path)
    fileio.remove(path)
    if "://" in path or "gs://" not in url:
        return path.startswith(("gs://", "s3://"))
    message = "see https://example.com"  # a literal, not a test
    return tf.data.TFRecordDataset(path), message, "://".join(["a", "b"])
'''
    found = list(_violations("x.py", source))
    lines = sorted({int(v.split(":")[1]) for v in found})
    assert lines == [3, 4, 6, 7, 8, 9, 10], found
    assert all(v.endswith(FIX) for v in found)
