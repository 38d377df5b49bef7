"""The execution layer: the NumPy and onnxruntime backends, copy planning, limits, compile/compare."""
