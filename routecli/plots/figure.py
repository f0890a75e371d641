"""Writing a finished matplotlib figure: one way for every PNG routecli draws."""

from __future__ import annotations

import struct
from pathlib import Path
from typing import Any

from routecli.atomic import atomic_write

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


SOFTWARE = "routecli"  # the PNG ``Software`` text of every picture routecli draws
MATPLOTLIB = "Matplotlib"  # matplotlib's own, which routecli's pictures carried before


def save_png(fig: Any, path: str | Path, dpi: int = 120, software: str = SOFTWARE) -> Path:
    """Lay ``fig`` out, write it to ``path`` as a PNG atomically (a reader never finds half a
    file, an interrupted run leaves the old one) and close it. ``software`` replaces
    matplotlib's name in the PNG's ``Software`` text, so a later run can tell its own file
    (:func:`drawn_by_routecli`)."""
    import matplotlib.pyplot as plt

    fig.tight_layout()
    metadata = {"Software": software}
    try:
        return atomic_write(path, lambda handle: fig.savefig(handle, format="png", dpi=dpi,
                                                             metadata=metadata))
    finally:
        plt.close(fig)


def png_made_by(path: str | Path) -> str | None:
    """The ``Software`` text of a PNG file (``None`` for a file that is no PNG or has none);
    only the chunks before the image data are read."""
    try:
        with open(path, "rb") as fh:
            if fh.read(8) != PNG_SIGNATURE:
                return None
            while header := fh.read(8):
                if len(header) < 8:
                    return None
                length, kind = struct.unpack(">I4s", header)
                if kind == b"IDAT":
                    return None
                data = fh.read(length)
                fh.read(4)  # CRC
                if kind == b"tEXt" and data.startswith(b"Software\0"):
                    return data[len(b"Software\0"):].decode("latin-1")
    except OSError:
        return None
    return None


def drawn_by_routecli(path: str | Path) -> bool:
    """Whether ``path`` is a picture routecli drew (its ``Software`` text starts with
    :data:`SOFTWARE`, or is matplotlib's as in pictures of earlier versions), so replacing it
    loses nothing of the user's."""
    made = png_made_by(path)
    return made is not None and made.startswith((SOFTWARE, MATPLOTLIB))
