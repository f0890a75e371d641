"""PNG pictures of positional encodings on one solution (matplotlib, Agg backend).

- ``heatmap``: the encoding along the longest route, as a closed walk (depot first and last):
  ``PE[position, channel]`` for node encodings, the logit bias for bias encodings, the rotary
  logits of an all-ones query/key for RoPE.
- ``similarity``: position-by-position cosine similarity of a node encoding along that walk
  (a circular encoding shows a bright top-right corner: the two depot ends agree).
- ``channels``: IPE channels against cumulative distance (smooth) and against the index
  (irregular), the picture of desideratum D1.
- ``angles``: the depot-relative angle of every customer, one colour per route (polar plot).
- ``pca``: a 2-D PCA of a node encoding (IPE+XPE by default) over all customers, coloured by
  route.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import torch

from routecli.pe import RouteBatch, get_pe
from routecli.pe.base import PositionalEncoding
from routecli.pe.kinds import KINDS, build_pe, heatmap, node_channels
from routecli.plots.figure import save_png

PLOTS = ("heatmap", "similarity", "channels", "angles", "pca")


def _pyplot():  # noqa: ANN202 - the pyplot module
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def longest_route_walk(batch: RouteBatch, row: int = 0) -> RouteBatch:
    """The longest route of solution ``row`` as a closed walk (walk layout)."""
    route = batch.route[row]
    longest = int(torch.bincount(route[batch.is_customer[row]]).argmax())
    slots = torch.nonzero(route == longest).squeeze(1)
    slots = slots[batch.pos[row, slots].argsort()]
    depot = batch.coords[row, :1]
    return RouteBatch.from_walk(torch.cat([depot, batch.coords[row, slots], depot])[None])


def encoding_matrix(pe: PositionalEncoding, walk: RouteBatch) -> tuple[np.ndarray, str]:
    """What the heatmap shows for ``pe`` on a walk, and its title."""
    with torch.no_grad():
        matrix, what = heatmap(pe, pe.eval()(walk))
    return matrix.numpy(), what


def cosine_similarity(x: np.ndarray) -> np.ndarray:
    norm = np.linalg.norm(x, axis=-1, keepdims=True)
    unit = x / np.maximum(norm, 1e-9)
    return unit @ unit.T


def plot_heatmap(pe: PositionalEncoding, name: str, walk: RouteBatch, path: Path) -> Path:
    plt = _pyplot()
    matrix, what = encoding_matrix(pe, walk)
    fig, ax = plt.subplots(figsize=(7, 5))
    image = ax.imshow(matrix, aspect="auto", cmap="viridis")
    fig.colorbar(image, ax=ax)
    ax.set_title(f"{name}: {what}, longest route as a closed walk")
    ax.set_ylabel("position i (depot at 0 and L)")
    ax.set_xlabel("channel" if KINDS[pe.kind].channels else "position j")
    return save_png(fig, path, dpi=110)


def plot_similarity(pe: PositionalEncoding, name: str, walk: RouteBatch, path: Path) -> Path:
    if node_channels(pe) == 0:
        raise ValueError(f"'similarity' needs a node encoding with channels; {name} is a "
                         f"{pe.kind} encoding of width {pe.out_dim}")
    plt = _pyplot()
    with torch.no_grad():
        sim = cosine_similarity(pe.eval()(walk)[0].numpy())
    fig, ax = plt.subplots(figsize=(6, 5))
    image = ax.imshow(sim, cmap="coolwarm", vmin=-1, vmax=1)
    fig.colorbar(image, ax=ax)
    ax.set_title(f"{name}: cosine similarity S[i, j]; S[0, L] = {sim[0, -1]:.3f}")
    ax.set_xlabel("position j")
    ax.set_ylabel("position i")
    return save_png(fig, path, dpi=110)


def plot_channels(walk: RouteBatch, dim: int, path: Path, channels: tuple[int, ...] = (0, 1, 2, 5)
                  ) -> Path:
    plt = _pyplot()
    with torch.no_grad():
        ipe = get_pe("ipe", dim)(walk)[0].numpy()
    cum, index = walk.cum[0].numpy(), walk.pos[0].numpy()
    fig, axes = plt.subplots(1, 2, figsize=(12, 4.5), sharey=True)
    for c in channels:
        label = f"channel {c} ({'sin' if c % 2 == 0 else 'cos'}, harmonic {c // 2 + 1})"
        axes[0].plot(cum, ipe[:, c], "-o", ms=3, label=label)
        axes[1].plot(index, ipe[:, c], "-o", ms=3, label=label)
    axes[0].set_title("IPE against cumulative distance d_i: smooth (D1)")
    axes[0].set_xlabel("cumulative distance d_i")
    axes[1].set_title("IPE against the index i: irregular steps")
    axes[1].set_xlabel("within-route index i")
    axes[0].legend(fontsize=8)
    return save_png(fig, path, dpi=110)


def plot_angles(batch: RouteBatch, path: Path, row: int = 0) -> Path:
    plt = _pyplot()
    customer = batch.is_customer[row].numpy()
    theta = batch.theta[row].numpy()[customer]
    radius = np.linalg.norm((batch.coords[row] - batch.coords[row, :1]).numpy(), axis=-1)[customer]
    route = batch.route[row].numpy()[customer]
    fig = plt.figure(figsize=(6.5, 6))
    ax = fig.add_subplot(projection="polar")
    cmap = plt.get_cmap("tab20")
    for r in np.unique(route):
        on = route == r
        ax.scatter(theta[on], radius[on], s=25, color=cmap((r - 1) % 20), label=f"route {r}")
    ax.set_title("XPE input: depot-relative angle theta_v per route")
    if len(np.unique(route)) <= 20:
        ax.legend(loc="upper left", bbox_to_anchor=(1.05, 1.0), fontsize=7)
    return save_png(fig, path, dpi=110)


def plot_pca(pe: PositionalEncoding, name: str, batch: RouteBatch, path: Path, row: int = 0
             ) -> Path:
    if node_channels(pe) < 2:
        raise ValueError(f"'pca' needs a node encoding with 2+ channels; {name} is a {pe.kind} "
                         f"encoding of width {pe.out_dim}")
    plt = _pyplot()
    customer = batch.is_customer[row]
    with torch.no_grad():
        h = pe.eval()(batch)[row][customer].double()  # [n, D]
    centred = h - h.mean(0, keepdim=True)
    _, _, v = torch.linalg.svd(centred, full_matrices=False)
    xy = (centred @ v[:2].T).numpy()
    route = batch.route[row][customer].numpy()
    order = batch.pos[row][customer].numpy()
    fig, ax = plt.subplots(figsize=(7, 6))
    cmap = plt.get_cmap("tab20")
    for r in np.unique(route):
        on = route == r
        ax.scatter(xy[on, 0], xy[on, 1], s=30, color=cmap((r - 1) % 20), label=f"route {r}")
        for (x, y), o in zip(xy[on], order[on], strict=True):
            ax.annotate(str(o), (x, y), fontsize=6)
    ax.set_title(f"{name}: 2-D PCA of the customers, coloured by route (labels: position)")
    ax.set_xlabel("PC 1")
    ax.set_ylabel("PC 2")
    if len(np.unique(route)) <= 20:
        ax.legend(loc="upper left", bbox_to_anchor=(1.02, 1.0), fontsize=7)
    return save_png(fig, path, dpi=110)


def plot_paths(name: str, plots: tuple[str, ...], out_dir: Path) -> list[Path]:
    """The file of each of ``plots`` of encoding ``name`` (channels and angles show IPE and
    XPE whatever ``name`` is)."""
    return [out_dir / f"{ {'channels': 'ipe', 'angles': 'xpe'}.get(plot, name)}-{plot}.png"
            for plot in plots]


def plot_pe(batch: RouteBatch, name: str, plots: tuple[str, ...], out_dir: Path, dim: int = 32,
            num_heads: int = 8, seed: int = 0) -> list[Path]:
    """Draw each of ``plots`` for encoding ``name`` on solution row 0; returns the PNG paths
    (``<out_dir>/<name>-<plot>.png``)."""
    torch.manual_seed(seed)
    pe = build_pe(name, dim, dim // num_heads, num_heads)
    walk = longest_route_walk(batch)
    paths = []
    for plot, path in zip(plots, plot_paths(name, plots, out_dir), strict=True):
        if plot == "heatmap":
            paths.append(plot_heatmap(pe, name, walk, path))
        elif plot == "similarity":
            paths.append(plot_similarity(pe, name, walk, path))
        elif plot == "channels":
            paths.append(plot_channels(walk, dim, path))
        elif plot == "angles":
            paths.append(plot_angles(batch, path))
        elif plot == "pca":
            paths.append(plot_pca(pe, name, batch, path))
        else:
            raise ValueError(f"unknown plot {plot!r}; choose from {', '.join(PLOTS)}")
    return paths
