"""Hinge-loss kernel SVM over the Gaussian bandwidth or over C: ``bound`` (the certificate side,
numpy only, with ``points``), ``problem`` (restoration, interpolation), ``solves`` (the exact
solves: warm SMO, ``libsvm``, the dual QP).  Reach the problem through
``approxpath.get_problem("kernel_svm")``."""
