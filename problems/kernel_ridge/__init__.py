"""Kernel ridge regression over the Gaussian bandwidth or over lambda: ``bound`` (the certificate
side, numpy only), ``problem`` (exact solves, restoration) and ``loocv`` (fast leave-one-out
cross-validation along a path).  Reach the problem through ``approxpath.get_problem("kernel_ridge")``."""
