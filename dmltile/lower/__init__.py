"""The lowering layer: ONNX, OpenVINO and numpy Tile semantics, their mapping onto DirectML's Tile,
and the check of every Tile node in an ONNX model."""
