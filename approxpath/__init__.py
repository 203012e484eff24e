"""approxpath: certified epsilon-approximate solution paths of parameterized convex problems.

>>> import approxpath
>>> from approxpath.data import make_classification
>>> X, y = make_classification(n=40, seed=0)
>>> problem = approxpath.get_problem("kernel_svm")(X, y, c=0.1, bias="dynamic")
>>> path = approxpath.approximate_path(problem, eps=0.5, interval=(2**-4, 2**4))
>>> path.certified
True

The names below are imported on first use (``approxpath.verify`` does not load the solvers,
and the command line starts without importing what a command does not need), and so are the
submodules (``approxpath.data.make_classification`` after ``import approxpath``).
"""

from importlib import import_module

__version__ = "0.5.0"

# public name -> module that defines it
_EXPORTS = {
    "approximate_path": "driver", "map_paths": "driver", "STRATEGIES": "driver",
    "Path": "result", "PathPiece": "result", "load_path": "path_file",
    "approximate_surface": "surface", "Surface": "surface", "load_surface": "surface", "select_surface": "surface",
    "SurfaceSelection": "surface", "select": "selection", "Selection": "selection",
    "verify": "certificate", "VerifyReport": "certificate",
    "Problem": "problem", "Declaration": "problem",
    "KernelProblem": "kernel_problem", "Bound": "bound", "KernelBound": "bound", "Option": "bound",
    "CvxpyProblem": "cvxpy_problem",
    "available_problems": "registry", "get_problem": "registry", "get_bound": "registry", "register": "registry",
    "SolveSettings": "solvers",
    "InputError": "errors", "SolverError": "errors", "EpsilonTooSmallError": "errors",
    "BudgetExceededError": "errors", "SelectionStalledError": "errors", "ClusterError": "errors",
    "SelectionInterrupted": "errors",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name):
    module = _EXPORTS.get(name)
    if module is None:
        if not name.startswith("_"):  # a submodule, imported on first use as well (approxpath.data, ...)
            try:
                return import_module(f".{name}", __name__)
            except ModuleNotFoundError as exc:
                if exc.name != f"{__name__}.{name}":  # (a dependency of the submodule is missing: say so)
                    raise
        raise AttributeError(f"module 'approxpath' has no attribute {name!r}")
    value = getattr(import_module(f".{module}", __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_EXPORTS))
