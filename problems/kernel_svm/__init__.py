"""Hinge-loss kernel SVM over the Gaussian bandwidth or over C: ``bound`` (the certificate side,
numpy only), ``problem`` (exact solves, restoration, interpolation), ``libsvm`` (the fast exact
solve).  Reach the problem through ``approxpath.get_problem("kernel_svm")``."""
