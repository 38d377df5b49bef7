"""Backends that run a Tile descriptor."""
