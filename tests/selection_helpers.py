"""Shared by the selection tests: kernels and the exact SVM optimum's decision values from an
independent tight CVXPY solve (written here, not the problem's own declarations)."""

import cvxpy as cp
import numpy as np

from reference_helpers import tight_solve


def kernel(A, B, t, family="gaussian"):
    diff = A[:, None, :] - B[None, :, :]
    return np.exp(-t * (np.abs(diff).sum(-1) if family == "laplacian" else (diff**2).sum(-1)))


def svm_predict(X, y, t, C, Xv, midpoint=True, family="gaussian"):
    """Decision values of the exact SVM optimum; its bias the middle of the optimal biases (the
    minimizers of the hinge sum given the optimal w: between the P-th and (P+1)-th smallest
    y_i - (K w)_i, found by sorting), or CVXPY's own bias."""
    K = kernel(X, X, t, family)
    n = len(y)
    w, b, xi = cp.Variable(n), cp.Variable(), cp.Variable(n)
    tight_solve(cp.Problem(cp.Minimize(0.5 * cp.quad_form(w, cp.psd_wrap(K)) + C * cp.sum(xi)),
                     [cp.multiply(y, K @ w + b) >= 1 - xi, xi >= 0]))
    kinks = np.sort(y - K @ w.value)
    p = int(np.sum(y > 0))
    bias = 0.5 * (kinks[p - 1] + kinks[p]) if midpoint else b.value
    return kernel(Xv, X, t, family) @ w.value + bias


def klasso_predict(X, y, t, lam, Xv):
    """Predictions of the exact kLASSO optimum (a tight CVXPY solve) at the rows of ``Xv``."""
    K = kernel(X, X, t)
    beta, beta0 = cp.Variable(len(y)), cp.Variable()
    tight_solve(cp.Problem(cp.Minimize(0.5 * cp.sum_squares(y - K @ beta - beta0) + lam * cp.norm1(beta))))
    return kernel(Xv, X, t) @ beta.value + beta0.value


def svm_cv_error(X, y, folds, t, C):
    """Pooled k-fold 0-1 error of the exact SVM optima (class +1 where the decision value is > 0),
    and the smallest |decision value| of a held-out point (how close a point is to undecidable)."""
    wrong, closest = 0, np.inf
    for tr, va in folds:
        f = svm_predict(X[tr], y[tr], t, C, X[va])
        wrong += int(np.sum(np.where(f > 0, 1.0, -1.0) != y[va]))
        closest = min(closest, float(np.min(np.abs(f))))
    return wrong / len(y), closest


def cells_hold_cv_error(s, X, y, folds, points, fixed):
    """Check a selection over the SVM's bandwidth (at C = ``fixed``) or over C (at bandwidth
    ``fixed``) against :func:`svm_cv_error`: at each of ``points`` the exact k-fold 0-1 error lies
    in its cell's enclosure and not below the chosen value by more than delta (the chosen point's:
    in its enclosure).  A point with a held-out decision value within 1e-6 of 0 is skipped (the
    reference's accuracy cannot classify it).  Returns the number of points checked."""
    checked = 0
    for p in points:
        t, C = (p, fixed) if s.parameter == "bandwidth" else (fixed, p)
        value, closest = svm_cv_error(X, y, folds, float(t), C)
        if closest < 1e-6:
            continue
        i = min(int(np.searchsorted(s.edges, p, side="right")) - 1, s.lo.size - 1)
        assert s.lo[i] - 1e-15 <= value <= s.hi[i] + 1e-15, p
        assert value + 1e-15 >= s.value[1] - s.delta, p
        assert p != s.t or s.value[0] - 1e-15 <= value <= s.value[1] + 1e-15, p
        checked += 1
    return checked


def ridge_cv_loss(X, y, folds, t, lam, criterion="mse"):
    """Pooled k-fold MSE (or MAE: ``criterion="mae"``) of the exact kernel ridge optima (numpy's
    dense solver)."""
    total = 0.0
    for tr, va in folds:
        c = np.linalg.solve(kernel(X[tr], X[tr], t) + lam * np.eye(len(tr)), y[tr])
        r = kernel(X[va], X[tr], t) @ c - y[va]
        total += float(np.sum(r * r if criterion == "mse" else np.abs(r)))
    return total / len(y)


def forged(src, dst, edit):
    """The certificate ``src`` with ``edit(arrays, meta)`` applied and its content hash recomputed (as a
    forger would), written to ``dst``."""
    from approxpath.certificate.format import content_sha256, read_certificate, write_npz

    arrays, meta = read_certificate(src)
    arrays = {k: np.array(v) for k, v in arrays.items()}
    edit(arrays, meta)
    meta["content_sha256"] = content_sha256(arrays, meta)
    write_npz(dst, arrays, meta)
    return dst


def command_line_choice(folder, X, y, args):
    """Run ``approxpath select PROBLEM ... --out FILE`` (``args`` after ``select``, the data written to a
    CSV file in ``folder``) and ``approxpath verify FILE``, each in a new process; asserts that the
    choice succeeded and that its file verifies.  Returns the file."""
    import subprocess
    import sys

    data, out = folder / "choice_data.csv", folder / "choice.npz"
    np.savetxt(data, np.column_stack([X, y]), delimiter=",")
    run = [sys.executable, "-m", "approxpath.cli"]
    done = subprocess.run(run + ["select", *args, "--data", str(data), "--format", "csv", "--out", str(out),
                                 "--no-progress"], capture_output=True, text=True)
    assert done.returncode == 0, done.stderr
    checked = subprocess.run(run + ["verify", str(out), "--no-progress"], capture_output=True, text=True)
    assert checked.returncode == 0 and "OK:" in checked.stdout, checked.stdout + checked.stderr
    return out
