"""Built-in problems: one module per problem, registered on import.

This folder is installed as ``approxpath.problems``; reach its classes through
:func:`approxpath.get_problem` (importing the folder as a top-level ``problems`` package
would register every class a second time).
"""
