"""Friedman #1 clean, path by path, against the paper's Figure 3 (``feature_selection.py --anatomy``).

For every trial and C = kappa ||y - ybar||^2 of ``--anatomy``: where all five relevant features
are active and where the first irrelevant one joins, the turns of the path in D, how the
relevant weights change on the first way back in D, which irrelevant features joined and which
left, the set of D on which exactly features 1-5 are active, the set on which the irrelevant
features carry less than 1 % of D (what a plot of beta against D shows as zero), and the
validation-selected point's test MSE.

The independent check of what a correct path can do: a point of the ten-feature path with
exactly features 1-5 active is a stationary point of the five-feature problem that no irrelevant
feature's gradient beats.  So the path of features 1-5 *alone* is computed and each of its points
certified as a point of the full problem (``crosscheck_feature_path``: inner gap and KKT
residuals, now with the irrelevant features' maximality).  The D-set where those points pass
should be the D-set where the ten-feature path has exactly 1-5 active (up to the points' spacing,
and up to five-feature stationary points off the five-feature path); where they fail, an
irrelevant feature has the larger gradient and joins, whatever the continuation does.
"""

from __future__ import annotations

import numpy as np

from approxpath.exact.feature_path import crosscheck_feature_path, feature_path, normalize_columns, plot_feature_path

from feature_selection import MAX_STEPS, N_TEST, N_TRAIN, N_VAL, friedman, intervals, stretch

RELEVANT = 5
# "Carry less than 1 % of D": the irrelevant features' total weight below which a plot of beta
# against D (the paper's Figure 3) cannot tell them from zero.
VISIBLE = 0.01
# A stretch is "long" when it covers at least this share of the path's D range.
LONG = 0.1


def relevant_only_kkt(X, y, C):
    """D-intervals where the path of features 1-5 alone has all five active and is certified
    as a path of the full problem (every point's checks pass with X's other columns)."""
    p5 = feature_path(X[:, :RELEVANT], y, C=C, max_steps=MAX_STEPS, certify=False)
    beta = np.hstack([p5.beta, np.zeros((len(p5), X.shape[1] - RELEVANT))])
    rep = crosscheck_feature_path(X, y, p5.D, beta, p5.alpha, p5.alpha0, C=C)
    ok = np.ones(len(p5), dtype=bool)
    ok[list(rep.flagged)] = False
    return intervals(p5.D, ok & p5.active.all(axis=1))[0]


def anatomy(p, Xva, yva, Xte, yte):
    """One path's row (a dict)."""
    rel = p.active[:, :RELEVANT].all(axis=1)
    exact, exact_len, stay = stretch(p, RELEVANT)
    visible, visible_len = intervals(p.D, rel & (p.beta[:, RELEVANT:].sum(axis=1) < VISIBLE * p.D))
    m = p.mse(Xva, yva)
    m[list(p.report.flagged)] = np.inf  # select among certified points only
    i = int(np.argmin(m))
    jac = p.jacobian_calls_at  # the share at D <= 10 compares with the paper's "around 60 %"
    first_irr = [e.D for e in p.events if e.kind == "joined" and e.feature >= RELEVANT]
    back = ""
    if len(p.turns) >= 2:  # the relevant weights' changes on the first way back in D
        change = p.beta[p.turns[1], :RELEVANT] - p.beta[p.turns[0], :RELEVANT]
        back = " ".join(f"{j + 1}{'↑' if c > 0 else '↓'}" for j, c in enumerate(change))
    return dict(D_max=float(p.D.max()), all_five=float(p.D[np.argmax(rel)]) if rel.any() else np.nan,
                first_irr=first_irr[0] if first_irr else np.nan, back=back,
                turns=[float(p.D[t]) for t in p.turns],
                joined=sorted({e.feature + 1 for e in p.events if e.kind == "joined" and e.feature >= RELEVANT}),
                left=sorted({e.feature + 1 for e in p.events if e.kind == "left" and e.feature >= RELEVANT}),
                exact=exact, exact_share=exact_len / float(p.D.max()), visible=visible,
                visible_share=visible_len / float(p.D.max()),
                stay=stay,
                mse=float(np.mean((p.predict(Xte, i) - yte) ** 2)), D_sel=float(p.D[i]), n_sel=len(p.selected(i)),
                points=len(p), jac=int(jac[-1]), jac10=float(np.sum(np.diff(jac)[p.D[1:] <= 10.0]) / max(jac[-1], 1)),
                wall=p.wall_s, ok=p.report.ok)


def disagreement(a, b):
    """The length of the D-set in exactly one of two unions of intervals ``a``, ``b``."""
    cuts = sorted({x for lo, hi in a + b for x in (lo, hi)})
    total = 0.0
    for lo, hi in zip(cuts, cuts[1:]):
        mid = 0.5 * (lo + hi)
        if any(u <= mid <= v for u, v in a) != any(u <= mid <= v for u, v in b):
            total += hi - lo
    return total


def _figure(p, trial, out):
    """The paper's Figure 3 for one path: (a) beta against D, (b) the part up to a little past
    the first turn in D magnified, (c) the Jacobian calls."""
    detail = 1.25 * float(p.D[p.turns[0]]) if p.turns else None  # a quarter past the turn: it shows whole
    kappa = p.C / float(np.sum((p.y - p.y.mean()) ** 2))
    fig = plot_feature_path(p, relevant=range(RELEVANT), detail=detail,
                            title=f"Friedman #1 clean, n = {N_TRAIN}, trial {trial}, C = {kappa:g} ||Hy||^2")
    fig.savefig(out, dpi=130)
    print(f"figure of trial {trial}, C = {kappa:g} ||Hy||^2 written to {out}")


def _iv(ivs):
    return " ∪ ".join(f"[{lo:.3g}, {hi:.3g}]" for lo, hi in ivs) or "none"


def run_anatomy(args):
    """Print the per-path table and the summary per C."""
    print("\n| C / ‖Hy‖² | trial | D range | 1-5 all active from D | first irrelevant joins at D | turns in D | "
          "β1-β5 on the first way back | irrelevant joined / left | "
          "exactly 1-5 active at D ∈ (share of range) | irrelevant < 1 % of D at D ∈ (share) | "
          "1-5 alone stationary for the full problem at D ∈ (the two sets differ on) | "
          "an irrelevant stays active from D | "
          "selected: test MSE, D, active | points, Jacobian calls (share at D ≤ 10), s |")
    print("|---" * 14 + "|")
    rows = {kappa: [] for kappa in args.anatomy}
    for trial in range(args.anatomy_trials):
        rng = np.random.default_rng([args.seed, 1, 0, trial])  # the trials of Friedman #1 clean
        X, y, _ = friedman(1, N_TRAIN + N_VAL + N_TEST, 0.0, rng)
        tr, va, te = slice(0, N_TRAIN), slice(N_TRAIN, N_TRAIN + N_VAL), slice(N_TRAIN + N_VAL, None)
        Xtr = normalize_columns(X[tr])
        Xva, Xte = normalize_columns(X[va], X[tr]), normalize_columns(X[te], X[tr])
        yc2 = float(np.sum((y[tr] - y[tr].mean()) ** 2))
        for kappa in args.anatomy:
            p = feature_path(Xtr, y[tr], C=kappa * yc2, max_steps=MAX_STEPS)
            r = anatomy(p, Xva, y[va], Xte, y[te])
            r["kkt5"] = relevant_only_kkt(Xtr, y[tr], kappa * yc2)
            r["differ"] = disagreement(r["exact"], r["kkt5"]) / r["D_max"]
            rows[kappa].append(r)
            if args.figure and (trial, kappa) == (args.figure_trial, args.figure_kappa):
                _figure(p, trial, args.figure)
            turns = ", ".join(f"{t:.3g}" for t in r["turns"]) or "–"
            print(f"| {kappa:g} | {trial} | [0, {r['D_max']:.3g}] | {r['all_five']:.3g} | {r['first_irr']:.3g} | "
                  f"{turns} | {r['back'] or '–'} | {r['joined'] or '–'} / {r['left'] or '–'} | "
                  f"{_iv(r['exact'])} ({r['exact_share']:.0%}) | {_iv(r['visible'])} ({r['visible_share']:.0%}) | "
                  f"{_iv(r['kkt5'])} ({r['differ']:.1%}) | {r['stay']:.3g} | "
                  f"{r['mse']:.3g}, {r['D_sel']:.3g}, {r['n_sel']} | "
                  f"{r['points']}, {r['jac']} ({r['jac10']:.0%}), {r['wall']:.1f}{'' if r['ok'] else ' FLAGGED'} |",
                  flush=True)
    print(f"\n| C / ‖Hy‖² | paths | exactly 1-5 active on ≥ {LONG:.0%} of the D range | share: median (max) | "
          f"irrelevant < 1 % of D on ≥ {LONG:.0%} | paths where 1-5 alone are stationary with all five active | "
          "the two sets differ on, at most | D range, mean | Jacobian calls at D ≤ 10, mean share | "
          "selected test MSE, mean (paper 0.02) |")
    print("|---" * 10 + "|")
    for kappa, rs in rows.items():
        share = np.array([r["exact_share"] for r in rs])
        print(f"| {kappa:g} | {len(rs)} | {int(np.sum(share >= LONG))} | {np.median(share):.0%} ({share.max():.0%}) | "
              f"{sum(r['visible_share'] >= LONG for r in rs)} | {sum(bool(r['kkt5']) for r in rs)} | "
              f"{max(r['differ'] for r in rs):.1%} | "
              f"{np.mean([r['D_max'] for r in rs]):.3g} | {np.mean([r['jac10'] for r in rs]):.0%} | "
              f"{np.mean([r['mse'] for r in rs]):.3g} |")


if __name__ == "__main__":  # (a module of feature_selection.py: it printed nothing and exited 0)
    raise SystemExit("feature_anatomy.py is run through feature_selection.py: "
                     "python benchmarks/feature_selection.py --anatomy KAPPA ...")
