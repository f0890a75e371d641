"""N2S (Ma et al. 2022, neural neighborhood search) for PDTSP with a pluggable positional
component: ``--pe n2s`` is its own cyclic PE (DACT's), ``--pe ipe_xpe`` is the PE paper's
HA-N2S (Section 5.2, Table 6; Appendix I). An action removes one pickup-delivery request and
re-inserts it: ``(r, i, j)``, pickup after ``i``, delivery after ``j``
(:func:`routecli.improve.moves.pair_reinsert`). Shapes: ``B`` instances, ``V = 2n + 1`` nodes,
``E`` width, ``H`` heads of width ``d``.

1. Embeddings, as in :mod:`routecli.improve.model`::

       h0 = W_h x                     [B, V, E]   node features [x, y, pickup, delivery, depot]
       g0 = FF([xy || pad(PE(v))])    [B, V, E]   the positional component, any routecli.pe PE
       S_g = Q_g K_g^T / sqrt(d) + bias          [B, H, V, V]  positional attention scores,
                                                  computed once (rotary PE: Q_g, K_g rotated)

2. Synthesis attention, ``L`` post-norm layers: the node aspect's scores and the positional
   scores are fused per pair by a small MLP before the softmax::

       S_h = Q_h K_h^T / sqrt(d);   A = softmax(MLP([S_h || S_g]))    (2H -> 2H -> H per pair)
       h = LN(h + W_o A V_h);  h = LN(h + FF(h))

3. Two decoders on ``h~ = W_1 h + W_2 max_v h``:

   - removal: per node ``v`` and head, the compatibility change of cutting ``v`` out of the tour,
     ``s(v) = q(pred v).k(v) + q(v).k(succ v) - q(pred v).k(succ v)``; request ``r``:
     ``MLP([s(p_r) || s(d_r) || sig_r])`` with ``sig_r`` = removed in each of the last 3 steps
     and the removal frequency over the window; ``C tanh``; the previous request is masked.
   - reinsertion of the removed ``p, d``: ``MLP([c1(p, i) || c2(p, succ i) || c1(d, j) ||
     c2(d, succ j)])`` for every ``(i, j)`` (``c1, c2``: per-head compatibilities), ``C tanh``,
     infeasible ``(i, j)`` masked.

4. Critic on the detached ``h`` (as DACT's).
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn

from routecli.improve.env import FEATURES, Observation
from routecli.improve.model import (
    Critic,
    Decision,
    PositionalInput,
    categorical,
    feed_forward,
    merge_heads,
    mlp,
    split_heads,
)
from routecli.improve.moves import predecessors, reinsertion_mask, successors
from routecli.pe.base import apply_rotary
from routecli.train import checkpoint as ckpt


@dataclass(frozen=True)
class N2SConfig:
    """N2S's published sizes: E = 128, 4 heads, 3 layers, FF 128, ``C = 6``."""

    pe: str = "n2s"
    embed_dim: int = 128
    num_heads: int = 4
    num_layers: int = 3
    ff_dim: int = 128
    pe_dim: int = 64
    clip: float = 6.0
    critic_heads: int = 4

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)


class SynthesisLayer(nn.Module):
    """One synthesis-attention layer (module docstring, step 2). ``h`` ``[B, V, E]``."""

    def __init__(self, embed_dim: int, heads: int, ff_dim: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(embed_dim, 3 * embed_dim, bias=False)
        self.synthesis = mlp([2 * heads, 2 * heads, heads])
        self.out = nn.Linear(embed_dim, embed_dim)
        self.norm1, self.norm2 = nn.LayerNorm(embed_dim), nn.LayerNorm(embed_dim)
        self.ff = feed_forward(embed_dim, ff_dim)

    def forward(self, h: Tensor, pos_scores: Tensor) -> Tensor:
        q, k, v = (split_heads(t, self.heads) for t in self.qkv(h).chunk(3, -1))
        scores = q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])  # [B, H, V, V]
        fused = self.synthesis(torch.cat([scores, pos_scores], 1).permute(0, 2, 3, 1))
        attention = torch.softmax(fused.permute(0, 3, 1, 2), dim=-1)  # [B, H, V, V]
        h = self.norm1(h + self.out(merge_heads(attention @ v)))
        return self.norm2(h + self.ff(h))


class N2S(nn.Module):
    """The N2S policy (module docstring). ``forward(obs, action=None, generator=None)``."""

    kind = "pair"

    def __init__(self, config: N2SConfig):
        super().__init__()
        self.config = config
        e, heads = config.embed_dim, config.num_heads
        self.heads = heads
        self.embed_node = nn.Linear(FEATURES["pdtsp"], e, bias=False)
        self.positional = PositionalInput(config.pe, config.pe_dim, heads, e // heads)
        self.embed_pos = mlp([2 + 2 * config.pe_dim, e, e])
        self.qk_pos = nn.Linear(e, 2 * e, bias=False)
        self.layers = nn.ModuleList(SynthesisLayer(e, heads, config.ff_dim)
                                    for _ in range(config.num_layers))
        self.node, self.pool = nn.Linear(e, e, bias=False), nn.Linear(e, e, bias=False)
        self.qk_removal = nn.Linear(e, 2 * e, bias=False)
        self.removal = mlp([2 * heads + 4, 32, 32, 1])
        self.qk_before = nn.Linear(e, 2 * e, bias=False)  # inserted node vs the node it follows
        self.qk_after = nn.Linear(e, 2 * e, bias=False)  # inserted node vs the node after that
        self.reinsertion = mlp([4 * heads, 32, 32, 1])
        self.critic = Critic(e, config.critic_heads, config.ff_dim)

    def encode(self, obs: Observation) -> Tensor:
        """Node embeddings of the current tours. ``[B, V, E]``."""
        h = self.embed_node(obs.features)  # [B, V, E]
        channels, bias, angles = self.positional(obs.route)
        g = self.embed_pos(torch.cat([obs.features[..., :2], channels], -1))  # [B, V, E]
        q_g, k_g = (split_heads(t, self.heads) for t in self.qk_pos(g).chunk(2, -1))
        if angles is not None:
            q_g, k_g = apply_rotary(q_g, angles), apply_rotary(k_g, angles)
        pos_scores = q_g @ k_g.transpose(-1, -2) / math.sqrt(q_g.shape[-1])  # [B, H, V, V]
        if bias is not None:
            pos_scores = pos_scores + bias
        for layer in self.layers:
            h = layer(h, pos_scores)
        return h

    def compat(self, x: Tensor, keys: Tensor, qk: nn.Linear) -> Tensor:
        """Per-head compatibility of nodes ``x`` ``[B, R, E]`` with ``keys`` ``[B, V, E]``.
        ``[B, R, V, H]``."""
        e, d = x.shape[-1], x.shape[-1] // self.heads
        q = qk(x)[..., :e].unflatten(-1, (self.heads, d))[:, :, None]  # [B, R, 1, H, d]
        k = qk(keys)[..., e:].unflatten(-1, (self.heads, d))[:, None]  # [B, 1, V, H, d]
        return (q * k).sum(-1) / math.sqrt(d)

    def decoder_input(self, obs: Observation) -> tuple[Tensor, Tensor]:
        """``h~ = W_1 h + W_2 max_v h`` ``[B, V, E]`` (step 3) and the critic's value ``[B]``."""
        if obs.signature is None:
            raise ValueError("N2S needs the removal signature (an Env of kind 'pair')")
        h = self.encode(obs)
        value = self.critic(h.detach(), obs.cost, obs.best)
        return self.node(h) + self.pool(h.max(1).values)[:, None], value

    def removal_logits(self, h: Tensor, obs: Observation) -> Tensor:
        """Which request to take out: ``C tanh(MLP([s(p_r) || s(d_r) || sig_r]))``, the
        previous request masked. ``[B, n]``."""
        assert obs.signature is not None
        n = obs.requests
        pred, succ = predecessors(obs.order), successors(obs.order)  # [B, V]
        q, k = (split_heads(t, self.heads) for t in self.qk_removal(h).chunk(2, -1))
        q_pred = q.gather(2, pred[:, None, :, None].expand_as(q))  # [B, H, V, d]
        k_succ = k.gather(2, succ[:, None, :, None].expand_as(k))
        cut = ((q_pred * k).sum(-1) + (q * k_succ).sum(-1) - (q_pred * k_succ).sum(-1)) \
            / math.sqrt(q.shape[-1])  # [B, H, V]
        cut = cut.transpose(1, 2)  # [B, V, H]
        pair = torch.cat([cut[:, 1 : n + 1], cut[:, n + 1 :], obs.signature], -1)  # [B, n, 2H+4]
        logits = self.config.clip * torch.tanh(self.removal(pair).squeeze(-1))  # [B, n]
        previous = obs.last[:, 0]
        repeat = (torch.arange(n, device=h.device)[None] == previous[:, None]) & (previous[:, None] >= 0)
        return logits.masked_fill(repeat, float("-inf"))

    def reinsertion_scores(self, h: Tensor, obs: Observation, request: Tensor) -> Tensor:
        """Where the pickup and the delivery of each removed request ``request`` ``[B, R]`` go
        back: ``C tanh(MLP([c1(p, i) || c2(p, succ i) || c1(d, j) || c2(d, succ j)]))``,
        ``-inf`` where not allowed. ``[B, R, V, V]``."""
        _, v, e = h.shape
        n = obs.requests

        def rows(nodes: Tensor) -> Tensor:  # [B, R] -> [B, R, E]
            return h.gather(1, nodes[..., None].expand(-1, -1, e))

        h_next = rows(successors(obs.order))  # [B, V, E]
        p, d = rows(request + 1), rows(request + 1 + n)  # [B, R, E]
        pick = torch.cat([self.compat(p, h, self.qk_before),
                          self.compat(p, h_next, self.qk_after)], -1)  # [B, R, V, 2H]
        drop = torch.cat([self.compat(d, h, self.qk_before),
                          self.compat(d, h_next, self.qk_after)], -1)
        table = torch.cat([pick[:, :, :, None].expand(-1, -1, -1, v, -1),
                           drop[:, :, None].expand(-1, -1, v, -1, -1)], -1)  # [B, R, V, V, 4H]
        scores = self.config.clip * torch.tanh(self.reinsertion(table).squeeze(-1))
        return scores.masked_fill(~reinsertion_mask(obs.order, request, n), float("-inf"))

    def forward(self, obs: Observation, action: Tensor | None = None,
                generator: torch.Generator | None = None) -> Decision:
        h, value = self.decoder_input(obs)
        request, log_p_r, entropy_r = categorical(
            self.removal_logits(h, obs), generator, None if action is None else action[:, 0])
        v = h.shape[1]
        scores = self.reinsertion_scores(h, obs, request[:, None])[:, 0]  # [B, V, V]
        chosen = None if action is None else action[:, 1] * v + action[:, 2]
        place, log_p_ij, entropy_ij = categorical(scores.flatten(1), generator, chosen)
        move = torch.stack([request, place // v, place % v], 1)
        return Decision(move, log_p_r + log_p_ij, entropy_r + entropy_ij, value)

    def move_logits(self, obs: Observation) -> Tensor:
        """The log-probability of every move ``(r, i, j)``, ``log P(r) + log P(i, j | r)``,
        ``-inf`` where not allowed (the moves of :func:`routecli.improve.moves.pair_mask`).
        ``[B, n, V, V]``: every request's reinsertion decoded at once, for imitation."""
        h, _ = self.decoder_input(obs)
        every = torch.arange(obs.requests, device=h.device).expand(h.shape[0], -1)  # [B, n]
        scores = self.reinsertion_scores(h, obs, every)  # [B, n, V, V]
        given = scores.flatten(2).log_softmax(-1).view_as(scores)  # log P(i, j | r)
        return self.removal_logits(h, obs).log_softmax(-1)[..., None, None] + given


KIND = "n2s"


def n2s_checkpoint(model: N2S, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    return ckpt.policy_checkpoint(KIND, model.config.to_dict(), model.state_dict(), meta)


def load_n2s(path: str | Path) -> N2S:
    """Rebuild an :class:`N2S` from its checkpoint, in eval mode."""
    return ckpt.load_model(path, KIND, lambda c: N2S(N2SConfig(**c)), "N2S")
