"""tg.Device: Device.DEFAULT (from DEVICE=..., CPU=1..., else "CPU") and Device.canonicalize(name)."""
from tg._tg import Device  # noqa: F401

__all__ = ["Device"]
