"""Kernelized LASSO over the Gaussian bandwidth or over lambda: ``bound`` (the certificate side,
numpy only) and ``problem`` (exact solves, restoration, interpolation).  Reach the problem
through ``approxpath.get_problem("klasso")``."""
