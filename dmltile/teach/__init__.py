"""The teaching layer: explanations, pictures, and how objects look in terminals and notebooks."""

from .notebook import register_displays

register_displays()
