"""Neural deconstruction search (NDS) policy with a pluggable positional encoding.

The policy looks at the *current solution* of a CVRP / VRPTW / PCVRP instance and proposes
which customers to remove; the search engine (:mod:`routecli.search.asa`) repairs each
proposal and keeps the best (PE paper Section 5 Layer 2, Appendices B, E; Table 7 sizes).
Top to bottom:

1. ``node_features``: per node ``[x, y, demand/Q, load(route)/Q, is_depot]`` (+ VRPTW
   ``ready, due, service, start, slack`` over the horizon; + PCVRP ``prize`` over the
   coordinate span), read from the search engine's arrays, so every feature is unit-free.
2. Encoder: :class:`routecli.pe.encoder.PEEncoder` over the solution, whose positional
   component is any PE of :data:`routecli.pe.registry.PE_REGISTRY` (node PEs are concatenated
   with the features, ``h0 = FF([x || PE(v)])``, bias and rotary PEs enter the attention),
   followed by one message-passing layer along the routes (Table 7 "message passing layers
   1"): ``h_v += MLP([h_v, h_prev, h_next])`` where direction matters (VRPTW, PCVRP) and
   ``h_v += MLP([h_v, h_prev + h_next])`` for CVRP, so that, like the direction-invariant IPE,
   the CVRP policy cannot tell a route from its reversal.
3. Decoder (Appendix E, PolyNet style): a GRU cell fed with the embedding of the last removed
   customer yields ``q_m``; a rollout latent ``z in {0,1}^10`` enters through the polynomial
   head ``q_m += MLP([q_m || z])``; ``logits = C tanh(u - mean(u))`` with ``u = q_m K^T /
   sqrt(d)`` (clipping ``C = 10``), with the depot, unserved customers, padding and customers
   already chosen masked. Centring ``u`` over the selectable nodes changes nothing before the
   clipping (softmax ignores a common shift) but keeps a common shift from saturating the
   ``tanh``, where every node would get the same logit and no gradient: without it, WTA
   training drove the policy into exactly that uniform, gradient-free state.
4. Distance bias (``distance_bias``, our addition, in the spirit of MiLoop's scale-distance
   bias): from the second pick on, ``logits -= sqrt(n) (a_t d(first, v) + b_t d(last, v))``
   with ``d`` on the unit-square coordinates, ``n`` the number of removable customers (so
   ``sqrt(n) d`` is in units of the typical neighbour spacing) and ``a_t, b_t >= 0`` read
   from the decoder state (softplus of a linear map of ``q_m``), so each step and each
   latent chooses how local to stay. Removals that stay close together are what makes
   string and radial ruin work; without the bias a pointer on a CPU budget never learned
   them (its proposals repaired no better than uniform random ones).

Default PE (Section 5.2): the direction-invariant IPE+XPE for CVRP, the direction-aware one
for VRPTW and PCVRP.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import numpy as np
import torch
from torch import nn

from routecli.pe.base import PositionalEncoding
from routecli.pe.batch import RouteBatch
from routecli.pe.encoder import PEEncoder
from routecli.pe.registry import get_pe
from routecli.search.ruin import augment8
from routecli.search.state import (
    DEMAND,
    DUE,
    EARLY,
    LATE,
    LOAD,
    PRIZE,
    READY,
    ROUTE,
    SERVICE,
    SearchProblem,
    SearchState,
)

PROBLEMS = ("cvrp", "vrptw", "pcvrp")
DEFAULT_PE = {"cvrp": "ipe_inv_xpe", "vrptw": "ipe_xpe", "pcvrp": "ipe_xpe"}
BASE_FEATURES = 5
EXTRA_FEATURES = {"cvrp": 0, "vrptw": 5, "pcvrp": 1}


def default_pe(problem: str) -> str:
    """The PE the paper prescribes for ``problem``: reversal-invariant IPE only for CVRP."""
    if problem not in DEFAULT_PE:
        raise ValueError(f"NDS solves {', '.join(PROBLEMS)}, not {problem!r}")
    return DEFAULT_PE[problem]


@dataclass(frozen=True)
class NDSConfig:
    """Architecture (Table 7 sizes by default). ``pe_dim`` is the width of a node PE (IPE+XPE
    is ``2 * pe_dim`` wide); a rotary PE always rotates the head width."""

    problem: str = "cvrp"
    pe: str = "ipe_inv_xpe"
    embed_dim: int = 128
    num_heads: int = 8
    num_layers: int = 2
    ff_dim: int = 512
    pe_dim: int = 32
    poly_dim: int = 256
    latent_dim: int = 10
    clip: float = 10.0
    distance_bias: bool = True

    @property
    def in_dim(self) -> int:
        return BASE_FEATURES + EXTRA_FEATURES[self.problem]

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


# ------------------------------------------------------------------------------------------
# inputs: the current solution as a RouteBatch plus unit-free node features


def solution_batch(problem: SearchProblem, state: SearchState,
                   coords: np.ndarray) -> RouteBatch:
    """The current solution on each of ``A`` coordinate copies ``coords`` ``[A, V, 2]`` (e.g.
    the 8 images of :func:`routecli.search.ruin.augment8`) in node layout. ``[A, V]`` slots."""
    routes = list(state.to_routes().routes)
    if not routes:
        routes = [np.zeros(0, np.int64)]
    demands = problem.node_data[:, DEMAND]
    return RouteBatch.from_routes(list(coords), [routes] * len(coords), [demands] * len(coords))


def node_features(problem: SearchProblem, state: SearchState, coords: np.ndarray) -> torch.Tensor:
    """Per-node features on each coordinate copy. ``[A, V, 2]`` -> ``[A, V, F]`` float32."""
    data = problem.node_data
    v = problem.num_nodes
    route = state.nodes[:, ROUTE]
    served = route >= 0
    capacity = problem.capacity if math.isfinite(problem.capacity) else max(data[:, DEMAND].sum(), 1.0)
    load = np.where(served, state.rstat[np.maximum(route, 0), LOAD], 0.0) / capacity
    depot = np.zeros(v)
    depot[0] = 1.0
    columns = [data[:, DEMAND] / capacity, load, depot]
    if problem.timed:
        horizon = float(data[0, DUE]) if math.isfinite(data[0, DUE]) else 1.0
        start = np.where(served, state.times[:, EARLY], 0.0)
        slack = np.where(served, state.times[:, LATE] - state.times[:, EARLY], 0.0)
        due = np.minimum(data[:, DUE], horizon)
        columns += [data[:, READY] / horizon, due / horizon, data[:, SERVICE] / horizon,
                    start / horizon, slack / horizon]
    if problem.optional:
        coords_span = _span(problem)
        columns.append(data[:, PRIZE] / coords_span)
    shared = np.stack(columns, axis=-1)  # [V, F - 2]
    feats = np.concatenate([coords, np.broadcast_to(shared, (len(coords), *shared.shape))], -1)
    return torch.as_tensor(feats, dtype=torch.float32)  # [A, V, F]


def _span(problem: SearchProblem) -> float:
    coords = problem.instance.metric.coords
    if coords is None:
        return 1.0
    return float((coords.max(axis=0) - coords.min(axis=0)).max()) or 1.0


def removable(problem: SearchProblem, state: SearchState, copies: int) -> torch.Tensor:
    """``[A, V]`` bool: customers the policy may remove (served, never the depot)."""
    ok = state.nodes[:, ROUTE] >= 0
    ok[0] = False
    return torch.as_tensor(ok).expand(copies, -1)


# ------------------------------------------------------------------------------------------
# the policy


def build_pe(config: NDSConfig) -> PositionalEncoding:
    """The configured PE at the width the encoder expects (rotary: the head width)."""
    pe = get_pe(config.pe, config.pe_dim, num_heads=config.num_heads)
    if pe.kind == "rotary":
        pe = get_pe(config.pe, config.embed_dim // config.num_heads, num_heads=config.num_heads)
    return pe


class NDSPolicy(nn.Module):
    """Encoder over the current solution + GRU pointer decoder with a rollout latent."""

    def __init__(self, config: NDSConfig):
        super().__init__()
        if config.problem not in PROBLEMS:
            raise ValueError(f"NDS solves {', '.join(PROBLEMS)}, not {config.problem!r}")
        self.config = config
        e = config.embed_dim
        self.encoder = PEEncoder(config.in_dim, build_pe(config), embed_dim=e,
                                 num_heads=config.num_heads, num_layers=config.num_layers,
                                 ff_dim=config.ff_dim)
        self.directed = config.problem != "cvrp"
        width = 3 * e if self.directed else 2 * e
        self.message = nn.Sequential(nn.Linear(width, e), nn.ReLU(), nn.Linear(e, e))
        self.start = nn.Parameter(torch.zeros(e))
        self.gru = nn.GRUCell(e, e)
        self.query = nn.Linear(e, e, bias=False)
        self.key = nn.Linear(e, e, bias=False)
        self.poly = nn.Sequential(nn.Linear(e + config.latent_dim, config.poly_dim), nn.ReLU(),
                                  nn.Linear(config.poly_dim, e))
        if config.distance_bias:
            # a_t (to the first pick) and b_t (to the last); at initialisation a = 1, b = 0.1:
            # close to radial ruin around the first pick
            self.reach = nn.Linear(e, 2)
            nn.init.zeros_(self.reach.weight)
            with torch.no_grad():
                self.reach.bias.copy_(torch.tensor([1.0, 0.1]).expm1().log())

    def encode(self, feats: torch.Tensor, batch: RouteBatch) -> torch.Tensor:
        """Node embeddings of the current solutions. ``[A, V, F]`` -> ``[A, V, E]``."""
        h = self.encoder(feats, batch)  # [A, V, E]
        rows = torch.arange(h.shape[0])[:, None]
        prev = h[rows, batch.prev.clamp_min(0)] * (batch.prev >= 0)[..., None]  # [A, V, E]
        nxt = h[rows, batch.next.clamp_min(0)] * (batch.next >= 0)[..., None]  # [A, V, E]
        context = [prev, nxt] if self.directed else [prev + nxt]
        h = h + self.message(torch.cat([h, *context], dim=-1))  # [A, V, E]
        return h * batch.mask[..., None]

    def decode(self, emb: torch.Tensor, allowed: torch.Tensor, latent: torch.Tensor, steps: int,
               generator: torch.Generator | None = None, actions: torch.Tensor | None = None,
               distance: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Sample (or, given ``actions``, score) ``M`` removal sequences per instance.

        ``emb`` ``[A, V, E]``, ``allowed`` ``[A, V]`` bool, ``latent`` ``[A, M, Z]``,
        ``distance`` ``[A or 1, V, V]`` between unit-square coordinates (required with
        ``distance_bias``); returns ``actions`` ``[A, M, steps]`` and their summed
        log-probabilities ``[A, M]``.
        """
        a, v, e = emb.shape
        m = latent.shape[1]
        keys = self.key(emb)  # [A, V, E]
        count = allowed.sum(-1, keepdim=True).clamp_min(1)  # [A, 1]
        if self.config.distance_bias:
            if distance is None:
                raise ValueError("this policy has a distance bias: pass the distance matrix")
            distance = distance.expand(a, v, v)  # a view: one matrix may serve every image
        else:
            distance = None  # a policy without the bias ignores it
        spacing = count.float().sqrt()[:, :, None]  # [A, 1, 1]
        # sqrt(n) d(first, v) and sqrt(n) d(last, v), [A, M, V]; unused before the first pick
        to_first = to_last = torch.zeros(a, m, v)
        context = (emb * allowed[..., None]).sum(1) / count  # [A, E]
        hidden = context[:, None].expand(a, m, e).reshape(a * m, e)  # [A*M, E]
        x = self.start.expand(a * m, e)  # [A*M, E]
        free = allowed[:, None].expand(a, m, v).clone()  # [A, M, V]
        rows = torch.arange(a)[:, None].expand(a, m)  # [A, M]
        chosen, logp = [], torch.zeros(a, m)
        for t in range(steps):
            hidden = self.gru(x, hidden)  # [A*M, E]
            q = self.query(hidden).view(a, m, e)  # [A, M, E]
            q = q + self.poly(torch.cat([q, latent], dim=-1))  # [A, M, E]
            scores = torch.einsum("ame,ave->amv", q, keys) / math.sqrt(e)  # [A, M, V]
            centre = (scores * free).sum(-1, keepdim=True) / free.sum(-1, keepdim=True)
            logits = self.config.clip * torch.tanh(scores - centre)  # [A, M, V]
            if self.config.distance_bias and t > 0:
                reach = nn.functional.softplus(self.reach(q))  # [A, M, 2]
                logits = logits - reach[..., :1] * to_first - reach[..., 1:] * to_last
            logits = logits.masked_fill(~free, float("-inf"))
            log_probs = torch.log_softmax(logits, dim=-1)  # [A, M, V]
            if actions is None:  # Gumbel-max sampling: much faster than multinomial on a CPU
                u = torch.rand(a, m, v, generator=generator).clamp_(1e-20, 1.0)
                pick = (log_probs - torch.log(-torch.log(u))).argmax(dim=-1)  # [A, M]
            else:
                pick = actions[:, :, t]
            logp = logp + log_probs.gather(2, pick[..., None]).squeeze(-1)
            free = free.scatter(2, pick[..., None], False)
            chosen.append(pick)
            if distance is not None:
                to_last = distance[rows, pick] * spacing  # [A, M, V]
                if t == 0:
                    to_first = to_last
            x = emb[rows, pick].reshape(a * m, e)  # [A*M, E]
        return torch.stack(chosen, dim=-1), logp  # [A, M, steps], [A, M]

    def forward(self, feats: torch.Tensor, batch: RouteBatch, allowed: torch.Tensor,
                latent: torch.Tensor, steps: int, generator: torch.Generator | None = None,
                actions: torch.Tensor | None = None,
                distance: torch.Tensor | None = None) -> tuple[torch.Tensor, torch.Tensor]:
        """Encode then decode; see :meth:`decode`."""
        return self.decode(self.encode(feats, batch), allowed, latent, steps, generator, actions,
                           distance)


def unit_distance(coords: np.ndarray) -> torch.Tensor:
    """Distances between unit-square coordinates, the decoder's distance bias input (the
    same on every symmetric image). ``[..., V, 2] -> [..., V, V]`` float32."""
    c = torch.as_tensor(coords, dtype=torch.float32)
    return torch.cdist(c, c, compute_mode="donot_use_mm_for_euclid_dist")


def sample_latent(copies: int, rollouts: int, dim: int,
                  generator: torch.Generator | None = None) -> torch.Tensor:
    """Random binary rollout latents ``z``. ``[A, M, Z]``."""
    return torch.randint(0, 2, (copies, rollouts, dim), generator=generator).float()


# ------------------------------------------------------------------------------------------
# checkpoints


def policy_checkpoint(model: NDSPolicy, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """Shippable form: config + float32 state dict + metadata (plain types only)."""
    state = {k: t.detach().float().cpu().clone() for k, t in model.state_dict().items()}
    return {"kind": "nds", "config": model.config.to_dict(), "model": state,
            "meta": dict(meta or {})}


def load_policy(path: str | Path) -> NDSPolicy:
    """Rebuild an :class:`NDSPolicy` from a policy or training checkpoint, in eval mode."""
    data = torch.load(path, map_location="cpu", weights_only=True)
    if data.get("kind") != "nds" or "config" not in data or "model" not in data:
        raise ValueError(f"{path}: not an NDS checkpoint")
    # checkpoints from before the distance bias have no such key
    model = NDSPolicy(NDSConfig(**{"distance_bias": False, **data["config"]}))
    model.load_state_dict(data["model"])
    return model.eval()


# ------------------------------------------------------------------------------------------
# the removal policy the search engine calls


class LearnedRemoval:
    """:class:`routecli.search.ruin.RemovalPolicy` backed by an :class:`NDSPolicy`.

    Each call encodes the current solution on the 8 symmetric images of the instance
    (:func:`routecli.search.ruin.augment8`) and samples ``rollouts / 8`` removal sets per
    image (at least one), each with its own latent ``z``. The encoding is kept while the
    solution stays the same (the search rejected the last proposal), so a rejected
    iteration costs only the decoder: the encoder is about three quarters of a call on a CPU.
    """

    name = "learned"
    kernel: int | None = None

    def __init__(self, model: NDSPolicy, augment: bool = True):
        self.model = model.eval()
        self.augment = augment
        self._images: tuple[SearchProblem, np.ndarray, torch.Tensor] | None = None
        self._encoded: tuple[SearchProblem, bytes, torch.Tensor] | None = None
        self.encodings = 0  # encoder calls so far (the rest of the proposals reused one)

    def images(self, problem: SearchProblem) -> np.ndarray:
        """The coordinate copies the policy reads (cached per problem). ``[A, V, 2]``."""
        if self._images is None or self._images[0] is not problem:  # holding it keeps ids unique
            unit = problem.unit_coords
            self._images = (problem, augment8(unit) if self.augment else unit[None],
                            unit_distance(unit)[None])
        return self._images[1]

    def distance(self, problem: SearchProblem) -> torch.Tensor:
        """Unit-square distances of the problem (cached with the images). ``[1, V, V]``."""
        self.images(problem)
        assert self._images is not None
        return self._images[2]

    @torch.inference_mode()
    def propose(self, problem: SearchProblem, state: SearchState, rng: np.random.Generator,
                k: int, rollouts: int) -> np.ndarray:
        coords = self.images(problem)  # [A, V, 2]
        copies = len(coords)
        allowed = removable(problem, state, copies)  # [A, V]
        steps = min(k, int(allowed[0].sum()))
        if steps == 0:
            return np.full((rollouts, 1), -1, np.int64)
        per_copy = max(1, -(-rollouts // copies))
        generator = torch.Generator().manual_seed(int(rng.integers(2**62)))
        latent = sample_latent(copies, per_copy, self.model.config.latent_dim, generator)
        actions, _ = self.model.decode(self.encode(problem, state), allowed, latent, steps,
                                       generator, distance=self.distance(problem))
        return actions.reshape(-1, steps)[:rollouts].numpy().astype(np.int64)

    @torch.inference_mode()
    def encode(self, problem: SearchProblem, state: SearchState) -> torch.Tensor:
        """Embeddings of ``state`` on the images ``[A, V, E]``, reused while the solution
        (successors, predecessors, routes, positions: everything the features derive from)
        is unchanged."""
        key = state.nodes.tobytes()
        cached = self._encoded
        if cached is not None and cached[0] is problem and cached[1] == key:
            return cached[2]
        coords = self.images(problem)
        emb = self.model.encode(node_features(problem, state, coords),
                                solution_batch(problem, state, coords))
        self._encoded = (problem, key, emb)
        self.encodings += 1
        return emb
