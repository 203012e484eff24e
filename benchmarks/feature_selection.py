"""The experiments of Li & Sminchisescu (2010), section 4, with the certified L1KR feature path.

Friedman #1, #2, #3 (scikit-learn's ``make_friedman1/2/3``: Friedman's input ranges, #1 with
``5 x5``) with 5 added irrelevant uniform features; 200 training points, 100 test points, clean
and with Gaussian noise of variance var(f)/10 (SNR 10) on the responses (training, validation and
test responses alike).  The point of the path is chosen by the MSE on 100 further validation
points of the same generator, over the path of each C in a small grid (C = kappa ||y - ybar||^2);
the test MSE of that point is reported next to kernel ridge regression with an isotropic Gaussian
kernel whose width and ridge are chosen on the same validation points (the paper's KRR).  Inputs
are scaled as in the paper (columns centred, unit norm; from the training rows).

With ``--poly M`` the L1KR path of the normalized ARD-polynomial kernel of degree M runs on the
same trials (columns centred and divided by their largest |x|: with unit-norm columns every
:math:`|x| \\approx n^{-1/2}` and that kernel is nearly linear).  ``--anatomy`` (Friedman #1
clean) takes the paths apart for several C against the paper's Figure 3 (``feature_anatomy.py``).

Diabetes (``sklearn.datasets.load_diabetes``, n = 442, d = 10; the paper's Table 2): K-fold
cross-validation; in each fold the path runs on 80 % of the training part, the point (and C) are
chosen on the other 20 %, and the test fold's MSE is reported.

Prints markdown tables.  No data files needed.

    python benchmarks/feature_selection.py [--trials 10] [--sets 1 2 3] [--settings clean noisy]
        [--kappa 0.5 2 8] [--diabetes-folds 10] [--poly 5] [--anatomy 0.25 0.5 0.7 1 2 8]
        [--anatomy-trials 10] [--figure PNG --figure-trial 4 --figure-kappa 0.7] [--segments 1e-3]
        [--quick]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from approxpath.errors import InputError
from approxpath.exact.feature_path import certify_segments, feature_path, normalize_columns

try:
    from _common import machine
except ImportError:  # run from elsewhere
    import platform

    def machine():
        return platform.platform()

# Table 1 of the paper: (L1KR Gauss, L1KR Poly, HKL, KRR, LASSO) test MSE, 30 trials.
PAPER_TABLE1 = {
    (1, "clean"): (0.02, 0.10, 0.43, 3.74, 6.93), (1, "noisy"): (3.57, 3.38, 5.50, 7.37, 9.65),
    (2, "clean"): (0.02, 0.00, 0.05, 7.10, 16.27), (2, "noisy"): (10.91, 11.05, 13.70, 19.49, 27.54),
    (3, "clean"): (0.94, 1.13, 1.72, 2.96, 2.92), (3, "noisy"): (2.57, 2.43, 4.79, 4.55, 3.78),
}
# Table 2, Diabetes: L1KR Gauss (features), L1KR Poly, HKL, KRR, LASSO, OLS.
PAPER_DIABETES = (2981.61, 8, 2996.67, 2923.80, 2984.26, 3007.10, 3007.10)
RELEVANT = {1: 5, 2: 4, 3: 4}
N_TRAIN, N_VAL, N_TEST, N_IRRELEVANT = 200, 100, 100, 5
# Path limits: Friedman paths end (eta -> 0 or lambda eta -> g_tol) within ~1000 steps at these C.
MAX_STEPS = 3000


def friedman(k, n, noise, rng):
    """Friedman #k with N_IRRELEVANT uniform features appended: (X, y, f) with y = f + noise."""
    from sklearn.datasets import make_friedman1, make_friedman2, make_friedman3

    seed = int(rng.integers(2**31))
    if k == 1:
        X, f = make_friedman1(n_samples=n, n_features=5, noise=0.0, random_state=seed)
    else:
        X, f = (make_friedman2 if k == 2 else make_friedman3)(n_samples=n, noise=0.0, random_state=seed)
    X = np.hstack([X, rng.uniform(size=(n, N_IRRELEVANT))])
    return X, f + noise * rng.standard_normal(n), f


def noise_sd(k, rng):
    """Noise standard deviation for SNR 10 (variance of f over 10), f's variance from 20000 draws."""
    _, _, f = friedman(k, 20000, 0.0, rng)
    return float(np.sqrt(np.var(f) / 10.0))


def krr_baseline(Xtr, ytr, Xval, yval, Xte, yte):
    """Isotropic Gaussian kernel ridge regression with intercept; width t of exp(-t||x-z||^2)
    and ridge chosen on the validation set: test MSE."""
    from scipy.spatial.distance import cdist

    D = cdist(Xtr, Xtr, "sqeuclidean")
    Dv, Dt = cdist(Xval, Xtr, "sqeuclidean"), cdist(Xte, Xtr, "sqeuclidean")
    med = np.median(D[D > 0])
    best = (np.inf, None)
    mu = ytr.mean()
    for t in np.geomspace(0.01, 100.0, 25) / med:
        K = np.exp(-t * D)
        w, Q = np.linalg.eigh(K)
        c = Q.T @ (ytr - mu)
        for ridge in np.geomspace(1e-8, 10.0, 19):
            a = Q @ (c / (np.clip(w, 0, None) + ridge))
            mse = np.mean((np.exp(-t * Dv) @ a + mu - yval) ** 2)
            if mse < best[0]:
                best = (mse, (t, a))
    t, a = best[1]
    return float(np.mean((np.exp(-t * Dt) @ a + mu - yte) ** 2))


def select(Xtr, ytr, Xval, yval, kappas, kernel="ard-gaussian", degree=None):
    """Paths for every C = kappa ||y - ybar||^2; the certified (path, index) with the least
    validation MSE, and the statistics of all paths (``lam_ratio``: the largest lambda / max
    lambda among a path's flagged points, 0 if none)."""
    yc2 = float(np.sum((ytr - ytr.mean()) ** 2))
    best, stats = None, []
    for kappa in kappas:
        try:
            p = feature_path(Xtr, ytr, C=kappa * yc2, kernel=kernel, degree=degree, max_steps=MAX_STEPS)
        except InputError:  # (a wrong call, the same for every C: not a failure of one C)
            raise
        except Exception as exc:  # report and go on: one C failing must not hide the others
            stats.append(dict(kappa=kappa, error=str(exc)))
            continue
        m = p.mse(Xval, yval)
        flagged = list(p.report.flagged)
        m[flagged] = np.inf  # a point is selected only if it is certified
        i = int(np.argmin(m))
        lam_ratio = float(np.max(p.lam[flagged]) / np.max(p.lam)) if flagged else 0.0
        stats.append(dict(kappa=kappa, points=len(p), jac=p.jacobian_calls, wall=p.wall_s, ok=p.report.ok,
                          gap=p.report.max_rel_gap, kkt=p.report.max_kkt, stop=p.stop_reason, path=p,
                          flagged=len(flagged), lam_ratio=lam_ratio))
        if best is None or m[i] < best[0]:
            best = (m[i], p, i)
    if best is None:
        raise SystemExit("no C gave a path: " + "; ".join(f"kappa {st['kappa']:g}: {st['error']}" for st in stats))
    return best, stats


def intervals(D, mask):
    """The set of D covered by the path's segments whose two ends satisfy ``mask``: merged
    intervals [(lo, hi), ...] and their total length."""
    both = np.flatnonzero(mask[1:] & mask[:-1])
    out = []
    for lo, hi in sorted((min(D[i], D[i + 1]), max(D[i], D[i + 1])) for i in both):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out, float(sum(hi - lo for lo, hi in out))


def stretch(p, relevant):
    """Where exactly the first ``relevant`` features are active: the D-set (intervals), its length,
    and the D from which an irrelevant feature stays active to the end (NaN: none does; the
    D-set lies before it)."""
    exact = p.active[:, :relevant].all(axis=1) & ~p.active[:, relevant:].any(axis=1)
    stays = [int(np.flatnonzero(~p.active[:, j])[-1]) + 1 if (~p.active[:, j]).any() else 0
             for j in range(relevant, p.active.shape[1]) if p.active[-1, j]]
    return (*intervals(p.D, exact), float(p.D[min(stays)]) if stays else float("nan"))


def run_friedman(args):
    rows = []
    for k in args.sets:
        sd = noise_sd(k, np.random.default_rng([args.seed, k]))
        for setting in args.settings:
            s = sd if setting == "noisy" else 0.0
            res = []
            for trial in range(args.trials):
                # one generator per (set, setting, trial): any subset of the runs reproduces
                rng = np.random.default_rng([args.seed, k, ("clean", "noisy").index(setting), trial])
                X, y, _ = friedman(k, N_TRAIN + N_VAL + N_TEST, s, rng)
                tr, va, te = slice(0, N_TRAIN), slice(N_TRAIN, N_TRAIN + N_VAL), slice(N_TRAIN + N_VAL, None)
                Xtr = normalize_columns(X[tr])
                Xva, Xte = normalize_columns(X[va], X[tr]), normalize_columns(X[te], X[tr])
                t0 = time.perf_counter()
                best, stats = select(Xtr, y[tr], Xva, y[va], args.kappa)
                wall = time.perf_counter() - t0
                _, p, i = best
                mse = float(np.mean((p.predict(Xte, i) - y[te]) ** 2))
                krr = krr_baseline(Xtr, y[tr], Xva, y[va], Xte, y[te])
                rel = RELEVANT[k]
                big = np.flatnonzero(p.beta[i] >= 0.01 * p.D[i])
                _, length, d_stay = stretch(p, rel)
                r = dict(k=k, setting=setting, trial=trial, mse=mse, krr=krr, var=float(np.var(y[te])),
                         C=p.C, kappa=p.C / float(np.sum((y[tr] - y[tr].mean()) ** 2)), D=float(p.D[i]),
                         active=p.selected(i), big=tuple(int(j) for j in big), stretch=length, d_stay=d_stay,
                         irr_share=float(p.beta[i, rel:].sum() / p.D[i]), wall=wall,
                         points=sum(st.get("points", 0) for st in stats), jac=sum(st.get("jac", 0) for st in stats),
                         ok=all(st.get("ok", False) for st in stats), flagged=sum(st.get("flagged", 0) for st in stats),
                         lam_ratio=max(st.get("lam_ratio", 0.0) for st in stats),
                         stops=[_ending(st.get("stop", "error")) for st in stats],
                         gap=max(st.get("gap", np.inf) for st in stats), kkt=max(st.get("kkt", np.inf) for st in stats),
                         errors=[st["error"] for st in stats if "error" in st])
                r.update(events=len(p.events) - 1, sel_points=len(p), sel_flagged=len(p.report.flagged), sel_jac=p.jacobian_calls, sel_s=p.wall_s,
                         **_segments(p, i, args.segments))
                if args.poly:
                    c, sc = X[tr].mean(axis=0), np.abs(X[tr] - X[tr].mean(axis=0)).max(axis=0)
                    Ptr, Pva, Pte = ((X[part] - c) / sc for part in (tr, va, te))
                    Pva, Pte = np.clip(Pva, -1.0, 1.0), np.clip(Pte, -1.0, 1.0)  # |x| <= 1 for the kernel
                    bp, pstats = select(Ptr, y[tr], Pva, y[va], args.kappa, "ard-polynomial", args.poly)
                    r.update(poly=float(np.mean((bp[1].predict(Pte, bp[2]) - y[te]) ** 2)),
                             poly_active=bp[1].selected(bp[2]),
                             poly_flagged=sum(st.get("flagged", 0) for st in pstats),
                             poly_lam_ratio=max(st.get("lam_ratio", 0.0) for st in pstats),
                             poly_points=sum(st.get("points", 0) for st in pstats))
                if args.verbose:
                    print(f"  #{k} {setting} trial {trial}: mse {mse:.4g} (KRR {krr:.4g}, poly {r.get('poly', '-')}), "
                          f"kappa {r['kappa']:g}, "
                          f"D {r['D']:.3g}, active {r['active']}, >=1% of D {r['big']}, stretch {length:.3g}, "
                          f"{wall:.1f} s {r['errors'] or ''}", flush=True)
                res.append(r)
            rows.append(res)
    return rows


def _segments(p, i, eps):
    """The inner paths between the points up to the selected one, certified to ``eps`` (0: not run)."""
    if not eps or i == 0:
        return {}
    rep = certify_segments(p, eps=eps, max_pieces=64, indices=range(i))
    return dict(seg_n=len(rep.segments), seg_ok=sum(c.certified for c in rep.segments), seg_max=rep.max_gap,
                seg_pieces=sum(c.pieces for c in rep.segments), seg_s=rep.wall_s)


def print_selected(rows, label=None):
    """Per trial: the selected path's events, Jacobian calls, seconds; its points certified; and the
    inner paths between its points up to the selected one (with ``--segments``)."""
    print("\n| data | trial | selected path: points, events, Jacobian calls, s | points certified | "
          "segments up to the selected point certified (eps), max gap bound / ||Hy||^2, pieces, s |")
    print("|---|---|---|---|---|")
    for res in rows:
        for r in res:
            name = label or f"#{r['k']} {r['setting']}"
            seg = (f"{r['seg_ok']} of {r['seg_n']}, {r['seg_max']:.2g}, {r['seg_pieces']}, {r['seg_s']:.1f}"
                   if "seg_n" in r else "not run")
            print(f"| {name} | {r.get('trial', r.get('fold'))} | {r['sel_points']}, {r['events']}, {r['sel_jac']}, "
                  f"{r['sel_s']:.1f} | {r['sel_points'] - r['sel_flagged']} of {r['sel_points']} | {seg} |")


def feature_counts(res, d):
    counts = np.zeros(d, dtype=int)
    for r in res:
        counts[list(r["active"])] += 1
    return counts


def print_friedman(rows):
    poly = "poly" in rows[0][0]
    print("\n| data | L1KR Gauss test MSE (paper) |" + (" L1KR Poly test MSE (paper) |" if poly else "") +
          " KRR test MSE (paper) | L1KR / KRR (paper) | test MSE / var(y) "
          "L1KR, KRR | selected C / ||Hy||^2 | features active at the selected point (of trials) | "
          "features with >= 1 % of D | irrelevant share of D | paths: points, Jacobian calls, s | how the paths "
          "ended | certificates |")
    print("|---" * (13 if poly else 12) + "|")
    for res in rows:
        k, setting = res[0]["k"], res[0]["setting"]
        paper = PAPER_TABLE1[(k, setting)]
        mse = np.array([r["mse"] for r in res])
        krr = np.array([r["krr"] for r in res])
        var = np.array([r["var"] for r in res])
        d = RELEVANT[k] + N_IRRELEVANT
        act = feature_counts(res, d)
        big = np.zeros(d, dtype=int)
        for r in res:
            big[list(r["big"])] += 1
        kap = sorted({round(r["kappa"], 3) for r in res})
        cert = ("all points pass" if all(r["ok"] for r in res) else
                f"{sum(r['flagged'] for r in res)} of {sum(r['points'] for r in res)} points flagged, all where "
                f"lambda <= {max(r['lam_ratio'] for r in res):.1g} max lambda")
        pcol = ""
        if poly:
            pm = np.array([r["poly"] for r in res])
            pcol = (f" {pm.mean():.3g} ± {pm.std():.2g} ({paper[1]}; {sum(r['poly_flagged'] for r in res)} of "
                    f"{sum(r['poly_points'] for r in res)} points flagged, where lambda <= "
                    f"{max(r['poly_lam_ratio'] for r in res):.1g} max lambda) |")
        print(f"| #{k} {setting} ({len(res)} trials) | {mse.mean():.3g} ± {mse.std():.2g} ({paper[0]}) |{pcol} "
              f"{krr.mean():.3g} ± {krr.std():.2g} ({paper[3]}) | {mse.mean() / krr.mean():.3f} "
              f"({paper[0] / paper[3]:.3f}) | {np.mean(mse / var):.2g}, {np.mean(krr / var):.2g} | {kap} | "
              f"{_counts(act)} | {_counts(big)} | {np.mean([r['irr_share'] for r in res]):.3f} | "
              f"{np.mean([r['points'] for r in res]):.0f}, {np.mean([r['jac'] for r in res]):.0f}, "
              f"{np.mean([r['wall'] for r in res]):.1f} | {_stops(res)} | "
              f"{cert}: gap <= {max(r['gap'] for r in res):.1g}, "
              f"KKT <= {max(r['kkt'] for r in res):.1g} |")


def _ending(reason):
    for word in ("stationary", "underflow", "max_steps", "d_max", "error"):
        if word in reason:
            return word
    return "other"


def _stops(res):
    """How the Gaussian paths of all trials ended: counts per first word of the stop reason."""
    words = [w for r in res for w in r["stops"]]
    return ", ".join(f"{w} {words.count(w)}" for w in sorted(set(words)))


def _counts(c):
    return " ".join(f"{j + 1}:{int(v)}" for j, v in enumerate(c))


def print_stretch(rows):
    """The done-when check of Friedman #1 clean: the relevant-only stretch on the selected paths."""
    for res in rows:
        if res[0]["k"] != 1 or res[0]["setting"] != "clean":
            continue
        print("\nFriedman #1 clean, selected paths: D-length of the stretch with exactly features 1-5 active before an "
              "irrelevant feature stays active:",
              ", ".join(f"{r['stretch']:.3g} (irrelevant stays from D = {r['d_stay']:.3g})" for r in res))


def run_diabetes(args):
    from sklearn.datasets import load_diabetes

    rng = np.random.default_rng([args.seed, 4])
    X, y = load_diabetes(return_X_y=True)
    n = y.size
    order = rng.permutation(n)
    folds = np.array_split(order, args.diabetes_folds)
    out = []
    for f, test in enumerate(folds):
        train = np.setdiff1d(order, test)
        train = rng.permutation(train)
        cut = int(0.8 * train.size)
        fit, val = train[:cut], train[cut:]
        Xf = normalize_columns(X[fit])
        t0 = time.perf_counter()
        best, stats = select(Xf, y[fit], normalize_columns(X[val], X[fit]), y[val], args.kappa)
        _, p, i = best
        mse = float(np.mean((p.predict(normalize_columns(X[test], X[fit]), i) - y[test]) ** 2))
        krr = krr_baseline(Xf, y[fit], normalize_columns(X[val], X[fit]), y[val], normalize_columns(X[test], X[fit]),
                           y[test])
        r = dict(fold=f, events=len(p.events) - 1, sel_points=len(p), sel_flagged=len(p.report.flagged),
                 sel_jac=p.jacobian_calls, sel_s=p.wall_s, **_segments(p, i, args.segments))
        r.update(mse=mse, krr=krr, active=p.selected(i), big=tuple(np.flatnonzero(p.beta[i] >= 0.01 * p.D[i])),
                 kappa=p.C / float(np.sum((y[fit] - y[fit].mean()) ** 2)), wall=time.perf_counter() - t0,
                 ok=all(st.get("ok", False) for st in stats), gap=max(st.get("gap", np.inf) for st in stats),
                 kkt=max(st.get("kkt", np.inf) for st in stats))
        if args.verbose:
            print(f"  diabetes fold {f}: mse {mse:.1f} (KRR {krr:.1f}), active {r['active']}, {r['wall']:.1f} s",
                  flush=True)
        out.append(r)
    mse = np.array([r["mse"] for r in out])
    krr = np.array([r["krr"] for r in out])
    act = feature_counts(out, X.shape[1])
    nact = np.mean([len(r["active"]) for r in out])
    print("\n| data | L1KR Gauss test MSE (paper) | mean active features (paper) | KRR (paper) | features active "
          "(of folds) | selected C / ||Hy||^2 | s per fold | certificates |")
    print("|---|---|---|---|---|---|---|---|")
    print(f"| Diabetes, {args.diabetes_folds}-fold | {mse.mean():.1f} ± {mse.std():.0f} ({PAPER_DIABETES[0]}) | "
          f"{nact:.1f} ({PAPER_DIABETES[1]}) | {krr.mean():.1f} ({PAPER_DIABETES[4]}) | {_counts(act)} | "
          f"{sorted({round(r['kappa'], 3) for r in out})} | {np.mean([r['wall'] for r in out]):.1f} | "
          f"{'all points pass' if all(r['ok'] for r in out) else 'FLAGGED'}: gap <= {max(r['gap'] for r in out):.1g}, "
          f"KKT <= {max(r['kkt'] for r in out):.1g} |")
    print_selected([out], label="Diabetes")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--trials", type=int, default=10, help="random trials per Friedman setting (paper: 30; 0: "
                        "Diabetes only)")
    parser.add_argument("--sets", type=int, nargs="*", default=[1, 2, 3], choices=[1, 2, 3])
    parser.add_argument("--settings", nargs="+", default=["clean", "noisy"], choices=["clean", "noisy"])
    parser.add_argument("--kappa", type=float, nargs="+", default=[0.5, 2.0, 8.0],
                        help="C = kappa ||y - ybar||^2 for each path; the validation set picks (C, point)")
    parser.add_argument("--diabetes-folds", type=int, default=10, help="0 skips Diabetes")
    parser.add_argument("--poly", type=int, default=0, help="also the ARD-polynomial path of this degree (0: no)")
    parser.add_argument("--anatomy", type=float, nargs="*", default=[],
                        help="Friedman #1 clean: take the paths apart for these C / ||Hy||^2 (feature_anatomy.py)")
    parser.add_argument("--anatomy-trials", type=int, default=5, help="trials of the anatomy")
    parser.add_argument("--figure", metavar="PNG", help="with --anatomy: draw one of its paths like the paper's "
                        "Figure 3 (--figure-trial, --figure-kappa)")
    parser.add_argument("--figure-trial", type=int, default=4)
    parser.add_argument("--figure-kappa", type=float, default=0.7)
    parser.add_argument("--segments", type=float, default=0.0, metavar="EPS",
                        help="certify the inner paths between the points up to the selected one to EPS ||Hy||^2 "
                             "(0: not run)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--quick", action="store_true", help="2 trials of Friedman #1 only, no Diabetes")
    parser.add_argument("--verbose", action="store_true")
    args = parser.parse_args(argv)
    if args.quick:
        args.trials, args.sets, args.diabetes_folds = 2, [1], 0
    print(f"machine: {machine()}; command: python benchmarks/feature_selection.py "
          f"{' '.join(argv) if argv is not None else ''}".rstrip())
    t0 = time.perf_counter()
    rows = run_friedman(args) if args.trials > 0 and args.sets else []
    if rows:
        print_friedman(rows)
        print_stretch(rows)
        print_selected(rows)
    if args.anatomy:
        from feature_anatomy import run_anatomy

        run_anatomy(args)
    if args.diabetes_folds:
        run_diabetes(args)
    print(f"\ntotal {time.perf_counter() - t0:.0f} s")
    return rows


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
