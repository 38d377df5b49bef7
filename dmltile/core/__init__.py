"""The core layer: DirectML's enums, the tensor and operator models, and Tile's one shape function.

No I/O beyond the shipped enum table, no rendering; every other layer builds on these types.
"""
