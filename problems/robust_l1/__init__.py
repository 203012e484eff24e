"""Sparse robust l1 kernel regression over the Gaussian bandwidth or over lambda: ``bound`` (the
certificate side, numpy only) and ``problem`` (exact solves, restoration).  Reach the problem
through ``approxpath.get_problem("robust_l1")``."""
