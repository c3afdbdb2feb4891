"""One module per command; ``registry.REGISTRY`` is the only listing of them.

Each command is a class with ``name``, a docstring that is its ``--help`` text (first line:
the summary), ``add_arguments(parser)`` and ``run(args) -> int``.
"""
