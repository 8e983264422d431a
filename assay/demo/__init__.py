"""Demo warehouses generated locally, deterministic, with ground truth."""

from __future__ import annotations

from pathlib import Path

from . import ecommerce, gaming
from .common import DemoSpec, Pattern, write

BUILDERS = {"ecommerce": ecommerce.build, "gaming": gaming.build}


def generate(name: str, out_dir: Path, scale: float = 1.0) -> tuple[Path, Path]:
    if name not in BUILDERS:
        from ..errors import ConfigError

        raise ConfigError(f"unknown demo {name!r} (valid: {', '.join(sorted(BUILDERS))})")
    return write(BUILDERS[name](scale=scale), out_dir)


__all__ = ["BUILDERS", "DemoSpec", "Pattern", "generate"]
