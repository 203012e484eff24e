"""approxpath-kernel-ridge: an example plug-in adding kernel ridge regression to approxpath.

The problem class is found through the entry point ``approxpath.problems`` (see
``pyproject.toml``): after ``pip install .`` it is ``approxpath.get_problem("kernel_ridge")``.
"""

from .kernel_ridge import KernelRidge, RidgeDual, RidgePrimal
from .loocv import loocv, loocv_curve

__all__ = ["KernelRidge", "RidgeDual", "RidgePrimal", "loocv", "loocv_curve"]
