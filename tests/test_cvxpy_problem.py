"""Problems declared only in CVXPY (approxpath.CvxpyProblem).

References: scikit-learn's coordinate-descent elastic net and lasso (tight tolerances) for the
lambda paths, the closed-form optimum of a kernel smoother for the bandwidth paths, and forged
certificates that must fail."""

import pickle

import cvxpy as cp
import numpy as np
import pytest

import approxpath
from approxpath.bound import Option
from approxpath.certificate import verify
from approxpath.certificate.claims import claimed_on
from approxpath.certificate.format import read_certificate
from approxpath.data import make_sinc
from approxpath.driver import STRATEGIES

from certificate_helpers import elastic_net_example, tamper
from plugin_problems import Lasso, ResidualSmoother, Smoother, regression

sklearn_linear = pytest.importorskip("sklearn.linear_model")

_example = elastic_net_example


def _sklearn_objective(X, y, lam, mix):
    """The elastic-net optimum from scikit-learn (same scaling: 1/(2n) loss, alpha = lam)."""
    n = len(y)
    if mix == 1.0:
        model = sklearn_linear.Lasso(alpha=lam, fit_intercept=False, tol=1e-14, max_iter=1_000_000)
    else:
        model = sklearn_linear.ElasticNet(alpha=lam, l1_ratio=mix, fit_intercept=False, tol=1e-14, max_iter=1_000_000)
    w = model.fit(X, y).coef_
    return np.sum((y - X @ w) ** 2) / (2 * n) + lam * (mix * np.abs(w).sum() + (1 - mix) / 2 * w @ w)


# ---------------------------------------------------------------------------- lambda paths
def test_the_worked_example_runs(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert _example().main() == 0
    out = capsys.readouterr().out
    assert "0 certified" in out and "0 uncovered" in out and any(line.startswith("OK: ") for line in out.splitlines())
    assert (tmp_path / "elastic_net_cvxpy.npz").is_file()


def test_elastic_net_path_is_sampled_and_eps_close_to_sklearn_at_50_random_lam(tmp_path):
    """CVXPY-declared pieces are "sampled" (feasibility and rounding only to tolerances), never
    certified; for this weight-form problem the claim holds between the sampled points too, which
    an independent solver checks at 50 random lambda."""
    ElasticNet = _example().ElasticNet
    X, y = regression()
    eps, interval = 1e-3, (1e-3, 1.0)
    problem = ElasticNet(X, y, mix=0.5)
    assert not problem.bound.interval_bound
    path = approxpath.approximate_path(problem, eps=eps, interval=interval)
    assert {p.kind for p in path.pieces} == {"sampled"} and path.max_gap_bound <= eps, path.summary()
    report = verify(path.save(tmp_path / "enet.npz"), X, y)
    assert report.ok and report.sampled == len(path.pieces) and report.certified == 0, str(report)
    worst = -np.inf
    for lam in np.exp(np.random.default_rng(50).uniform(*np.log(interval), 50)):
        beta = path.primal(lam).beta
        f = np.sum((y - X @ beta) ** 2) / (2 * len(y)) + lam * (0.5 * np.abs(beta).sum() + 0.25 * beta @ beta)
        sub = f - _sklearn_objective(X, y, lam, 0.5)
        assert -1e-9 <= sub <= eps, (lam, sub)
        worst = max(worst, sub)
    assert worst > 0.01 * eps  # the check has teeth


def test_lasso_with_a_moving_dual_constraint_is_eps_close_to_sklearn(tmp_path):
    X, y = regression(seed=1)
    eps, interval = 1e-3, (1e-3, 1.0)
    problem = Lasso(X, y)
    path = approxpath.approximate_path(problem, eps=eps, interval=interval)
    assert not path.uncovered() and {p.kind for p in path.pieces} == {"sampled"}, path.summary()
    assert verify(path.save(tmp_path / "lasso.npz"), X, y).ok
    meta = path.certificate()[1]  # (a problem without a kernel records none; a plug-in, where it came from)
    assert "kernel" not in meta and meta["problem_source"] == "plugin_problems.Lasso"
    assert "problem: lasso_cvxpy from plugin_problems.Lasso" in str(verify(tmp_path / "lasso.npz", X, y))
    for lam in np.exp(np.random.default_rng(20).uniform(*np.log(interval), 20)):
        beta = path.primal(lam).beta
        f = np.sum((y - X @ beta) ** 2) / (2 * len(y)) + lam * np.abs(beta).sum()
        assert -1e-9 <= f - _sklearn_objective(X, y, lam, 1.0) <= eps


def test_forged_cvxpy_certificates_fail(tmp_path):
    ElasticNet = _example().ElasticNet
    X, y = regression(n=20, d=4, seed=3)
    path = approxpath.approximate_path(ElasticNet(X, y), eps=1e-3, interval=(0.01, 1.0))
    cert = path.save(tmp_path / "enet.npz")
    for key in ("primal_beta", "dual_u"):
        forged = tamper(cert, tmp_path / f"{key}.npz", lambda a, m, k=key: a[k].__imul__(1.5), rehash=True)
        assert not verify(forged, X, y).ok, key
    lowered = tamper(cert, tmp_path / "low.npz", lambda a, m: a["gap_bound"].__imul__(0.1), rehash=True)
    assert not verify(lowered, X, y).ok


def test_cvxpy_problems_pickle_and_run_in_workers(tmp_path):
    ElasticNet = _example().ElasticNet
    X, y = regression(n=20, d=4, seed=3)
    problem = pickle.loads(pickle.dumps(ElasticNet(X, y, mix=0.3)))
    assert problem.mix == 0.3
    path = approxpath.approximate_path(problem, eps=1e-3, interval=(0.01, 1.0), strategy="grid", workers=2, chunks=2)
    assert not path.uncovered() and verify(path.save(tmp_path / "w.npz"), X, y).ok


# ---------------------------------------------------------------------------- bandwidth paths
def _smoother_optimum(X, y, t, lam):
    K = np.exp(-t * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
    beta = np.linalg.solve(K.T @ K + 2 * lam * np.eye(len(y)), K.T @ y)
    return 0.5 * np.sum((y - K @ beta) ** 2) + lam * beta @ beta


@pytest.mark.parametrize("cls,strategies", [(Smoother, STRATEGIES), (ResidualSmoother, ("interpolate",))],
                         ids=["t-in-objective", "t-in-constraints"])
def test_bandwidth_problems_get_sampled_pieces_that_hold_at_their_points(cls, strategies, tmp_path):
    X, y = make_sinc(n=20, seed=2)
    problem = cls(X, y, lam=0.1)
    assert not problem.bound.interval_bound
    for strategy in strategies:
        path = approxpath.approximate_path(problem, eps=0.05, interval=(0.5, 8.0), strategy=strategy)
        assert {p.kind for p in path.pieces} == {"sampled"} and path.max_gap_bound <= 0.05
        for piece in path.pieces:
            for x, _ in claimed_on("sampled", piece.lo, piece.hi):
                beta = problem.primal_at(piece.primal, x).beta
                K = np.exp(-x * ((X[:, None, :] - X[None, :, :]) ** 2).sum(-1))
                f = 0.5 * np.sum((y - K @ beta) ** 2) + 0.1 * beta @ beta
                sub = f - _smoother_optimum(X, y, x, 0.1)
                assert -1e-7 <= sub <= piece.gap_bound + 1e-7, (x, sub)
        report = verify(path.save(tmp_path / f"{strategy}.npz"), X, y)
        assert report.ok and report.sampled == len(path.pieces), str(report)
    if cls is ResidualSmoother:  # the primal is stored at each sampled point (its constraint moves)
        piece = path.pieces[0]
        assert piece.primal.r.shape == piece.primal.beta.shape == (5, len(y))
        assert list(piece.primal.at) == [x for x, _ in claimed_on("sampled", piece.lo, piece.hi)]


def test_declarations_with_unnamed_variables_or_wrong_senses_are_refused():
    class Unnamed(approxpath.CvxpyProblem):
        name, variables, dual_variables = "unnamed_cvxpy", ("x",), ("u",)

        @staticmethod
        def declare(X, y, t):
            x, u = cp.Variable(2), cp.Variable(2, name="u")
            return cp.Problem(cp.Minimize(cp.sum_squares(x) + t)), cp.Problem(cp.Maximize(-cp.sum_squares(u)))

    with pytest.raises(approxpath.InputError, match="name each cp.Variable"):
        Unnamed(np.zeros((3, 1)), np.zeros(3))
    with pytest.raises(TypeError, match="distinct"):
        class Clash(approxpath.CvxpyProblem):
            name, variables, dual_variables = "clash_cvxpy", ("x",), ("x",)

            @staticmethod
            def declare(X, y, t):
                raise AssertionError


def _nonneg_lasso(primal_penalty, dual_constraint):
    """``declare`` of a nonnegative lasso over lam, its primal penalty and its dual constraint
    given as functions of ``(w, lam)`` and ``(X'a, lam)``."""
    def declare(X, y, lam):
        n, d = X.shape
        w, a = cp.Variable(d, name="w"), cp.Variable(n, name="a")
        primal = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(X @ w - y) + primal_penalty(w, lam)), [w >= 0])
        dual = cp.Problem(cp.Maximize(0.5 * float(y @ y) - 0.5 * cp.sum_squares(y - a)), [dual_constraint(X.T @ a, lam)])
        return primal, dual

    return staticmethod(declare)


@pytest.mark.parametrize("primal_penalty,dual_constraint,side,part", [
    (lambda w, lam: lam * cp.sum(cp.sqrt(w)), lambda z, lam: z <= lam, "primal", "objective"),
    (lambda w, lam: lam * cp.sum(w), lambda z, lam: cp.sum_squares(z) >= lam, "dual", "constraint 0"),
], ids=["concave-primal-objective", "convex-lower-bound-in-the-dual"])
def test_a_declaration_that_is_not_dcp_is_refused_naming_the_side(primal_penalty, dual_constraint, side, part):
    """A declaration CVXPY cannot solve (not DCP) was found at the first solve, as a SolverError
    wrapping a DCPError that printed whole matrices; it is refused when the declaration is built."""
    cls = type("NotConvex", (approxpath.CvxpyProblem,), dict(
        name="not_convex_cvxpy", parameters=("lam",), variables=("w",), dual_variables=("a",), carried=("w", "a"),
        declare=_nonneg_lasso(primal_penalty, dual_constraint)))
    X, y = regression(n=10, d=3)
    with pytest.raises(approxpath.InputError) as err:
        cls(X, y)
    message = str(err.value)
    assert message.startswith(f"not_convex_cvxpy: the declared {side} breaks CVXPY's DCP rules ({part})")
    assert "\n" not in message


def test_a_declaration_that_is_dcp_but_not_dpp_is_accepted():
    """Not DPP (a product of parameters) only costs a compilation per solve: still accepted."""
    cls = type("NotDPP", (approxpath.CvxpyProblem,), dict(
        name="not_dpp_cvxpy", parameters=("lam",), variables=("w",), dual_variables=("a",), carried=("w", "a"),
        declare=_nonneg_lasso(lambda w, lam: (lam * lam / lam) * cp.sum(w), lambda z, lam: z <= lam)))
    X, y = regression(n=10, d=3)
    primal, dual = cls(X, y).solve(0.5)
    assert np.all(primal.w >= 0)


@pytest.mark.parametrize("options,match", [
    (dict(scale=Option("positive", default=1.0)), r"declare\(X, y, lam, s\) does not take the options of OPTIONS "
                                                  r"\(scale\) by name: missing a required argument: 's'"),
    (dict(s=Option("positive", default=1.0), mix=Option("between", default=0.5, bounds=(0.0, 1.0))),
     r"\(s, mix\) by name: got an unexpected keyword argument 'mix'"),
], ids=["renamed", "extra"])
def test_options_that_declare_does_not_take_are_refused_when_the_class_is_defined(options, match):
    """OPTIONS naming what declare() does not take failed with Python's TypeError at the first solve."""
    with pytest.raises(approxpath.InputError, match=match):
        class WrongOption(approxpath.CvxpyProblem):
            name, parameters = "wrong_option_cvxpy", ("lam",)
            variables, dual_variables = ("w",), ("a",)
            OPTIONS = options

            @staticmethod
            def declare(X, y, lam, s):
                raise AssertionError  # never called


def test_a_renamed_subclass_of_a_declared_problem_gets_a_bound_of_its_name(monkeypatch):
    """The registry refuses a Problem whose Bound bears another name: a subclass that renames a
    declared problem gets its own Bound (and pair types), the parent keeps its own."""
    from approxpath import registry

    class Renamed(Lasso):
        name = "renamed_lasso_cvxpy"

    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    assert registry.register(Renamed) is Renamed and Renamed.Bound.name == "renamed_lasso_cvxpy"
    assert Lasso.Bound.name == "lasso_cvxpy" and Renamed.Primal is not Lasso.Primal
    primal, dual = Renamed(*regression(n=10, d=3)).solve(0.5)
    assert isinstance(primal, Renamed.Primal) and isinstance(dual, Renamed.Dual)


def _own_lam(w, lam):
    return cp.Parameter(pos=True, value=1.0) * cp.sum(w)  # not the path's lam


@pytest.mark.parametrize("primal_penalty,dual_constraint,ignored", [
    (_own_lam, lambda z, lam: z <= cp.Parameter(pos=True, value=1.0), "primal and dual do not"),
    (lambda w, lam: lam * cp.sum(w), lambda z, lam: z <= 1.0, "dual does not"),
], ids=["both", "dual"])
def test_a_declaration_that_ignores_its_parameter_is_refused(primal_penalty, dual_constraint, ignored):
    """A declaration of its own cp.Parameter made a path whose claim did not depend on lam: the
    battery passed and verify said OK although the true gap at lam = 7.4 was 1.23 (eps 0.01)."""
    cls = type("Ignores", (approxpath.CvxpyProblem,), dict(
        name="ignores_cvxpy", parameters=("lam",), variables=("w",), dual_variables=("a",), carried=("w", "a"),
        declare=_nonneg_lasso(primal_penalty, dual_constraint)))
    X, y = regression(n=10, d=3)
    with pytest.raises(approxpath.InputError, match=f"must use the parameter t it is given \\('lam'\\) in both "
                                                    f"problems; the declared {ignored}"):
        cls(X, y)


def test_a_path_whose_primal_constraint_moves_saves_kept_and_restored_pieces_alike(tmp_path, monkeypatch):
    """With lam in a primal constraint, a restored piece stores a copy per sampled point and a
    piece kept as it is (an exact solve's pair) one point: Path.save failed on the mix (numpy's
    'all input arrays must have the same shape').  Now the kept point is stored as equal copies."""
    def declare(X, y, lam):
        n, d = X.shape
        w, a, mu = cp.Variable(d, name="w"), cp.Variable(n, name="a"), cp.Variable(nonneg=True, name="mu")
        primal = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(X @ w - y)), [w >= 0, cp.sum(w) <= lam])
        dual = cp.Problem(cp.Maximize(0.5 * float(y @ y) - 0.5 * cp.sum_squares(y - a) - mu * lam), [X.T @ a <= mu])
        return primal, dual

    cls = type("Budget", (approxpath.CvxpyProblem,), dict(
        name="budget_cvxpy", parameters=("lam",), variables=("w",), dual_variables=("a", "mu"), carried=("w", "a"),
        declare=staticmethod(declare)))
    rng = np.random.default_rng(1)
    X = rng.standard_normal((20, 4))
    y = X @ np.array([1.0, 0.0, 0.5, 0.0]) + 0.1 * rng.standard_normal(20)
    path = approxpath.approximate_path(cls(X, y), eps=0.05, interval=(0.05, 5.0))
    kept = [p for p in path.pieces if p.primal.at is None]
    assert kept and len(kept) < len(path.pieces)  # both kinds of piece
    file = path.save(tmp_path / "budget.npz")
    from approxpath import registry

    monkeypatch.setattr(registry, "_REGISTRY", dict(registry._REGISTRY))
    registry.register(cls)
    report = verify(file)
    assert report.ok and report.sampled == len(path.pieces), str(report)
    stored = read_certificate(file)[0]["primal_w"]
    i = path.pieces.index(kept[0])
    assert np.array_equal(stored[i, 0], np.stack([kept[0].primal.w] * stored.shape[2]))


def test_one_large_entry_does_not_excuse_the_others_violation():
    """The feasibility tolerance was 1e-8 times the largest entry of a constraint's sides: with one
    feature weighted 1e8, a dual violating every other entry of |X'u| <= lam w by 100 % passed
    ``errors`` (and a primal 14.6 above the optimum read a gap of 0.001); honest runs stopped with
    "the declaration of the dual is wrong" (the kept dual's gap came out negative)."""
    weights = np.array([1e8, 1.0, 1.0, 1.0])

    class WeightedLasso(approxpath.CvxpyProblem):
        name, parameters = "weighted_lasso_cvxpy", ("lam",)
        variables, dual_variables, carried = ("beta",), ("u",), ("beta", "u")

        @staticmethod
        def declare(X, y, lam):
            beta, u = cp.Variable(X.shape[1], name="beta"), cp.Variable(len(y), name="u")
            primal = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(y - X @ beta) + lam * (weights @ cp.abs(beta))))
            dual = cp.Problem(cp.Maximize(y @ u - 0.5 * cp.sum_squares(u)), [cp.abs(X.T @ u) <= lam * weights])
            return primal, dual

    X, y = regression(n=20, d=4, seed=3)
    problem, lam = WeightedLasso(X, y), 1.0
    primal, dual = problem.Primal(beta=np.zeros(4)), problem.Dual(u=np.zeros(20))  # (feasible: no solver needed)
    assert problem.bound.errors(primal, dual, lam, lam) == []
    ratio = np.abs(X.T @ y)[1:] / (lam * weights[1:])
    assert ratio.max() > 2  # (u = y: the loss's maximizer, far outside the constraint)
    twice = problem.Dual(u=y * 2.0 / ratio.max())  # |X'u|_j up to 2 lam w_j on the entries of weight 1
    assert np.abs(X.T @ twice.u)[0] < lam * weights[0]
    errors = problem.bound.errors(primal, twice, lam, lam)
    assert errors and errors[0].startswith("dual infeasible at 1: a constraint is violated by"), errors


def test_an_exact_solve_that_is_not_optimal_is_said_so_with_eps_too_small():
    """A dual declared valid but not tight (its excess term doubled) left exact solves with gaps
    far from 0, and "eps is too small" sent the user after eps alone (0.01, 0.0176, 0.0308, ...)."""
    from approxpath.errors import EpsilonTooSmallError

    class LooseNet(_example().ElasticNet):
        name = "loose_net_cvxpy"

        @staticmethod
        def declare(X, y, lam, mix):
            primal, dual = _example().ElasticNet.declare(X, y, lam, mix)
            u = dual.variables()[0]
            n = len(y)
            excess = cp.sum_squares(cp.pos(cp.abs(X.T @ u) - lam * mix)) / (lam * (1 - mix))  # (twice the tight term)
            return primal, cp.Problem(cp.Maximize(y @ u - n / 2 * cp.sum_squares(u) - excess))

    X, y = regression(n=20, d=4, seed=3)
    with pytest.raises(EpsilonTooSmallError, match="not optimal: its gap is above 1e-07 of the objective, as a "
                                                   "solver stopping short, a dual that is not the problem's tight"):
        approxpath.approximate_path(LooseNet(X, y, mix=0.5), eps=1e-4, interval=(0.05, 1.0))


@pytest.mark.infeasible_pairs
def test_a_restoration_that_returns_infeasible_pairs_is_named():
    """A plug-in's restore() returning w - 1e-3 (infeasible) was told "errors() accepts a pair that
    is not feasible" (its errors() refused it) or "eps is too small" (the gap of an infeasible pair)."""
    from approxpath.driver.run import WeakDualityError
    from approxpath.testing import ToyProjection
    from approxpath.testing.toy import ToyPrimal

    class BadRestore(ToyProjection):
        def restore(self, primal, dual, lo, hi=None):
            p, d = super().restore(primal, dual, lo, hi)
            return ToyPrimal(x=p.x - 0.5), d

    (problem, interval, eps), = ToyProjection.examples()
    with pytest.raises(WeakDualityError, match=r"< 0 for a pair its Bound's errors\(\) refuses \(x has a negative "
                                               r"entry\): its restore\(\) returns pairs that are not feasible"):
        approxpath.approximate_path(BadRestore(problem.X, problem.y), eps=eps, interval=interval)


def test_an_entry_near_zero_is_held_to_its_terms_not_to_its_value():
    """Per entry, X'u <= v with both sides near 0 was held to 1e-8 absolute, while a solver is
    feasible to its tolerance relative to the terms X_ij u_i that cancel there (features of
    scale 4e3): every exact solve of this honest non-negative ridge failed.  Reduced to the
    arithmetic here (a solver's points differ between releases)."""

    class NonNegativeRidge(approxpath.CvxpyProblem):
        name, parameters = "nonnegative_ridge_cvxpy", ("lam",)
        variables, dual_variables, carried = ("beta",), ("u", "v"), ("beta", "u", "v")

        @staticmethod
        def declare(X, y, lam):
            beta = cp.Variable(X.shape[1], name="beta")
            u, v = cp.Variable(len(y), name="u"), cp.Variable(X.shape[1], name="v")
            primal = cp.Problem(cp.Minimize(0.5 * cp.sum_squares(y - X @ beta) + lam / 2 * cp.sum_squares(beta)),
                                [beta >= 0])
            dual = cp.Problem(cp.Maximize(y @ u - 0.5 * cp.sum_squares(u) - cp.sum_squares(v) / (2 * lam)),
                              [X.T @ u <= v, v >= 0])
            return primal, dual

    rng = np.random.default_rng(0)
    X = rng.standard_normal((40, 10)) * 4.33e3
    y = rng.standard_normal(40) * 4.33e3
    problem = NonNegativeRidge(X, y)
    # a dual as a solver leaves it: X'u <= v violated by 1e-6 where both sides are ~0 and the
    # terms X_i0 u_i that cancel there are ~1e5 (a relative error of 1e-11 of them)
    u = rng.standard_normal(40)
    u -= X[:, 0] * (X[:, 0] @ u - 1e-6) / (X[:, 0] @ X[:, 0])
    v = np.maximum(X.T @ u, 0.0) + 1.0
    v[0] = 0.0
    assert 1e-7 < (X.T @ u)[0] < 1e-5 and np.abs(X[:, 0]) @ np.abs(u) > 1e4
    assert problem.bound.errors(problem.Primal(beta=np.zeros(10)), problem.Dual(u=u, v=v), 1.0, 1.0) == []
    v[0] = -1e-2  # (v >= 0 violated by 1e-2: its terms are its value, 1e-2, so it is held to ~1e-8)
    assert problem.bound.errors(problem.Primal(beta=np.zeros(10)), problem.Dual(u=u, v=v), 1.0, 1.0)


def test_select_on_a_declared_problem_without_predict_says_so():
    """It raised AttributeError ('criteria'; with a criterion given, 'sweep')."""
    ElasticNet = _example().ElasticNet
    X, y = regression()
    for criterion in (None, "mse"):
        with pytest.raises(approxpath.InputError, match="elastic_net_cvxpy has no predict\\(\\): a validation loss "
                                                        "needs the model's predictions"):
            approxpath.select(ElasticNet(X, y, mix=0.5), criterion, cv=3, eps=1e-3, interval=(1e-2, 1.0))
