"""Neural deconstruction search (NDS) policy with a pluggable positional encoding.

The policy looks at the *current solution* of a CVRP / VRPTW / PCVRP instance and proposes
which customers to remove; the search engine (:mod:`routecli.search.asa`) repairs each
proposal and keeps the best (PE paper Section 5 Layer 2, Appendices B, E; Table 7 sizes).
Top to bottom:

1. ``routecli.nds.features.node_features``: per node ``[x, y, demand/Q, load(route)/Q, is_depot]`` (+ VRPTW
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

from routecli.nds.options import PROBLEMS
from routecli.pe.base import PositionalEncoding
from routecli.pe.batch import RouteBatch
from routecli.pe.encoder import PEEncoder
from routecli.pe.kinds import build_pe as kind_build_pe
from routecli.train import checkpoint as ckpt

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




def build_pe(config: NDSConfig) -> PositionalEncoding:
    """The configured PE at the width the encoder expects (rotary: the head width)."""
    return kind_build_pe(config.pe, config.pe_dim, config.embed_dim // config.num_heads,
                         config.num_heads)


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
        rows = torch.arange(h.shape[0], device=h.device)[:, None]
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
        to_first = to_last = emb.new_zeros(a, m, v)
        context = (emb * allowed[..., None]).sum(1) / count  # [A, E]
        hidden = context[:, None].expand(a, m, e).reshape(a * m, e)  # [A*M, E]
        x = self.start.expand(a * m, e)  # [A*M, E]
        free = allowed[:, None].expand(a, m, v).clone()  # [A, M, V]
        rows = torch.arange(a, device=emb.device)[:, None].expand(a, m)  # [A, M]
        chosen, logp = [], emb.new_zeros(a, m)
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
                u = torch.rand(a, m, v, generator=generator, device=emb.device).clamp_(1e-20, 1.0)
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


def unit_distance(coords: np.ndarray, device: str | torch.device = "cpu") -> torch.Tensor:
    """Distances between unit-square coordinates, the decoder's distance bias input (the
    same on every symmetric image). ``[..., V, 2] -> [..., V, V]`` float32 on ``device``."""
    c = torch.as_tensor(coords, dtype=torch.float32, device=device)
    return torch.cdist(c, c, compute_mode="donot_use_mm_for_euclid_dist")


def sample_latent(copies: int, rollouts: int, dim: int,
                  generator: torch.Generator | None = None) -> torch.Tensor:
    """Random binary rollout latents ``z``, on the generator's device (the CPU without
    one). ``[A, M, Z]``."""
    device = generator.device if generator is not None else torch.device("cpu")
    return torch.randint(0, 2, (copies, rollouts, dim), generator=generator, device=device).float()




# ------------------------------------------------------------------------------------------
# checkpoints (the shared format of routecli.train.checkpoint)

KIND = "nds"


def to_checkpoint(model: NDSPolicy, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    """Shippable form: config, float32 weights, metadata (plain types only), digest."""
    return ckpt.policy_checkpoint(KIND, model.config.to_dict(), model.state_dict(), meta)


def load_policy(path: str | Path, expect: dict[str, Any] | None = None) -> NDSPolicy:
    """Rebuild an :class:`NDSPolicy` from a policy or training checkpoint, in eval mode (its
    configuration holding ``expect``: :func:`routecli.train.checkpoint.load`)."""
    return ckpt.load_model(path, KIND, lambda c: NDSPolicy(NDSConfig(**c)), "NDS",
                           expect=expect)
