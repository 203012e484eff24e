"""The Python in the README and in ``docs/`` does what it says, as a reader would paste it.

Every ```` ```python ```` block of a page is one of:

* run (unmarked): the page's blocks run in order in one fresh interpreter, in an empty folder,
  after the page's preamble below (the data its text says the reader already has: ``X, y``, a
  certificate file);
* ``<!-- excerpt of PATH -->`` on the line before: each of its code lines (comments, blank lines
  and ``...`` aside) is a line of that file of the repository;
* ``<!-- signature of NAME -->``: the block is ``NAME(...)`` with the signature the code has;
* ``<!-- not run: REASON -->``: what it needs is not on a test machine (a Dask scheduler, a GPU).
"""

import ast
import inspect
import json
import os
import re
import shlex
import subprocess
import sys
from importlib import import_module
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PAGES = [ROOT / "README.md", *sorted((ROOT / "docs").rglob("*.md"))]
_BLOCK = re.compile(r"(?:^<!-- (?P<mark>[^>]*) -->\n)?^```python\n(?P<code>.*?)^```", re.S | re.M)

_SINC = "from approxpath.data import make_sinc\nX, y = make_sinc(n=60, seed=0)\n"
_CLASSES = "from approxpath.data import make_classification\nX, y = make_classification(n=60, seed=0)\n"
_PREAMBLES = {
    "adding-a-problem.md": f"import sys\nsys.path.insert(0, {str(ROOT / 'examples' / 'plugin_ridge')!r})\n",
    "certificate-format.md": _CLASSES + (
        "import approxpath\n"
        "approxpath.approximate_path(approxpath.get_problem('kernel_svm')(X, y, c=0.1), eps=0.25).save('cert.npz')\n"),
    # the page reads a LIBSVM file by its name: a small one of that name in the folder
    "certified-selection.md": _CLASSES + (
        "with open('ionosphere_scale', 'w') as f:\n"
        "    f.writelines(f'{int(v)} ' + ' '.join(f'{j + 1}:{x:.6f}' for j, x in enumerate(row)) + '\\n'"
        " for row, v in zip(X, y))\n"),
    "cvxpy-problems.md": _SINC.replace("n=60", "n=30"),
    "exact-paths.md": _SINC + (
        "import approxpath\nfrom approxpath.exact import lambda_path as _lp\n"
        "_path = _lp(X, y, bandwidth=1.0, lam_min=0.05)\n"
        "problem = approxpath.get_problem('klasso')(X, y, bandwidth=1.0, parameter='lam')\n"
        "t, B, b0 = _path.t, _path.beta, _path.beta0\n"),
    "feature-path.md": (
        "import numpy as np\n"
        "_r = np.random.default_rng(0)\n"
        "def _friedman(n):  # Friedman #1: y from the first 5 of 10 uniform features\n"
        "    X = _r.uniform(size=(n, 10))\n"
        "    return X, 10 * np.sin(np.pi * X[:, 0] * X[:, 1]) + 20 * (X[:, 2] - 0.5) ** 2 + 10 * X[:, 3] + 5 * X[:, 4]\n"
        "X, y = _friedman(40)\nXval, yval = _friedman(20)\nXtest, _ = _friedman(10)\n"),
    "kernels.md": _CLASSES.replace("seed=0", "d=3, seed=0") + (
        "D = ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1)\n"),
}
# a page's blocks that read what an earlier block of it computed (run after that block)
_BETWEEN = {
    ("feature-path.md", 1): "D, beta, alpha, alpha0 = path.D, path.beta, path.alpha, path.alpha0\n",
}
# pages whose blocks run for more than ~10 s on 2 cores (selections over two parameters)
_SLOW = {"surfaces.md"}

# runs the blocks in one namespace; a failure names the page and its line
_RUNNER = """
import json, sys
ns = {"__name__": "__main__"}
for name, line, code in json.load(sys.stdin):
    exec(compile("\\n" * (line - 1) + code, name, "exec"), ns)
"""


def _blocks(page):
    """``(mark, first line of the code, code)`` of each python block of ``page``."""
    text = page.read_text()
    return [(m["mark"], text.count("\n", 0, m.start("code")) + 1, m["code"]) for m in _BLOCK.finditer(text)]


def _code_lines(code):
    """A block's or a file's lines without comments, blank lines and ``...``, stripped."""
    lines = (re.sub(r"\s+#.*$|^#.*$", "", line).strip() for line in code.splitlines())
    return [line for line in lines if line and line != "..."]


def _case(page):
    name = page.name
    marks = [pytest.mark.slow] if name in _SLOW else []
    return pytest.param(page, id=str(page.relative_to(ROOT)), marks=marks)


@pytest.mark.parametrize("page", [_case(p) for p in PAGES if any(m is None for m, *_ in _blocks(p))])
def test_the_python_of_a_page_runs_as_written(page, tmp_path):
    blocks = [(str(page.relative_to(ROOT)), line, code) for mark, line, code in _blocks(page) if mark is None]
    runs = []
    for index, block in enumerate(blocks):
        between = _BETWEEN.get((page.name, index))
        runs += [("preamble", 1, between)] if between else []
        runs.append(block)
    preamble = _PREAMBLES.get(page.name)
    runs = ([("preamble", 1, preamble)] if preamble else []) + runs
    env = dict(os.environ, MPLBACKEND="Agg")
    done = subprocess.run([sys.executable, "-c", _RUNNER], input=json.dumps(runs), cwd=tmp_path, env=env,
                          capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, done.stderr[-3000:]


def _marked(kind):
    return [pytest.param(mark.split(" ", 2)[2], code, id=f"{page.relative_to(ROOT)}:{line}")
            for page in PAGES for mark, line, code in _blocks(page) if mark and mark.startswith(kind)]


@pytest.mark.parametrize("path, code", _marked("excerpt of "))
def test_an_excerpt_is_the_code(path, code):
    source = set(_code_lines((ROOT / path).read_text()))
    missing = [line for line in _code_lines(code) if line not in source]
    assert not missing, f"not in {path}: {missing}"


@pytest.mark.parametrize("name, code", _marked("signature of "))
def test_a_signature_is_the_code(name, code):
    module, attr = name.rsplit(".", 1)
    shown = ast.parse(f"def {code.strip()}: pass").body[0]
    assert shown.name == attr
    args = shown.args
    defaults = [None] * (len(args.args) - len(args.defaults)) + args.defaults + args.kw_defaults
    parameters = [(a.arg, kind, ast.literal_eval(d) if d is not None else inspect.Parameter.empty)
                  for kind, group in (("positional", args.args), ("keyword", args.kwonlyargs)) for a in group
                  for d in [defaults.pop(0)]]
    kinds = {inspect.Parameter.POSITIONAL_OR_KEYWORD: "positional", inspect.Parameter.KEYWORD_ONLY: "keyword"}
    actual = [(p.name, kinds.get(p.kind), p.default)
              for p in inspect.signature(getattr(import_module(module), attr)).parameters.values()]
    assert parameters == actual


def test_every_block_not_run_says_why():
    marks = [mark for page in PAGES for mark, *_ in _blocks(page) if mark]
    kinds = ("excerpt of ", "signature of ", "not run: ")
    assert marks and all(mark.startswith(kinds) and len(mark.split(" ", 2)) == 3 for mark in marks), marks


def _command_lines():
    """Every ``approxpath ...`` line of a code block (fenced, but not ```` ```text ````, the
    synopses; or indented) of the pages: ``(page:line, argv)``.  A placeholder in capitals
    (``FILE``, ``N``) stands for a value (``1``); a line with ``[``, ``|`` or ``...`` in a word is
    a template and is left out."""
    out = []
    for page in PAGES:
        fence = None
        for number, raw in enumerate(page.read_text().replace("\\\n", " ").splitlines(), 1):
            if raw.startswith("```"):
                fence = None if fence is not None else raw[3:]
                continue
            line = raw.strip().removeprefix("$ ").removeprefix("/usr/bin/time ")
            if fence == "text" or (fence is None and not raw.startswith("    ")) or not line.startswith("approxpath "):
                continue
            argv = shlex.split(line, comments=True)[1:]
            ends = [i for i, word in enumerate(argv) if word in ("|", ">", ">>", "&&", ";", "2>&1")]
            argv = argv[:ends[0]] if ends else argv
            if not any("[" in word or "|" in word or word == "..." for word in argv):
                argv = ["1" if re.fullmatch(r"[A-Z][A-Z_]*", word) else word for word in argv]
                out.append(pytest.param(argv, id=f"{page.relative_to(ROOT)}:{number}"))
    return out


@pytest.mark.parametrize("argv", _command_lines())
def test_a_command_line_of_the_docs_parses(argv, capsys):
    from approxpath.cli import build_parser

    if argv[:2] == ["path", "ridge"]:
        pytest.skip("the plug-in tutorial's problem (tests/test_plugin.py runs its command line)")
    try:
        build_parser(argv).parse_args(argv)
    except SystemExit as stop:  # (--help and --version stop with 0)
        assert stop.code == 0, capsys.readouterr().err


def test_the_sources_compile_without_warnings():
    """No invalid escape in a docstring (``"\\text"`` is a tab and ``"\\lambda"`` a warning, an
    error in a later Python): the math of every module reads as written."""
    import warnings

    files = [f for d in ("approxpath", "problems", "examples", "benchmarks", "tests") for f in (ROOT / d).rglob("*.py")]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        for f in files:
            compile(f.read_text(), str(f), "exec")
    assert len(files) > 100
