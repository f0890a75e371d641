"""Graph-transformer encodings on the *route graph* (depot plus the arcs of every route, PE
paper Appendix D). They are computed per node id and gathered to slots, so the two depot slots
of a closed walk get the same value.

- ``lap`` (node): ``U_K[v]``, the K (= 8) smallest non-trivial eigenvectors of ``L = D - A``,
  zero-padded to D, signs flipped at random while training (Dwivedi & Bresson 2020).
- ``rwse`` (node): ``[(R^k)_vv]_{k=1..K}`` with ``R = D^-1 A``, K = 8, zero-padded (Dwivedi et
  al. 2021).
- ``spd`` (bias): ``b[min(spd(u, v), cap)]``, a learnable scalar per hop distance on the route
  graph, shared by the heads (Ying et al. 2021).
"""

from __future__ import annotations

import torch
from torch import nn

from routecli.pe.base import PositionalEncoding, masked, pad_to, pair_mask
from routecli.pe.batch import RouteBatch, gather_nodes, node_present, route_graph

# Padding node ids get this Laplacian diagonal: their eigenvalues then sit above every real
# one (a route graph's spectrum is at most 2 * max degree), so they are never selected.
_PAD_EIGENVALUE = 1e6


def laplacian_eigenvectors(adj: torch.Tensor, present: torch.Tensor, k: int) -> torch.Tensor:
    """The ``k`` eigenvectors of ``L = D - A`` after the trivial one, in ascending eigenvalue
    order, per node id. ``adj`` ``[B, N, N]``, ``present`` ``[B, N]`` -> ``[B, N, k]`` (columns
    past the graph's own size are zero). Each vector is defined up to sign, and up to a rotation
    within a repeated eigenvalue (a route graph has them: its petals are symmetric cycles), so
    only sign- and basis-free quantities, such as distances between nodes, are reproducible."""
    lap = torch.diag_embed(adj.sum(-1)) - adj
    lap = lap + torch.diag_embed((~present).double() * _PAD_EIGENVALUE)
    _, vecs = torch.linalg.eigh(lap.double())  # ascending eigenvalues
    vecs = vecs[..., 1 : k + 1] * present[..., None]
    usable = present.sum(1, keepdim=True) - 1  # non-trivial eigenvectors of a connected graph
    keep = torch.arange(vecs.shape[-1], device=vecs.device) < usable[:, :, None]
    return (vecs * keep).float()


class LaplacianPE(PositionalEncoding):
    """Laplacian eigenvector PE of the route graph. ``[B, S, D]`` (first ``k`` channels)."""

    kind = "node"

    def __init__(self, dim: int, num_heads: int = 1, k: int = 8):
        super().__init__(dim, num_heads)
        self.k = k

    def forward(self, batch: RouteBatch) -> torch.Tensor:
        vecs = laplacian_eigenvectors(route_graph(batch), node_present(batch), self.k)
        if self.training:  # eigenvector signs are arbitrary: randomise them per instance
            signs = torch.randint(0, 2, (vecs.shape[0], 1, vecs.shape[-1]), device=vecs.device) * 2 - 1
            vecs = vecs * signs
        return masked(pad_to(gather_nodes(vecs, batch), self.out_dim), batch)


def random_walk_diagonals(adj: torch.Tensor, k: int) -> torch.Tensor:
    """``[(R^t)_vv]_{t=1..k}`` with ``R = D^-1 A`` (isolated nodes: zero rows). ``[B, N, k]``."""
    degree = adj.sum(-1, keepdim=True)
    walk = adj / degree.clamp_min(1.0)
    power = walk
    diagonals = []
    for _ in range(k):
        diagonals.append(torch.diagonal(power, dim1=-2, dim2=-1))
        power = power @ walk
    return torch.stack(diagonals, -1)


class RandomWalkSE(PositionalEncoding):
    """RWSE: return probabilities of 1..k-step random walks on the route graph. ``[B, S, D]``."""

    kind = "node"

    def __init__(self, dim: int, num_heads: int = 1, k: int = 8):
        super().__init__(dim, num_heads)
        self.k = k

    def forward(self, batch: RouteBatch) -> torch.Tensor:
        diag = random_walk_diagonals(route_graph(batch), self.k)
        return masked(pad_to(gather_nodes(diag, batch), self.out_dim), batch)


def hop_distances(adj: torch.Tensor, cap: int) -> torch.Tensor:
    """Shortest-path hop counts between node ids, ``cap`` where farther or unreachable, by
    breadth-first frontier expansion with batched matrix products. ``[B, N, N]`` long."""
    num, n, _ = adj.shape
    dist = torch.full((num, n, n), cap, dtype=torch.long, device=adj.device)
    eye = torch.eye(n, dtype=torch.bool, device=adj.device).expand(num, n, n)
    reached = eye.clone()
    dist[eye] = 0
    for hops in range(1, cap):
        grown = (reached.float() @ adj) > 0
        new = grown & ~reached
        if not new.any():
            break
        dist[new] = hops
        reached |= new
    return dist


class ShortestPathBias(PositionalEncoding):
    """SPD bias (Graphormer): learnable scalar ``b[min(spd(u, v), cap)]`` added to every head's
    logits, ``spd`` the hop distance on the route graph. ``[B, 1, S, S]``."""

    kind = "bias"

    def __init__(self, dim: int = 0, num_heads: int = 1, max_spd: int = 32):
        super().__init__(0, num_heads)
        self.max_spd = max_spd
        self.table = nn.Parameter(torch.randn(max_spd + 1) * 0.02)

    def spd(self, batch: RouteBatch) -> torch.Tensor:
        """Hop distance between the nodes of every slot pair, capped. ``[B, S, S]`` long."""
        hops = hop_distances(route_graph(batch), self.max_spd)
        rows = batch.node[:, :, None].expand(-1, -1, batch.num_slots)
        return hops.gather(1, rows).gather(2, batch.node[:, None, :].expand_as(rows))

    def forward(self, batch: RouteBatch) -> torch.Tensor:
        return self.table[self.spd(batch)][:, None] * pair_mask(batch)
