"""Which parameter a kernel problem's path sweeps (:class:`Sweep`): the bandwidth or the weight."""

from __future__ import annotations

from dataclasses import dataclass

from .errors import InputError

__all__ = ["Sweep"]


@dataclass(frozen=True)
class Sweep:
    """Which parameter a kernel problem's path sweeps: the bandwidth :math:`t` of
    :math:`\\exp(-tD)` with the weight (C, λ) fixed, or the weight with :math:`t` fixed.

    Attributes
    ----------
    parameter : str
        ``"bandwidth"`` or :attr:`weight_name`.
    weight_name : str
    bandwidth : float or None
        The fixed :math:`t` of a weight path.
    weight : float or None
        The fixed weight of a bandwidth path; on a weight path (optional) the top of the
        default interval.
    """

    parameter: str
    weight_name: str
    bandwidth: float = None
    weight: float = None

    def __post_init__(self):
        if self.along_bandwidth:
            if self.weight is None:
                raise InputError(f"the bandwidth path needs a fixed positive {self.weight_name}=; got None")
            if self.bandwidth is not None:
                raise InputError("bandwidth= fixes t only for parameter="
                                 f"{self.weight_name!r}; the bandwidth path sweeps t")
        elif self.bandwidth is None:
            raise InputError(f"parameter={self.parameter!r} needs a fixed positive bandwidth=t of the kernel exp(-t D)")

    @property
    def along_bandwidth(self):
        """True on a bandwidth path."""
        return self.parameter == "bandwidth"

    def at(self, tau):
        """``(t, weight)`` at the path parameter ``tau``."""
        return (float(tau), self.weight) if self.along_bandwidth else (self.bandwidth, float(tau))

    def bandwidths(self, lo, hi):
        """The bandwidths a piece ``[lo, hi]`` spans: ``(t_lo, t_hi)``."""
        return (lo, hi) if self.along_bandwidth else (self.bandwidth, self.bandwidth)

    def weight_floor(self, lo):
        """The smallest weight on a piece starting at ``lo``."""
        return self.weight if self.along_bandwidth else float(lo)
