"""The hostile review of ``verify`` for surface certificates (approxpath.certificate.surface):
every stored field of a surface of every problem with cells is forged -- out of its domain,
NaN/inf, another shape, dtype or order, missing, the box moved, the cells' weights shifted --
with the content hash recomputed, and no forged file may be accepted whose claim is false.

The reference is independent of the verifier: the domains restated here, the tiling checked on
the grid of every cell edge (each elementary rectangle inside exactly one cell), and every cell's
claim checked with the problem's search-side numpy objectives and violations at the problem set
to the weight there, at the corners, the middle and random points of the cell, with the dual
scaled by ``w / w_lo`` for the problems whose cells let it grow with the weight
(docs/surfaces.md).
"""

import math
import zipfile

import numpy as np
import pytest

import approxpath
from approxpath.certificate.format import FORMAT_VERSION, KERNEL, read_certificate
from approxpath.data import make_classification, make_sinc
from approxpath.moving import Moving
from certificate_helpers import (BAD_NUMBERS, NUMBER_CHANGES, array_edits, check_forgeries, first_of_each_kind,
                                 member_data_start, meta_field_edits, moving_edits, point_at, tamper)

pytestmark = pytest.mark.filterwarnings("ignore::RuntimeWarning")


@pytest.fixture(autouse=True)
def weak_duality():
    """As in test_verify_fuzz: a forged pair may make a bound NaN or negative, which verify must
    reject, not conftest's wrapper."""
    yield


_SLACK = 1e-9
# Problems whose cells' duals grow with the weight: at w the dual is (w / w_lo) times the stored one.
_GROWS = ("kernel_svm", "klasso", "kernel_ridge")
_WEIGHT = {"kernel_svm": "c", "klasso": "lam", "robust_l1": "lam", "kernel_ridge": "lam"}

# name -> (problem, options, data, eps, relative, weights, bandwidths)
_CASES = {
    "kernel_svm": ("kernel_svm", dict(c=1.0), "classes", 1.0, False, (0.5, 2.0), (0.5, 2.0)),
    "kernel_svm-relative": ("kernel_svm", dict(c=1.0, bias="dynamic"), "classes", 0.5, True, (0.5, 2.0), (0.5, 2.0)),
    "klasso": ("klasso", dict(lam=0.1), "sinc", 0.05, False, (0.05, 0.2), (0.5, 2.0)),
    "robust_l1": ("robust_l1", dict(lam=0.1), "sinc", 0.5, False, (0.08, 0.12), (0.5, 2.0)),
    "kernel_ridge": ("kernel_ridge", dict(lam=0.1), "sinc", 1e-2, False, (0.05, 0.2), (0.5, 2.0)),
}


def _data(kind):
    return make_classification(n=12, d=2, seed=1) if kind == "classes" else make_sinc(n=12, seed=2)


@pytest.fixture(scope="module")
def surfaces(tmp_path_factory):
    """name -> (file, X, y): an honest surface of every case (and one carrying its data)."""
    root = tmp_path_factory.mktemp("fuzz_surface")
    out = {}
    for name, (problem_name, options, data, eps, relative, weights, bandwidths) in _CASES.items():
        X, y = _data(data)
        problem = approxpath.get_problem(problem_name)(X, y, **options)
        surface = approxpath.approximate_surface(problem, eps, weights, bandwidths, relative=relative)
        assert surface.certified and len(surface.cells) > 1, name
        out[name] = (surface.save(root / f"{name}.npz", embed_data=False), X, y)
    X, y = _data("classes")
    surface = approxpath.approximate_surface(approxpath.get_problem("kernel_svm")(X, y, c=1.0), 1.0, (0.5, 2.0),
                                             (0.5, 2.0))
    out["carried-data"] = (surface.save(root / "carried.npz"), None, None)
    return out


# ------------------------------------------------------------------------------ the reference
def _finite(v):
    return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)


def _tiles(t_lo, t_hi, w_lo, w_hi, box):
    """Every elementary rectangle of the grid of all cell edges lies in exactly one cell, and the
    cells lie inside the box and reach its edges."""
    (bt0, bt1), (bw0, bw1) = box
    if not (np.all(t_lo < t_hi) and np.all(w_lo < w_hi) and t_lo.min() == bt0 and t_hi.max() == bt1
            and w_lo.min() == bw0 and w_hi.max() == bw1 and np.all(t_lo >= bt0) and np.all(w_lo >= bw0)
            and np.all(t_hi <= bt1) and np.all(w_hi <= bw1)):
        return False
    T, W = np.unique(np.concatenate([t_lo, t_hi])), np.unique(np.concatenate([w_lo, w_hi]))
    for tc in 0.5 * (T[:-1] + T[1:]):
        for wc in 0.5 * (W[:-1] + W[1:]):
            if np.count_nonzero((t_lo < tc) & (tc < t_hi) & (w_lo < wc) & (wc < w_hi)) != 1:
                return False
    return True


def _scaled(point, s):
    fields = {f: getattr(point, f) for f, spec in point.__dataclass_fields__.items() if spec.compare}
    return type(point)(**{f: None if v is None else s * np.asarray(v, dtype=float) for f, v in fields.items()})


def _claim_is_true(file, X, y):
    """Whether what the surface ``file`` claims holds, decided without the verifier."""
    arrays, meta = read_certificate(file)
    if X is None:
        X, y = arrays.get("data_X"), arrays.get("data_y")
        if X is None or y is None:
            return False
    if meta.get("certificate") != "surface" or meta.get("surface_format") != 1 \
            or meta.get("format_version") != FORMAT_VERSION:
        return False
    eps, relative, box = meta.get("eps"), meta.get("relative"), meta.get("box")
    if not (_finite(eps) and eps > 0 and isinstance(relative, bool)):
        return False
    if not (isinstance(box, list) and len(box) == 2 and all(isinstance(r, list) and len(r) == 2 for r in box)
            and all(_finite(v) for r in box for v in r)):
        return False
    (t0, t1), (w0, w1) = box
    if not (0 < t0 < t1 and 0 < w0 < w1):
        return False
    name, options = meta.get("problem"), meta.get("options")
    if name not in _WEIGHT or meta.get("weight") != _WEIGHT[name] or not isinstance(options, dict) \
            or _WEIGHT[name] in options or options.get("parameter", "bandwidth") != "bandwidth":
        return False
    try:
        problem = approxpath.get_problem(name)(np.asarray(X), np.asarray(y), **options, **{_WEIGHT[name]: w0})
    except Exception:
        return False
    if meta.get("kernel", KERNEL) != KERNEL or meta.get("n", problem.n) != problem.n \
            or meta.get("d", problem.X.shape[1]) != problem.X.shape[1]:
        return False
    keys = ("t_lo", "t_hi", "w_lo", "w_hi", "gap_bound")
    if any(k not in arrays or arrays[k].dtype.kind != "f" or arrays[k].ndim != 1 for k in keys) \
            or len({arrays[k].shape for k in keys}) != 1 or arrays["t_lo"].size == 0:
        return False
    t_lo, t_hi, w_lo, w_hi, stored = (arrays[k] for k in keys)
    if not np.all(np.isfinite(np.concatenate([t_lo, t_hi, w_lo, w_hi]))) or not _tiles(t_lo, t_hi, w_lo, w_hi, box):
        return False
    kind = arrays.get("kind")
    if kind is None or kind.shape != t_lo.shape:
        return False
    rng = np.random.default_rng(0)
    per = {k: v for k, v in arrays.items()
           if k not in keys and k not in ("kind", "anchor_lo", "anchor_hi", "anchor_w", "data_X", "data_y")}
    for i in range(t_lo.size):
        if str(kind[i]) != "certified":
            return False
        a, b, c, d = float(t_lo[i]), float(t_hi[i]), float(w_lo[i]), float(w_hi[i])
        try:
            primal, dual = problem.bound.piece_from_arrays({k: v[i] for k, v in per.items()}, a, b)
        except (KeyError, ValueError, TypeError, IndexError):
            return False
        for point in (primal, dual):
            if isinstance(point, Moving) and not (np.all(np.isfinite(point.weights)) and point.span[0] <= a
                                                  and b <= point.span[1] and math.isfinite(point.span[1] - point.span[0])):
                return False
        points = [(a, c), (a, d), (b, c), (b, d), (math.sqrt(a * b), math.sqrt(c * d))]
        points += list(zip(np.exp(rng.uniform(np.log(a), np.log(b), 4)), np.exp(rng.uniform(np.log(c), np.log(d), 4))))
        for t, w in points:
            at = problem.with_weight(float(w))
            s = w / c if name in _GROWS else 1.0
            p = at.primal_at(point_at(primal, t), t)
            q = at.dual_at(_scaled(point_at(dual, t), s), t)
            pv, dv = at.primal_objective(p, t), at.dual_objective(q, t)
            scale = 1.0 + abs(pv) + abs(dv)
            if at.primal_violation(p, t) > _SLACK * scale or at.dual_violation(q, t) > _SLACK * scale:
                return False
            goal = eps * dv if relative else eps
            if not (pv - dv <= goal + _SLACK * scale and pv - dv <= float(stored[i]) + _SLACK * scale):
                return False
    return True


# ------------------------------------------------------------------------------ the forgeries
def _meta_edits(meta):
    """(label, edit) of every meta field, every option and the box: out of the domain, NaN/inf,
    other types, missing, other valid values, the box moved."""
    edits = []
    for key, value in meta.items():
        if key == "content_sha256":
            continue
        edits += meta_field_edits(key, value, [c for c in NUMBER_CHANGES if c[0] != "-1"])
        if isinstance(value, str):
            for other in ("kernel_svm", "klasso", "robust_l1", "kernel_ridge", "path", "c", "lam", "bandwidth", ""):
                if other != value:
                    edits.append((f"meta {key}:{other or 'empty'}", lambda a, m, key=key, o=other: m.__setitem__(key, o)))
    (t0, t1), (w0, w1) = meta["box"]
    for label, box in (("negative", [[-t1, -t0], [w0, w1]]), ("weights from 0", [[t0, t1], [0.0, w1]]),
                       ("swapped", [[t1, t0], [w0, w1]]), ("weights swapped", [[t0, t1], [w1, w0]]),
                       ("wider", [[t0 / 2, t1], [w0, w1]]), ("narrower", [[t0, t1], [w0 * 1.1, w1]]),
                       ("to inf", [[t0, math.inf], [w0, w1]]), ("three", [[t0, t1], [w0, w1], [w0, w1]]),
                       ("flat", [t0, t1, w0, w1])):
        edits.append((f"meta box:{label}", lambda a, m, box=box: m.__setitem__("box", box)))
    for opt in meta["options"]:
        for label, bad in dict(BAD_NUMBERS, other="dynamic").items():
            edits.append((f"option {opt}:{label}", lambda a, m, o=opt, b=bad: m["options"].__setitem__(o, b)))
        edits.append((f"option {opt}:missing", lambda a, m, o=opt: m["options"].pop(o)))
    edits += [("option weight:added", lambda a, m: m["options"].__setitem__(m["weight"], 1.0)),
              ("option parameter:weight", lambda a, m: m["options"].__setitem__("parameter", m["weight"])),
              ("meta surface_format:2", lambda a, m: m.__setitem__("surface_format", 2)),
              ("meta format_version:2", lambda a, m: m.__setitem__("format_version", 2))]
    return edits


def _cell_edits(arrays):
    """Crafted forgeries of the cells together: every cell's weights doubled (the pairs then
    claim a box where they were never checked), a cell stretched over its neighbour, two cells
    overlapping, a cell removed with the meta kinds to match."""
    def doubled(a, m):
        a["w_hi"] = a["w_hi"] * 2.0
        a["w_lo"] = np.where(a["w_lo"] == m["box"][1][0], a["w_lo"], a["w_lo"] * 2.0)
        m["box"][1][1] *= 2.0

    def stretched(a, m):
        i = int(np.argmin(a["t_hi"]))
        a["t_hi"][i] = m["box"][0][1]

    def removed(a, m):
        for k in list(a):
            if a[k].ndim >= 1 and a[k].shape[0] == len(m["cell_kinds"]) and not k.startswith("data_"):
                a[k] = a[k][1:]
        m["cell_kinds"] = m["cell_kinds"][1:]

    def bound_lowered(a, m):
        a["gap_bound"] = a["gap_bound"] * 1e-3

    return [("cells:weights doubled", doubled), ("cells:stretched", stretched), ("cells:removed", removed),
            ("cells:bound lowered", bound_lowered)]


def _edits_of(file):
    arrays, meta = read_certificate(file)
    return array_edits(arrays) + _meta_edits(meta) + moving_edits(arrays) + _cell_edits(arrays)


def _check_forgeries(surfaces, tmp_path, case, select, at_least):
    check_forgeries(surfaces, tmp_path, case, select, at_least, edits_of=_edits_of, claim_is_true=_claim_is_true,
                    what="surfaces")


def _crafted_and_first(edits):
    return [e for e in edits if e[0].startswith("cells:")] + first_of_each_kind(edits)


# The default run forges the surfaces of the two problems whose duals grow with the weight in
# different ways (a box constraint, a sup-norm constraint); the others opt in (``-m slow``).
_DEFAULT = ("kernel_svm", "klasso")


@pytest.mark.parametrize("case", [pytest.param(c, marks=() if c in _DEFAULT else pytest.mark.slow)
                                  for c in [*_CASES, "carried-data"]])
def test_no_forged_field_of_a_surface_makes_a_false_claim_pass(surfaces, tmp_path, case):
    """Every field, every kind of forgery: the first forgery of each kind, and the crafted ones."""
    _check_forgeries(surfaces, tmp_path, case, _crafted_and_first, 100)


@pytest.mark.slow
@pytest.mark.parametrize("case", [*_CASES, "carried-data"])
def test_no_forgery_of_a_surface_at_all_makes_a_false_claim_pass(surfaces, tmp_path, case):
    _check_forgeries(surfaces, tmp_path, case, list, 300)


def test_a_corrupted_surface_is_refused(surfaces, tmp_path):
    """The plain cases, named: a lowered bound, a cell's weights moved, the tiling broken, a
    byte of the file flipped."""
    file, X, y = surfaces["kernel_svm"]
    for label, edit in _cell_edits(read_certificate(file)[0]):
        if label == "cells:removed":
            continue
        report = approxpath.verify(tamper(file, tmp_path / "bad.npz", edit, rehash=True), X, y)
        assert not report.ok and report.unit == "cells", label
    # a byte of the largest member's compressed data (a byte of a zip header's date, say, changes
    # nothing the file claims: the middle of the file was one, with a longer meta)
    with zipfile.ZipFile(file) as z:
        member = max(z.infolist(), key=lambda m: m.compress_size)
    raw = bytearray(open(file, "rb").read())
    raw[member_data_start(raw, member) + member.compress_size // 2] ^= 0xFF
    (tmp_path / "flipped.npz").write_bytes(bytes(raw))
    assert not approxpath.verify(tmp_path / "flipped.npz", X, y).ok


@pytest.mark.parametrize("second, tiles", [
    ((2.0, 4.0), True),  # the slab's two cells meet end to end
    ((2.5, 4.0), False),  # a gap of bandwidths no cell covers
    ((1.5, 4.0), False),  # two cells over the same bandwidths
])
def test_the_cells_of_a_slab_must_meet_end_to_end(second, tiles):
    """The tiling check by hand: a box [1, 4] x [1, 2] split in two cells over the bandwidths.
    A gap between them (no certificate for t in (2, 2.5)) or an overlap is refused, although the
    first cell starts at the box's smallest bandwidth and the last ends at its largest."""
    from approxpath.certificate.surface import tiling_errors

    t_lo, t_hi = np.array([1.0, second[0]]), np.array([2.0, second[1]])
    errors = tiling_errors(t_lo, t_hi, np.array([1.0, 1.0]), np.array([2.0, 2.0]), ((1.0, 4.0), (1.0, 2.0)))
    assert (errors == []) if tiles else (len(errors) == 1 and "do not tile the bandwidths" in errors[0]), errors


@pytest.mark.parametrize("name", ["klasso", "kernel_ridge"])
def test_a_surface_s_array_no_check_reads_is_refused(surfaces, tmp_path, name):
    """As a path's: an array of one row per cell that no field of the problem's pairs names."""
    file, X, y = surfaces[name]
    cells = read_certificate(file)[0]["t_lo"].size
    extra = tamper(file, tmp_path / "extra.npz", lambda a, m: a.__setitem__("primal_extra", np.zeros(cells)), True)
    report = approxpath.verify(extra, X, y)
    assert not report.ok and f"array 'primal_extra' is no field of a {name} certificate: nothing would check it" in \
        report.failures
