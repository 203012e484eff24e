"""A private name (one leading underscore) stays in the module that defines it: no module of the
package or of the built-in problems imports another's private name or reads one off another
module's object.  A subclass that extends or overrides a private hook of its base (``_transient``)
defines that name in its own module too, so it counts as its own.  Checked on the source (ast)."""
import ast
import collections
import pathlib

ROOT = pathlib.Path(__file__).resolve().parents[1]
SOURCES = sorted(p for folder in ("approxpath", "problems") for p in (ROOT / folder).rglob("*.py"))


def _private(name):
    return name.startswith("_") and not name.startswith("__")


def _definitions(trees):
    """Private name -> the modules that define it (a def, a class, an assignment to a name or attribute)."""
    where = collections.defaultdict(set)
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                name = node.name
            elif isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Store):
                name = node.attr
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                name = node.id
            else:
                continue
            if _private(name):
                where[name].add(path)
    return where


def _crossings(trees):
    where = _definitions(trees)
    for path, tree in trees.items():
        for node in ast.walk(tree):
            if isinstance(node, ast.ImportFrom) and (node.level or (node.module or "").startswith("approxpath")):
                yield from (f"{path}:{node.lineno} imports {a.name}" for a in node.names if _private(a.name))
            elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                  and node.func.id in ("getattr", "hasattr") and len(node.args) > 1
                  and isinstance(node.args[1], ast.Constant) and isinstance(node.args[1].value, str)
                  and where.get(node.args[1].value) and path not in where[node.args[1].value]):
                yield f"{path}:{node.lineno} reads {ast.unparse(node)}"
            elif (isinstance(node, ast.Attribute) and _private(node.attr) and where.get(node.attr)
                  and path not in where[node.attr]
                  and not (isinstance(node.value, ast.Name) and node.value.id in ("self", "cls"))):
                yield f"{path}:{node.lineno} reads {ast.unparse(node)}"


def test_no_module_reaches_another_modules_private_names():
    trees = {str(p.relative_to(ROOT)): ast.parse(p.read_text(encoding="utf-8")) for p in SOURCES}
    assert len(trees) > 100  # the whole package was read
    assert list(_crossings(trees)) == []


def test_the_check_finds_a_crossing():
    trees = {"a.py": ast.parse("def _helper():\n    pass\n"),
             "b.py": ast.parse("from .a import _helper\nimport a\na._helper()\ngetattr(a, '_helper', None)\n"
                               "from approxpath.a import _helper\n")}
    assert set(_crossings(trees)) == {"b.py:1 imports _helper", "b.py:3 reads a._helper",
                                      "b.py:4 reads getattr(a, '_helper', None)", "b.py:5 imports _helper"}
