"""Progress bars (the ``progress`` extra: tqdm): how far along the parameter a path is, shown in
the parameter's own units, one overall bar for work spread over processes, and how far a
selection's δ is from its ``tol``.

Positions are set, never summed: the bar reaches exactly its end whatever the rounding of the
pieces' widths (no "clamping frac" warning, no negative time left).
"""

from __future__ import annotations

import math
import time

__all__ = ["PathBar", "CountBar", "DeltaBar", "path_bar", "count_bar", "delta_bar", "shown_name"]

# The bar advances in thousandths of the interval (log scale): fine enough for any terminal.
_STEPS = 1000
# A note of DeltaBar (what a selection computes between two values of delta) is drawn at most
# this often (seconds): a cover notes every piece it encloses, thousands a round
_NOTE_EVERY_S = 0.5
# How text for people (bars, the selection's messages) names a path parameter.
_SHOWN = {"bandwidth": "t", "c": "C", "lam": "lam"}


def shown_name(parameter):
    """The name of a path parameter in text for people: ``t`` for the bandwidth, ``C``, ``lam``
    (another name as it is)."""
    return _SHOWN.get(parameter, parameter)


def _tqdm(**kw):
    try:
        from tqdm.auto import tqdm
    except ImportError:
        return None
    return tqdm(**kw)


class PathBar:
    """A bar over ``[lo, hi]`` (log scale) labelled with the parameter value reached.

    Parameters
    ----------
    lo, hi : float
    desc : str
        E.g. ``"kernel_svm"``.
    parameter : str
        Name shown before the value (``"t"``, ``"c"``, ``"lam"``).
    """

    def __init__(self, lo, hi, desc, parameter="t"):
        self.lo, self.hi, self.parameter = lo, hi, parameter
        self._s_lo, self._width = math.log(lo), math.log(hi) - math.log(lo)
        self.reached = lo
        self.counts = ""  # ", 56 exact solves" once known: where pieces are narrow the value moves slowly
        # the parameter reached is shown through the bar's "unit" field (tqdm's postfix would
        # prepend a comma)
        self._bar = _tqdm(total=_STEPS, desc=desc, leave=True,
                          bar_format="{desc}: {percentage:3.0f}%|{bar}| {unit} [{elapsed}<{remaining}]")
        self._show()

    def _show(self):
        if self._bar is not None:
            self._bar.unit = f"{self.parameter} = {self.reached:.4g} of [{self.lo:.4g}, {self.hi:.4g}]{self.counts}"

    def update_to(self, t, solves=None):
        """Everything up to ``t`` is done (a ``t`` below the last one is ignored), with ``solves``
        exact solves so far where given."""
        if not t > self.reached:
            return
        self.reached = min(float(t), self.hi)
        if solves is not None:
            self.counts = f", {solves:,} exact solves"
        if self._bar is None:
            return
        frac = (math.log(self.reached) - self._s_lo) / self._width if self._width > 0 else 1.0
        n = min(_STEPS, max(0, int(round(frac * _STEPS))))
        self._show()
        if n > self._bar.n:
            self._bar.update(n - self._bar.n)
        else:
            self._bar.refresh()

    def close(self):
        if self._bar is not None:
            self._bar.close()


class CountBar:
    """A bar over ``total`` tasks (chunks of a path, paths of :func:`~approxpath.map_paths`)."""

    def __init__(self, total, desc, unit):
        self.total = int(total)
        self._bar = _tqdm(total=self.total, desc=desc, unit=f" {unit}", leave=True,
                          bar_format="{desc}: {percentage:3.0f}%|{bar}| {n}/{total}{unit} [{elapsed}<{remaining}]")

    def done(self, k=1):
        """``k`` more tasks finished."""
        if self._bar is not None:
            self._bar.update(min(k, self.total - self._bar.n))

    def close(self):
        if self._bar is not None:
            self._bar.close()


class DeltaBar:
    """A bar from a selection's first finite δ down to ``tol`` (log scale), labelled with δ and
    the exact solves so far (``start`` until the first δ: what is being computed)."""

    def __init__(self, tol, desc, start=""):
        self.tol, self.first, self._at = float(tol), None, 0
        self._delta, self._noted = "", -math.inf  # the last delta's text; when a note was drawn
        self._bar = _tqdm(total=_STEPS, desc=desc, leave=True, unit=start,
                          bar_format="{desc}: {percentage:3.0f}%|{bar}| {unit} [{elapsed}]")

    def update(self, delta, solves):
        """The search reached ``delta`` after ``solves`` exact solves (the bar never moves back)."""
        if self._bar is None:
            return
        if self.first is None and math.isfinite(delta) and delta > self.tol:
            self.first = delta
        if delta <= self.tol:
            frac = 1.0
        elif self.first is None or not math.isfinite(delta):
            frac = 0.0
        else:
            frac = math.log(self.first / delta) / math.log(self.first / self.tol)
        self._at = max(self._at, min(_STEPS, max(0, int(round(frac * _STEPS)))))
        self._bar.unit = self._delta = f"delta = {delta:.4g} (tol {self.tol:g}), {solves} exact solves"
        if self._at > self._bar.n:
            self._bar.update(self._at - self._bar.n)
        else:
            self._bar.refresh()

    def note(self, text):
        """Show ``text`` (what is being computed: the enclosures of a fold, minutes on a large
        one) after the last δ, or instead of the start text before the first; the bar does not
        move.  Drawn at most every :data:`_NOTE_EVERY_S` seconds."""
        now = time.monotonic()
        if self._bar is None or now - self._noted < _NOTE_EVERY_S:
            return
        self._noted = now
        self._bar.unit = f"{self._delta}; {text}" if self._delta else text
        self._bar.refresh()

    def close(self):
        if self._bar is not None:
            if self._delta:  # the bar's last line: the last delta, not what ran before it
                self._bar.unit = self._delta
            self._bar.close()


def path_bar(enabled, lo, hi, desc, parameter="t"):
    """A :class:`PathBar`, or None when not ``enabled`` (or tqdm is not installed)."""
    if not enabled:
        return None
    bar = PathBar(lo, hi, desc, parameter)
    return bar if bar._bar is not None else None


def count_bar(enabled, total, desc, unit):
    """A :class:`CountBar`, or None when not ``enabled`` (or tqdm is not installed).  ``unit``: what
    a task is, plural (``"chunks"``, ``"pieces"``), shown after the count; ``desc``: the bar's label."""
    if not enabled:
        return None
    bar = CountBar(total, desc, unit)
    return bar if bar._bar is not None else None


def delta_bar(enabled, tol, desc, start=""):
    """A :class:`DeltaBar`, or None when not ``enabled`` (or tqdm is not installed)."""
    if not enabled:
        return None
    bar = DeltaBar(tol, desc, start)
    return bar if bar._bar is not None else None
