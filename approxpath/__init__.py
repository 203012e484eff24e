"""approxpath: certified epsilon-approximate solution paths of parameterized convex problems.

>>> import approxpath
>>> from approxpath.data import make_classification
>>> X, y = make_classification(n=40, seed=0)
>>> problem = approxpath.get_problem("kernel_svm")(X, y, c=0.1, bias="dynamic")
>>> path = approxpath.approximate_path(problem, eps=0.5, interval=(2**-4, 2**4))
>>> path.certified
True
"""

from .certificate import VerifyReport, verify
from .driver import STRATEGIES, BudgetExceededError, EpsilonTooSmallError, approximate_path, map_paths
from .path import Path, PathPiece, load_path
from .problem import Declaration, InputError, Problem
from .registry import available_problems, get_problem, register
from .solvers import SolverError, SolveSettings

__version__ = "0.3.2"

__all__ = [
    "BudgetExceededError",
    "Declaration",
    "EpsilonTooSmallError",
    "InputError",
    "Path",
    "PathPiece",
    "Problem",
    "STRATEGIES",
    "SolveSettings",
    "SolverError",
    "VerifyReport",
    "approximate_path",
    "available_problems",
    "get_problem",
    "load_path",
    "map_paths",
    "register",
    "verify",
]
