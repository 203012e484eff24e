"""Exact solves of the kernel SVM (search side): warm SMO on a kernel in memory, on a GPU's kernel
entries or on entries from rows of the distances, libSVM from zero, the dual QP for Clarabel/SCS
(:meth:`SVMExactSolves.candidate`)."""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from approxpath.errors import InputError, SolverError
from approxpath.solvers.conic import QP, solve_qp

from .points import SVMDual, SVMPrimal

__all__ = ["SVMExactSolves", "SMO_MIN_N", "INTERIOR_FIRST_C", "INTERIOR_FIRST_MAX_N", "RETRY_CHAIN"]

#: Warm SMO only above this many samples: below, libSVM's official binding from zero is faster
#: (the solves of a path: ionosphere, n = 351, 0.034 s against 0.093; diabetes, n = 768, 0.12
#: against 0.26; synthetic n = 1000 equal).  Above, it depends on the data: libSVM from zero
#: takes 1.6-5.3x as long on synthetic data (n = 2000-16000, most alpha at C), 0.69-0.90x on the
#: LIBSVM a-sets (n = 2265-4781).
SMO_MIN_N = 1000
#: From this C on (and up to :data:`INTERIOR_FIRST_MAX_N` samples), an exact solve started from
#: one that reached the interior point (Clarabel, SCS: libSVM's chain missed there, or it went
#: first) tries it first.  libSVM's single-precision kernel leaves a certified gap of ~1e-8 C
#: relative (above the solvers' 1e-7 mark from C ~ 10; its float64 polish reaches the mark up to
#: C ~ 100), and where the classes overlap SMO's iterations grow with C, while Clarabel's do not:
#: bandwidth paths at C = 1000, relative eps 1e-2, Clarabel first against libSVM's chain: synthetic
#: n = 200 4.3x faster, diabetes 2.3x; where they barely overlap (heart, ionosphere) libSVM's
#: chain is 1.6x and 3.2x faster, and its first solve keeps it.
INTERIOR_FIRST_C = 1000.0
#: ... up to this many samples: its dense QP holds ~12 arrays of n^2 entries (384 MB here, beside a
#: path's kernel caches of several), and its time grows like n^3 (n = 4000, C = 1000, t = 1:
#: Clarabel 24.7 s and a 1.3 GB process, libSVM's chain 37.8 s: 1.5x, against 2.0-2.3x at n = 2000).
INTERIOR_FIRST_MAX_N = 2000
#: A streak of solves that try Clarabel first lasts this many times C / INTERIOR_FIRST_C solves,
#: then libSVM's chain is tried again: a wasted try costs more as C grows (its iterations), so the
#: tries thin out with C (4: heart at C = 1000, where the chain misses at one solve in six, 15.3 s
#: against 17.1 s for the chain alone; synthetic n = 200 at C = 10^4, where it always misses, 9.6 s
#: against 5.0 s for Clarabel first at every solve).
RETRY_CHAIN = 4


class SVMExactSolves:
    """The exact-solve capabilities of :class:`~.problem.KernelSVM` (a mixin): ``solve`` (the
    backends' order), ``exact_qp``, ``candidate`` and the kernel buffer of the exact solves."""

    _interior_tries = 0  # the interior-point candidates made so far (:meth:`solve` reads it)

    def solve(self, t, solver=None, **options):
        """:meth:`approxpath.Problem.solve`, the backends in the order that suits C at ``t`` when
        ``solver`` is not given: :attr:`backends`, or Clarabel first from :data:`INTERIOR_FIRST_C`
        on (up to :data:`INTERIOR_FIRST_MAX_N` samples) where the nearby solve ``warm`` ends a
        streak of solves that reached it shorter than :data:`RETRY_CHAIN` times C / 1000.  The
        dual returned carries this solve's streak (``SVMDual.interior``: 0 where libSVM's chain
        answered)."""
        warm = options.get("warm")
        streak = 0 if warm is None else getattr(warm[1], "interior", 0)
        C = self.sweep.at(t)[1]
        first = solver is None and self._interior_first(C) and 1 <= streak < RETRY_CHAIN * C / INTERIOR_FIRST_C
        if first:
            solver = ["clarabel"] + [name for name in self.backends if name != "clarabel"]
        before = self._interior_tries
        primal, dual = super().solve(t, solver, **options)
        reached = self._interior_tries > before
        return primal, replace(dual, interior=streak + 1 if first else int(reached))

    def anchor_state(self, pair):
        """What a checkpoint stores beside an exact solve (the search's :meth:`solve` order reads
        it): its streak of solves that reached the interior point; ``{}`` where it has none."""
        return {"interior": np.array(pair[1].interior)} if pair[1].interior else {}

    def with_anchor_state(self, pair, t, state):
        """The exact solve's ``pair`` read from a checkpoint, with its :meth:`anchor_state` back."""
        return pair[0], replace(pair[1], interior=int(state.get("interior", 0)))

    def _interior_first(self, C):
        return self.n <= INTERIOR_FIRST_MAX_N and C >= INTERIOR_FIRST_C

    @property
    def first_backends(self):
        """The backends an exact solve may try first, whose working sets a path's memory estimate
        counts (:func:`approxpath.memory.path_bytes`): :attr:`backends`' first, and Clarabel where C
        may reach :data:`INTERIOR_FIRST_C` (on a C path: any, its interval is not known here)."""
        top = self.sweep.weight if self.sweep.along_bandwidth else np.inf
        return (self.backends[0],) + (("clarabel",) if self._interior_first(top) else ())

    def exact_qp(self, t):
        """The dual as a QP in Clarabel/SCS form: min 1/2 a'Qa - 1'a, y'a = 0, 0 <= a <= C."""
        import scipy.sparse as sp  # (only a fallback's: not imported by every run)

        bw, C = self.sweep.at(t)
        n = self.n
        Q = self.gram(t) * np.outer(self.y, self.y)
        P = sp.csc_matrix(np.triu(Q))
        A = sp.vstack([sp.csr_matrix(self.y[None, :]), -sp.eye(n), sp.eye(n)]).tocsc()
        b = np.concatenate(([0.0], np.zeros(n), np.full(n, C)))
        return QP(P=P, q=-np.ones(n), A=A, b=b, zero=1, nonneg=2 * n)

    def candidate(self, backend, t, warm=None):
        """``smo``: SMO started from the nearest exact solve ``warm`` (:mod:`.smo`), on a kernel in
        memory or its computed entries; ``libsvm``: libSVM from zero (on the kernel in memory,
        else on its own RBF), under tight settings taken on by float64 SMO; ``clarabel``/``scs``:
        the dual QP (:meth:`exact_qp`)."""
        if backend == "smo":
            return self._smo_candidate(t, warm)
        if backend == "libsvm":
            from approxpath.solvers import current_settings

            from .libsvm import libsvm_candidate, libsvm_rbf_candidate

            bw, C = self.sweep.at(t)
            K = self._solve_kernel(bw) if self.bound.blocked else self.gram(t)
            if K is None:  # no n x n kernel fits: libSVM computes and caches its own
                return libsvm_rbf_candidate(self._rbf_features(), self.y, C, bw, self.kernels.mode == "distances")
            pair = libsvm_candidate(K, self.y, C)
            if not current_settings().tight:
                return pair
            # libSVM keeps its kernel in single precision (its Qfloat): its optimum's certified gap
            # stalls at 1e-7 - 1e-6 of the objective at C = 8 - 32 (heart) whatever its tolerance;
            # float64 SMO from there reaches 1e-9 - 1e-8 in 10 - 430 iterations (2 - 25 ms)
            return self._smo(K, C, pair[1].alpha, tight=True)
        self._interior_tries += 1
        sol = solve_qp(self.exact_qp(t), backend)
        # Stationarity Qa - 1 + z0 y - z_lo + z_hi = 0 makes z0 the primal bias b.
        return SVMPrimal(w=self.y * sol.x, b=float(sol.z[0])), SVMDual(alpha=sol.x)

    def _smo_candidate(self, t, warm):
        """The ``smo`` backend, from the nearby solve ``warm`` or (a path's first solve) from
        :func:`~.smo.cold_start`; it declines (:class:`~approxpath.errors.SolverError`) with at
        most :data:`SMO_MIN_N` samples (the next backend then solves from zero).  Where the kernel
        products run on a device that computes kernel entries (``kernel_rows``: a GPU), SMO reads
        them there; without whole kernels on the host and no room for the solve's kernel, from
        rows of the distances as it reads them (:class:`~.smo.ComputedKernel`): no n x n kernel is
        formed on the host.  (The first solve at n = 16,000, C = 0.1, t = 2^-10 on the CPU:
        0.14-0.23 s from the cold start, 2.4 s by libSVM from zero with scikit-learn's import; the
        same alpha.)"""
        from approxpath.solvers import current_settings

        from .smo import ComputedKernel, cold_start

        if self.n <= SMO_MIN_N:
            raise SolverError(f"n <= {SMO_MIN_N}: libSVM from zero is faster")
        bw, C = self.sweep.at(t)
        if hasattr(self.kernels, "kernel_rows"):
            K = ComputedKernel(self.kernels, bw)
        else:
            K = self.gram(t) if not self.bound.blocked else self._solve_kernel(bw)
            if K is None:  # no kernel in memory: the entries SMO reads come from rows of the distances
                K = ComputedKernel(self.kernels, bw)
        start = cold_start(K, self.y, C) if warm is None else warm[1].alpha
        return self._smo(K, C, start, tight=current_settings().tight)

    def _smo(self, K, C, alpha, tight):
        """SMO in float64 (:mod:`.smo`) on the kernel ``K`` from ``alpha`` (made feasible at C:
        the C path moves the box), at libSVM's tolerance or (``tight``) its tighter one."""
        from .libsvm import LIBSVM_TIGHT_TOL, LIBSVM_TOL
        from .smo import warm_smo

        start = self._repair(np.minimum(alpha, C), C)
        alpha, b, _ = warm_smo(K, self.y, C, start, LIBSVM_TIGHT_TOL if tight else LIBSVM_TOL)
        return SVMPrimal(w=self.y * alpha, b=b), SVMDual(alpha=alpha)

    def _solve_kernel(self, bw):
        """:math:`\\exp(-bw\\,D)` from the stored distances into one buffer kept for the exact
        solves (the ``"distances"`` mode, where :func:`~approxpath.memory.solve_kernel_fits`),
        and held for the kernel products at ``bw`` until the next solve; else None."""
        from approxpath.compute.kernels import gaussian
        from approxpath.memory import solve_kernel_fits

        if self._kernel_buffer is None:
            if self.kernels.mode != "distances" or not solve_kernel_fits(self.n, self.X.shape[1]):
                return None
            self._kernel_buffer = np.empty((self.n, self.n))
        self.kernels.hold(None, None)
        K = gaussian(self.kernels.D, bw, out=self._kernel_buffer)
        self.kernels.hold(bw, K)  # the solve's point gap reads it (the same entries)
        return K

    def _rbf_features(self):
        """Features on which libSVM's RBF kernel :math:`\\exp(-\\gamma\\lVert u - u'\\rVert^2)` with
        :math:`\\gamma = t` is :math:`K_t` (the blocked mode): ``X`` for the gaussian family,
        :math:`\\sqrt{w_k} x_k` for ``ard``; :class:`InputError` for the others."""
        if self.kernel == "gaussian":
            return self.X
        if self.kernel == "ard":
            return self.X * np.sqrt(np.asarray(self.feature_weights, dtype=float))
        raise InputError(f"kernel_svm with kernel={self.kernel!r} at n = {self.n} needs the n x n kernel for libSVM "
                         "(its own kernel is gaussian), which does not fit the memory budget: raise "
                         "APPROXPATH_MEMORY (bytes), use fewer samples, kernel='gaussian' / 'ard', or a GPU "
                         "(device='gpu': SMO reads the kernel's entries there)")
