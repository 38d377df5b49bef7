"""The real DirectML.dll: the C runner, its one-command set-up, and the driver that speaks to it."""
