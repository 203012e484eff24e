"""approxpath-ridge: the plug-in tutorial, ridge regression over its regularization weight.

After ``pip install .`` the problem is ``approxpath.get_problem("ridge")`` (entry point
``approxpath.problems`` in ``pyproject.toml``).  ``bound`` is the certificate side (what
``approxpath verify`` builds), ``problem`` the search side.
"""
