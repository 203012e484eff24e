"""The floating-point facts certificates rely on, in one place.

* :data:`UNIT_ROUNDOFF` and :func:`fp_margin`: the allowance for a chain of rounded sums;
* :func:`block_sum` and :func:`sum_chain`: sums over many terms whose rounding chain is short;
* :func:`kernel_entry_error`: the error of one computed kernel entry :math:`e^{-tD_{ij}}`;
* :data:`STORED_PAD` and :func:`stored_bound`: how a computed bound is written to a file;
* :func:`dyadic_quantum`: the grid on which duals are stored so that linear equalities
  (:math:`\\mathbf 1^\\top u = 0`, :math:`y^\\top\\alpha = 0`) hold exactly.

Numpy only: the verifier imports this module.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["UNIT_ROUNDOFF", "GRID_BITS", "STORED_PAD", "SUM_BLOCK", "ELSEWHERE_MARGINS", "fp_margin",
           "margins_of", "block_sum", "sum_chain", "kernel_entry_error", "stored_bound", "dyadic_quantum", "zero_sum",
           "log_mid", "log_width", "round_up", "difference_up"]

#: Unit roundoff of IEEE double precision (half the machine epsilon).
UNIT_ROUNDOFF = 2.0**-53

#: Stored gap bounds are the computed bound rounded up by this relative amount, so a verifier
#: whose BLAS sums in another order (last-bit differences) still finds its own rigorous bound
#: below the stored one; claims only get weaker.
STORED_PAD = 1e-9

#: Duals are stored on the grid 2**(floor(log2 top) - GRID_BITS): integers times a power of two,
#: so sums of up to 2**(53 - GRID_BITS) such numbers (any realistic n) are exact in double
#: precision and a verifier checks an equality with ``math.fsum``.  2**-42 relative perturbs an
#: objective by ~1e-12 relative.
GRID_BITS = 42


def fp_margin(n_ops, magnitude):
    """Rigorous allowance for floating-point rounding.

    A sum of ``m`` terms computed in floating point is within :math:`\\gamma_m \\sum |x_i|`
    of the exact sum, :math:`\\gamma_m = m u/(1 - m u) \\le 1.01\\, m u` for :math:`mu <
    0.01`.  ``n_ops`` is the longest chain of dependent operations in a bound and
    ``magnitude`` dominates the absolute values of everything summed along it; 16 more
    operations cover the few steps after the sums.

    Parameters
    ----------
    n_ops : int
        The longest chain of dependent rounded operations in the bound (``m`` above).
    magnitude : float
        A nonnegative bound of :math:`\\sum_i |x_i|` over everything summed along that chain.

    Returns
    -------
    float
        :math:`1.01\\,(n_{ops} + 16)\\,u\\,\\mathrm{magnitude}`, :math:`u` = :data:`UNIT_ROUNDOFF`.
    """
    return 1.01 * (n_ops + 16) * UNIT_ROUNDOFF * float(magnitude)


#: Rounding margins a bound adds where its sums are rounded otherwise than a verifier's numpy
#: recomputes them (a device's kernel products, its exp within :func:`kernel_entry_error`'s 2
#: ulp; the SVM's class sums of a mix, combined from its parents' sums).  The verifier's value and
#: this one are each within the margin m of the exact value, so the verifier's bound exceeds this
#: value by at most 2m: 3m keeps the stored bound at or above it (found needed by the stress
#: benchmark for mixes, and by an H200's n = 16,000 path: 3 of 100 pieces above the 1e-9 pad with
#: 1m).
ELSEWHERE_MARGINS = 3


def margins_of(products):
    """How many rounding margins a bound computed from ``products`` adds: :data:`ELSEWHERE_MARGINS`
    where they are rounded otherwise than the verifier's numpy (the provider, or the owner of the
    bound method ``products``, says ``rounded_elsewhere``: a device), else 1.  ``products``: a kernel provider,
    or its bound method ``products``."""
    owner = getattr(products, "__self__", products)
    return ELSEWHERE_MARGINS if getattr(owner, "rounded_elsewhere", False) else 1


#: Terms per block of :func:`block_sum`: a chain of 256 + n/256 roundings (~650 at n = 100,000,
#: against n for a sum in an unknown order), and blocks long enough for numpy's reductions.
SUM_BLOCK = 256


def block_sum(a, axis=0):
    """The sum of ``a`` over ``axis`` with a known rounding chain (:func:`sum_chain`): blocks of
    :data:`SUM_BLOCK` consecutive terms (zeros pad the last, added exactly) summed in any order,
    then the block sums in any order.  A sum in one call may add a term up to n - 1 times,
    whatever its order; this one at most :func:`sum_chain` times.

    Parameters
    ----------
    a : array_like of shape (..., n, ...)
    axis : int

    Returns
    -------
    ndarray, ``a``'s shape without ``axis`` (a float for a 1-d ``a``)
    """
    a = np.asarray(a, dtype=float)
    if a.shape[axis] <= SUM_BLOCK:  # (one block: numpy's own sum, no view to make)
        return a.sum(axis=axis)
    a = np.moveaxis(a, axis, 0)
    n = a.shape[0]
    pad = -n % SUM_BLOCK
    if pad:
        a = np.concatenate([a, np.zeros((pad,) + a.shape[1:])])
    return a.reshape((-1, SUM_BLOCK) + a.shape[1:]).sum(axis=1).sum(axis=0)


def sum_chain(n):
    """The most additions a term of :func:`block_sum` over ``n`` terms undergoes: ``n`` for ``n <= SUM_BLOCK``,
    else ``SUM_BLOCK + ceil(n / SUM_BLOCK)``."""
    return n if n <= SUM_BLOCK else SUM_BLOCK + -(-n // SUM_BLOCK)


def weight_resolution(g):
    """The smallest weight :math:`\\lambda` of an l1 penalty on :math:`\\beta` that double precision
    can tell from 0 in a kernel problem whose loss has the gradient :math:`K g` at
    :math:`\\beta = 0`: the rounding allowance of :math:`K g` for any kernel with entries in
    :math:`[0, 1]`, ``fp_margin(n, ||g||_1)``.  The largest useful :math:`\\lambda`,
    :math:`\\lambda_{max}(t) = \\lVert K_t g\\rVert_\\infty`, is computed with that error at every
    :math:`t`, so a :math:`\\lambda` below it is below the rounding of the loss: numerically the
    problem is the unpenalized, ill-posed fit (0.4.1: klasso at lam = 1e-300 spent 25 minutes
    at the first end of its interval)."""
    g = np.asarray(g, dtype=float)
    return fp_margin(g.size, float(np.abs(g).sum()))


def kernel_entry_error(d):
    """Absolute error bound of one computed kernel entry :math:`\\exp(-tD_{ij})`.

    ``D_ij`` has relative error :math:`(d+2)u`, the product :math:`tD_{ij}` one more
    :math:`u`, and ``exp`` at most :math:`4u` relative: 2 ulp anywhere in a binade (numpy 2's
    SIMD ``exp`` is within 0.7 ulp, numpy 1.24's within 1.5 ulp, both checked by the tests on 3 M
    arguments; CUDA's documented 1 ulp from the correctly rounded result is 1.5 ulp from exact).
    An argument error :math:`\\delta\\, tD` changes :math:`e^{-tD}` by at most
    :math:`\\delta\\, tD\\, e^{-tD} \\le \\delta / e`, so every entry is within
    :math:`((d+3)/e + 4)u` of the exact kernel.

    Parameters
    ----------
    d : int
        The number of rounded terms per distance (the number of features for squared
        Euclidean distances).
    """
    return ((d + 3) / np.e + 4.0) * UNIT_ROUNDOFF


def stored_bound(bound, level=0.0):
    """The value written as ``gap_bound`` for a computed bound: rounded up by :data:`STORED_PAD`
    of the bound or of ``level``, the larger.

    ``level`` is the target the bound is measured against (the piece's eps, or eps times the
    optimal value).  A gap bound is a difference of sums of the optimal value's size, so one far
    below them moves by *their* last bits where a verifier's BLAS sums in another order (robust
    l1, n = 1000: 7.8e-13 on a bound of 1.3e-5 beside an optimal value of 372, 6e-8 of the
    bound), and the target is within a factor eps of them.

    Parameters
    ----------
    bound : float
        The gap bound as computed (rounding allowances included).
    level : float, default 0.0
        The target the bound is measured against (eps, or eps times the optimal value).

    Returns
    -------
    float
        :math:`\\mathrm{bound} + \\mathrm{STORED\\_PAD} \\max(|\\mathrm{bound}|, |\\mathrm{level}|) + 10^{-300}`.
    """
    # (+1e-300: the pad where bound and level are 0, whose recomputation elsewhere can come out a few
    # subnormal steps above 0)
    return float(bound + STORED_PAD * max(abs(bound), abs(level)) + 1e-300)


def dyadic_quantum(top):
    """The grid step ``2**(floor(log2 top) - GRID_BITS)`` for values of magnitude at most ``top > 0``."""
    return 2.0 ** (math.floor(math.log2(top)) - GRID_BITS)


def zero_sum(u):
    """``u`` (n,) minus its mean, rounded to the dyadic grid of its largest entry so that its
    sum is exactly 0 (one grid step taken off the entries pointing the excess's way, largest
    first).  NaN becomes 0.  Returns shape (n,): integer multiples of :func:`dyadic_quantum` of the largest absolute
    entry of ``u`` minus its mean (zeros where that is 0)."""
    u = np.nan_to_num(np.asarray(u, dtype=float))
    u = u - u.mean()
    top = float(np.max(np.abs(u))) if u.size else 0.0
    if top == 0.0:
        return np.zeros_like(u)
    q = dyadic_quantum(top)
    m = np.rint(u / q).astype(np.int64)
    excess = int(m.sum())
    while excess:
        step = 1 if excess > 0 else -1
        idx = np.argsort(-step * m, kind="stable")[: min(abs(excess), m.size)]
        m[idx] -= step
        excess = int(m.sum())
    return m.astype(float) * q


def log_width(lo, hi):
    """``log(hi / lo)``, the width of ``[lo, hi]`` in log scale, as ``log hi - log lo`` (the
    ratio overflows for ends such as 1e-200 and 1e200).

    Parameters
    ----------
    lo, hi : float
        The interval's ends, ``0 < lo <= hi`` (numbers, not arrays: ``math.log``).

    Returns
    -------
    float
        :math:`\\log hi - \\log lo \\ge 0`.
    """
    return math.log(hi) - math.log(lo)


def log_mid(lo, hi):
    """The middle of ``[lo, hi]`` in the log scale every path parameter is searched in (the
    geometric mean, computed as ``exp((log lo + log hi) / 2)``), clipped into ``[lo, hi]``: a
    float, or an array of the middles of arrays ``lo``, ``hi``.

    Parameters
    ----------
    lo, hi : float, or ndarray of shape (q,)
        The ends, ``0 < lo <= hi``; arrays (or one array and one number, broadcast): q intervals.

    Returns
    -------
    float, or ndarray of shape (q,)
        :math:`\\sqrt{lo \\cdot hi}` as computed, clipped into ``[lo, hi]`` (a float where the
        result has no axis).
    """
    if isinstance(lo, np.ndarray) or isinstance(hi, np.ndarray):
        m = np.clip(np.exp(0.5 * (np.log(lo) + np.log(hi))), lo, hi)
        return float(m) if m.ndim == 0 else m
    # scalars, as the paths' hot loops call it (np.clip and np.ndim would make it 4x slower)
    m = float(np.exp(0.5 * (np.log(lo) + np.log(hi))))
    return min(max(m, lo), hi)


def round_up(x, digits=3):
    """``x > 0`` to ``digits`` significant digits, rounded up: a value an error message advises
    (an eps, a tol) is never below the one it stands for, and prints as it is with ``.{digits}g``
    (a gap needing eps >= 0.0100000000000016 is told 0.0101, not 0.01).  Other ``x`` as given.

    Parameters
    ----------
    x : float
        The value to advise; only a finite ``x > 0`` is rounded.
    digits : int, default 3
        Significant digits kept, at least 1.

    Returns
    -------
    float
        The smallest number of ``digits`` significant digits at least ``x``; ``x`` itself where
        it is not finite and positive.
    """
    if not (math.isfinite(x) and x > 0):
        return x
    shown = float(f"{x:.{digits - 1}e}")
    if shown >= x:
        return shown
    return float(f"{shown + 10.0 ** (math.floor(math.log10(shown)) - digits + 1):.{digits - 1}e}")


def difference_up(u, l):
    """``u - l`` rounded up: the float nearest ``u - l``, or the next one above where that was
    below the exact difference (found by Knuth's TwoSum, exactly).  A selection's δ is such a
    difference; rounded to nearest it could be half an ulp below what was proven (``u = 1 + 2**-52``,
    ``l = 3 * 2**-54``: ``1.0``).  Infinite and NaN differences as computed.

    Parameters
    ----------
    u, l : float

    Returns
    -------
    float
    """
    u, l = float(u), float(l)
    d = u - l
    if not math.isfinite(d):
        return d
    b = d - u  # TwoSum of u and -l: d + err == u - l exactly
    err = (u - (d - b)) + (-l - b)
    return math.nextafter(d, math.inf) if err > 0 else d
