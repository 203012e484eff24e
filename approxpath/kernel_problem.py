"""Search side shared by every problem on a kernel :math:`K_t = \\exp(-tD)`.

A :class:`KernelProblem` gets from its :class:`~approxpath.bound.KernelBound` the checked data,
the options, the kernel (with the caches a search needs) and the :class:`~approxpath.bound.Sweep`:
which parameter the path sweeps (the bandwidth, or the weight C / λ) and which is fixed.  A
problem writes only its own maps and objectives in terms of ``self.sweep.at(tau)``.

Every kernel problem takes the options ``kernel`` (the family of :math:`D`:
:mod:`approxpath.kernel_families`) and ``feature_weights`` (for ``kernel="ard"``) without
writing them in its constructor: they are added to each subclass's constructor here.
"""

from __future__ import annotations

import functools
import inspect
import re

from .bound import KERNEL_OPTIONS
from .errors import InputError
from .kernel_families import cross_distances
from .kernels import gaussian
from .problem import Problem

__all__ = ["KernelProblem"]


def _with_kernel_options(init):
    """``init`` (a subclass's constructor) taking the keyword-only options of
    :data:`~approxpath.bound.KERNEL_OPTIONS` too, with its signature saying so (the CLI's flags
    and the conformance checks read it).  The options reach :meth:`KernelProblem.__init__`."""
    sig = inspect.signature(init)
    if all(name in sig.parameters for name in KERNEL_OPTIONS):
        return init  # the constructor names them itself

    @functools.wraps(init)
    def __init__(self, X, y, *args, **options):
        self._kernel_options = {k: options.pop(k) for k in KERNEL_OPTIONS if k in options}
        init(self, X, y, *args, **options)

    params = list(sig.parameters.values())
    at = next((i for i, p in enumerate(params) if p.kind is p.VAR_KEYWORD), len(params))
    params[at:at] = [inspect.Parameter(k, inspect.Parameter.KEYWORD_ONLY, default=spec.default)
                     for k, spec in KERNEL_OPTIONS.items() if k not in sig.parameters]
    __init__.__signature__ = sig.replace(parameters=params)
    return __init__


# The kernel options as numpydoc entries, added to each subclass's "Parameters" (help, CLI flags).
_KERNEL_DOC = """
    kernel : {"gaussian", "laplacian", "ard", "precomputed"}, default "gaussian"
        The distances D of the kernel exp(-tD): squared Euclidean, l1, weighted squared
        Euclidean, or given (then X is D, n x n; see docs/kernels.md).
    feature_weights : sequence of float, optional
        The weights w_k >= 0 of kernel="ard" in D = sum_k w_k (x_k - x'_k)^2 (1,0.5,2 on a command line)
"""


def _with_kernel_doc(doc):
    """``doc`` with :data:`_KERNEL_DOC` at the end of its "Parameters" section (unchanged if it
    has none or already documents ``kernel``)."""
    if not doc or "Parameters\n    ----------" not in doc or "\n    kernel :" in doc:
        return doc
    start = doc.index("Parameters\n    ----------")
    nxt = re.search(r"\n\n    \w[\w ]*\n    -{3,}", doc[start + 10:])
    at = start + 10 + nxt.start() if nxt else len(doc.rstrip())
    return doc[:at].rstrip("\n") + "\n" + _KERNEL_DOC.strip("\n") + "\n" + doc[at:]


class KernelProblem(Problem):
    """Base of the problems on a kernel :math:`K_t = \\exp(-tD)` (see :class:`~approxpath.Problem`).

    ``problem.sweep`` tells the bandwidth and the weight at a path parameter
    (``t, C = problem.sweep.at(tau)``), ``problem.kernel(tau)`` is :math:`K_t` there (cached),
    ``problem.kernels`` the provider of kernel products (:class:`~approxpath.kernels.KernelCache`),
    ``problem.kernel_family`` the family of :math:`D` (the option ``kernel``).
    """

    #: Validation losses that make sense for the predictions (:mod:`approxpath.selection`).
    criteria = ("mae", "mse")

    def __init_subclass__(cls, **kw):
        super().__init_subclass__(**kw)
        if "__init__" in vars(cls):
            cls.__init__ = _with_kernel_options(vars(cls)["__init__"])
            cls.__doc__ = _with_kernel_doc(cls.__doc__)

    def __init__(self, X, y, **options):
        options = {**self.__dict__.pop("_kernel_options", {}), **options}
        self.bound = self.make_bound(X, y, options)
        for key, value in self.bound.options.items():
            if key != "kernel":  # the method kernel(tau) keeps its name: the option is kernel_family
                setattr(self, key, value)

    def make_bound(self, X, y, options):
        return self.Bound(X, y, cache=True, **options)

    sweep = property(lambda self: self.bound.sweep)
    kernels = property(lambda self: self.bound.kernels)
    D = property(lambda self: self.bound.kernels.D)
    kernel_family = property(lambda self: self.bound.family)

    def kernel(self, tau):
        """:math:`K_t` at the bandwidth of the path parameter ``tau``, shape (n, n) (cached; read only)."""
        return self.bound.kernel(tau)

    def cross_kernel(self, tau, X_new):
        """:math:`k_t(x, x_j)` for the rows ``x`` of ``X_new`` (m, d) and the training points:
        shape (m, n), at the bandwidth of ``tau``.  With ``kernel="precomputed"``, ``X_new`` is
        the matrix :math:`D_{new}` (m, n) of distances from the new points to the training points."""
        D_new = cross_distances(X_new, self.X, self.kernel_family, self.bound.options["feature_weights"])
        return gaussian(D_new, self.sweep.at(tau)[0])

    def weight_max(self):
        """Where the weight path's default interval ends when no weight is given (a problem
        whose zero solution becomes optimal there overrides this)."""
        raise InputError(f"{self.name}: the {self.sweep.weight_name} path needs its interval, or "
                         f"{self.sweep.weight_name}= (the top of the default interval)")

    def default_interval(self):
        """Bandwidth: ``(2**-10, 2**10)``; weight: ``(1e-3 top, top)`` with ``top`` the given
        weight or else :meth:`weight_max`."""
        if self.sweep.along_bandwidth:
            return (2.0**-10, 2.0**10)
        top = self.sweep.weight if self.sweep.weight is not None else self.weight_max()
        return (1e-3 * top, top)
