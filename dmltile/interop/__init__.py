"""The interop layer: DxDispatch model export, running its commands, comparing its printed output."""
