"""Exact path algorithms as certifiable comparators, and a cross-check for any exact path.

The exact kLASSO paths of Wang et al. (:func:`lambda_path`, :func:`kernel_path`) return
solutions that are *not trusted*: :func:`certify` puts every one of them through the duality
gap of the registered problem, and :func:`crosscheck` does the same for arrays of parameter
values and claimed solutions computed anywhere (also along segments claimed to be linear).
:mod:`approxpath.exact.figures` draws a path (and is the command ``python -m
approxpath.exact.figures``); :mod:`approxpath.export` writes its table.
:func:`feature_path` follows the feature-selection path of Li & Sminchisescu (non-convex in the
feature weights) and certifies every point's inner problem and KKT conditions.
"""

from ._common import Event, ExactPath, ExactPathError, ExactPoint
from ._kernel import kernel_path
from ._lambda import lambda_path
from .crosscheck import Check, CrossCheckReport, certify, crosscheck, read_claimed, write_claimed
from .feature_path import FeaturePath, FeaturePathReport, crosscheck_feature_path, feature_path

#: Registered problems with an exact path algorithm here (``approxpath exact PROBLEM``).
EXACT_PROBLEMS = ("klasso",)

__all__ = [
    "EXACT_PROBLEMS",
    "Check",
    "CrossCheckReport",
    "Event",
    "ExactPath",
    "ExactPathError",
    "ExactPoint",
    "FeaturePath",
    "FeaturePathReport",
    "certify",
    "crosscheck",
    "crosscheck_feature_path",
    "feature_path",
    "kernel_path",
    "lambda_path",
    "read_claimed",
    "write_claimed",
]
