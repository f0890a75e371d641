"""Writing a finished matplotlib figure: one way for every PNG routecli draws."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from routecli.atomic import atomic_write


def save_png(fig: Any, path: str | Path, dpi: int = 120) -> Path:
    """Lay ``fig`` out, write it to ``path`` as a PNG atomically (a reader never finds half a
    file, an interrupted run leaves the old one) and close it."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    try:
        return atomic_write(path, lambda handle: fig.savefig(handle, format="png", dpi=dpi))
    finally:
        plt.close(fig)
