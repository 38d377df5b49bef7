"""The NumPy backend's fast path: Tile as a typed recipe run by a small C kernel (docs/planner.md).

``recipe.py`` turns a descriptor into axes and a Recipe for a machine's Traits, ``emit.py`` turns a
Recipe into a runner, ``kernel.py`` loads ``c/kernel.c``.
"""
