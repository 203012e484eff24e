"""The domains of a problem's constructor options: :class:`Option`, and :data:`REQUIRED` for one
without a default.

A :class:`~approxpath.bound.Bound` lists its options in ``OPTIONS`` as :class:`Option` domains,
which the problem and the verifier both check values against (:meth:`Option.check`: a positive
number, a number inside an open interval, one of a few choices, or a vector of nonnegative
weights).  No solver and no search code, as the rest of a bound (the verifier imports it);
re-exported by :mod:`approxpath.bound`, where problems import them from.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from .validate import between, choice, nonnegative_weights, positive

__all__ = ["Option", "REQUIRED"]

#: Marks an :class:`Option` without a default (a certificate must record it).
REQUIRED = object()


@dataclass(frozen=True)
class Option:
    """The domain of one constructor option, checked by the problem and by the verifier.

    Attributes
    ----------
    kind : {"positive", "between", "choice", "weights"}
        A positive finite number, a finite number strictly inside ``bounds``, one of
        ``choices``, or a vector of finite nonnegative numbers (a list, or text such as
        ``"1,0.5,2"`` from a command line; stored as a tuple of floats).
    choices : tuple
    default : object
        Used when a certificate does not record the option (files of older versions);
        :data:`REQUIRED` if it must be there.  ``None`` means "not set" (a fixed value that only
        one path parameter needs).
    bounds : (float, float)
        ``kind="between"``: the open interval ``(low, high)`` of the values, as narrow as the
        mathematics of the problem (e.g. a mixing weight ``0 < mix < 1`` whose dual divides by
        ``1 - mix``): ``verify`` refuses a certificate recording a value outside it.
    """

    kind: str
    choices: tuple = ()
    default: Any = REQUIRED
    bounds: tuple = ()

    def __post_init__(self):
        if self.kind not in ("positive", "between", "choice", "weights"):
            raise ValueError(f"Option kind must be positive, between, choice or weights; got {self.kind!r}")
        if self.kind == "between" and not (len(self.bounds) == 2 and self.bounds[0] < self.bounds[1]):
            raise ValueError(f"Option('between') needs bounds=(low, high) with low < high; got {self.bounds!r}")

    def check(self, name, value):
        """``value`` normalized (a float for numbers), or :class:`InputError`."""
        if value is None and self.default is None:
            return None
        if self.kind == "positive":
            return positive(name, value)
        if self.kind == "between":
            return between(name, value, *self.bounds)
        if self.kind == "weights":
            return nonnegative_weights(name, value)
        return choice(name, value, self.choices)
