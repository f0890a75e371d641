"""DACT-style improvement policy whose positional component is any :mod:`routecli.pe` encoding.

DACT (Ma et al. 2021, dual-aspect collaborative transformer) keeps two embeddings per node of
the current solution: a node aspect from the instance's features and a positional aspect from
the node's place in the solution, and lets each aspect attend with the other's scores. The PE
paper's Layer 1 (Section 5.1, Table 4) retrains this backbone with each encoding in place of
DACT's cyclic PE; this module is that backbone. Shapes: ``B`` instances, ``V`` slots of the giant
tour, ``E`` embedding width, ``H`` heads of width ``d = E / H``.

1. Embeddings::

       h0 = W_h x                         [B, V, E]  node aspect: static features only
       g0 = FF([xy || pad(PE(s))])        [B, V, E]  positional aspect (PE paper Sec. 4.3)

   A node PE is zero-padded to ``2 * pe_dim`` channels, so ``FF`` has the same shape for every
   encoding (NoPE gives ``g0 = FF([xy || 0])``). A bias PE is added to the positional-aspect
   attention logits of every layer; a rotary PE rotates the positional-aspect queries and keys
   of every layer (PE paper Appendix D). Nothing else depends on the encoding.
2. Dual-aspect collaborative attention, ``L`` post-norm layers, per head::

       A_h = softmax(Q_h K_h^T / sqrt(d))          A_g = softmax(Q_g K_g^T / sqrt(d) + bias)
       h' = W_o^h [A_h V_h || A_g V~_h]            g' = W_o^g [A_h V~_g || A_g V_g]
       h = LN(h + h');  h = LN(h + FF_h(h))        g = LN(g + g');  g = LN(g + FF_g(g))

3. Decoder (max-pooling, multi-head compatibility, feed-forward aggregation)::

       h~ = W_1 h + W_2 max_v h                    g~ = W_3 g + W_4 max_v g
       c_h[u, v] = (W_q h~_u) . (W_k h~_v) / sqrt(d)   per head; c_g likewise     [B, V, V, 2H]
       score[op, u, v] = MLP([c_h || c_g])[op]                                   [B, 3, V, V]
       logits = C tanh(score), infeasible moves -inf, one softmax over all (op, u, v)

4. Critic: one attention layer over the detached ``[h || g]``, mean pooling, and an MLP that
   also reads the current and best cost, gives the state value for PPO.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
import torch.nn.functional as F
from torch import Tensor, nn

from routecli.improve.env import FEATURES, Observation
from routecli.improve.moves import OPERATORS, unflatten_move
from routecli.pe.base import PositionalEncoding, apply_rotary, pad_to
from routecli.pe.batch import RouteBatch
from routecli.pe.kinds import build_pe as kind_build_pe
from routecli.pe.kinds import model_inputs, node_channels
from routecli.pe.registry import PE_REGISTRY, UnknownPEError, canonical_pe
from routecli.train import checkpoint as ckpt

PE_ALIASES = {"n2s": "dact"}  # N2S inherits DACT's cyclic PE (PE paper Appendix D)


# --------------------------------------------------------------------------------------------
# the positional component


def parse_pe(spec: str) -> tuple[str, dict[str, Any]]:
    """``NAME[:key=value,...]`` -> registry key and options, e.g.
    ``ipe_inv_xpe:xpe_aggregate=mean`` (Table 11's per-route XPE). ``n2s`` means ``dact``."""
    name, _, rest = spec.partition(":")
    options: dict[str, Any] = {}
    for item in filter(None, rest.split(",")):
        key, eq, value = item.partition("=")
        if not eq:
            raise ValueError(f"PE option {item!r} of {spec!r} is not key=value")
        options[key.strip()] = int(value) if value.strip().lstrip("-").isdigit() else value.strip()
    key = canonical_pe(PE_ALIASES.get(name.strip().lower(), name.strip()))
    if key not in PE_REGISTRY:
        raise UnknownPEError(name)
    return key, options


def build_pe(spec: str, pe_dim: int, num_heads: int, head_dim: int) -> PositionalEncoding:
    """The encoding ``spec`` at ``pe_dim`` (a rotary one at the head width ``head_dim``)."""
    key, options = parse_pe(spec)
    return kind_build_pe(key, pe_dim, head_dim, num_heads, **options)


class PositionalInput(nn.Module):
    """Runs the PE and routes its output by kind: ``(node channels [B, V, 2 pe_dim], bias
    [B, H|1, V, V] | None, rotary angles [B, V, d/2] | None)``; node channels are zero for a
    bias or rotary PE. The PE's own parameters (APE, RPE, SPD, DACT tables) live in ``pe`` and
    are drawn from a forked random state, so with one seed every other weight starts equal."""

    def __init__(self, spec: str, pe_dim: int, num_heads: int, head_dim: int):
        super().__init__()
        with torch.random.fork_rng():  # a learnable PE leaves the rest of the model's init alone
            self.pe = build_pe(spec, pe_dim, num_heads, head_dim)
        self.width = 2 * pe_dim
        if node_channels(self.pe) > self.width:
            raise ValueError(f"PE {spec!r} is {self.pe.out_dim} wide, more than 2 * pe_dim")

    def forward(self, batch: RouteBatch) -> tuple[Tensor, Tensor | None, Tensor | None]:
        inputs = model_inputs(self.pe, self.pe(batch))
        node = (batch.coords.new_zeros(batch.batch_size, batch.num_slots, self.width)
                if inputs.node is None else pad_to(inputs.node, self.width))
        return node, inputs.bias, inputs.angles


# --------------------------------------------------------------------------------------------
# shared pieces


def split_heads(x: Tensor, heads: int) -> Tensor:
    """``[B, V, H d] -> [B, H, V, d]``."""
    b, v, e = x.shape
    return x.view(b, v, heads, e // heads).transpose(1, 2)


def merge_heads(x: Tensor) -> Tensor:
    """``[B, H, V, d] -> [B, V, H d]``."""
    b, h, v, d = x.shape
    return x.transpose(1, 2).reshape(b, v, h * d)


def mlp(sizes: list[int]) -> nn.Sequential:
    layers: list[nn.Module] = []
    for a, b in zip(sizes[:-1], sizes[1:], strict=True):
        layers += [nn.Linear(a, b), nn.ReLU()]
    return nn.Sequential(*layers[:-1])


def feed_forward(width: int, hidden: int) -> nn.Sequential:
    return mlp([width, hidden, width])


@dataclass(frozen=True)
class Decision:
    """A policy's output for a batch: ``action`` ``[B, 3]``, its ``log_prob`` ``[B]``, the
    policy ``entropy`` ``[B]`` and the critic's ``value`` ``[B]``."""

    action: Tensor
    log_prob: Tensor
    entropy: Tensor
    value: Tensor


def categorical(logits: Tensor, generator: torch.Generator | None = None,
                chosen: Tensor | None = None) -> tuple[Tensor, Tensor, Tensor]:
    """Sample (Gumbel-max) or score ``chosen`` from ``logits`` ``[B, K]`` (``-inf`` = masked):
    ``(index [B], log-probability [B], entropy [B])``."""
    log_p = torch.log_softmax(logits, dim=-1)
    if chosen is None:
        u = torch.rand(logits.shape, generator=generator, device=logits.device).clamp_(1e-20, 1.0)
        chosen = (log_p - torch.log(-torch.log(u))).argmax(-1)
    p = log_p.exp()
    entropy = -(p * log_p.masked_fill(p == 0, 0.0)).sum(-1)
    return chosen, log_p.gather(1, chosen[:, None]).squeeze(1), entropy


class Critic(nn.Module):
    """Value of a state: attention + FF over detached embeddings ``[B, V, W]``, mean pooling,
    MLP over ``[pooled || cost || best]``. ``[B]``."""

    def __init__(self, width: int, heads: int, hidden: int):
        super().__init__()
        self.heads = heads
        self.qkv = nn.Linear(width, 3 * width, bias=False)
        self.out = nn.Linear(width, width)
        self.norm1 = nn.LayerNorm(width)
        self.ff = feed_forward(width, hidden)
        self.norm2 = nn.LayerNorm(width)
        self.value = mlp([width + 2, hidden, hidden, 1])

    def forward(self, x: Tensor, cost: Tensor, best: Tensor) -> Tensor:
        q, k, v = (split_heads(t, self.heads) for t in self.qkv(x).chunk(3, -1))
        x = self.norm1(x + self.out(merge_heads(F.scaled_dot_product_attention(q, k, v))))
        x = self.norm2(x + self.ff(x))  # [B, V, W]
        return self.value(torch.cat([x.mean(1), cost[:, None], best[:, None]], -1)).squeeze(-1)


# --------------------------------------------------------------------------------------------
# DACT


@dataclass(frozen=True)
class DACTConfig:
    """Architecture (DACT's published sizes by default: E = 64, 4 heads, 3 layers, FF 64,
    logits clipped to ``C tanh``, C = 6). ``pe_dim``: width of one PE component (IPE+XPE fills
    ``2 * pe_dim``). ``operators``: the move types the policy may choose."""

    problem: str = "cvrp"
    pe: str = "ipe_inv_xpe"
    embed_dim: int = 64
    num_heads: int = 4
    num_layers: int = 3
    ff_dim: int = 64
    pe_dim: int = 32
    clip: float = 6.0
    critic_heads: int = 4
    operators: tuple[str, ...] = OPERATORS

    def to_dict(self) -> dict[str, Any]:
        return {**asdict(self), "operators": list(self.operators)}

    @classmethod
    def from_dict(cls, data: dict[str, Any]) -> DACTConfig:
        return cls(**{**data, "operators": tuple(data.get("operators", OPERATORS))})


class DualAspectLayer(nn.Module):
    """One DAC-Att layer (module docstring, step 2). ``h, g`` ``[B, V, E]``."""

    def __init__(self, embed_dim: int, heads: int, ff_dim: int):
        super().__init__()
        self.heads = heads
        e = embed_dim
        self.qk_node = nn.Linear(e, 2 * e, bias=False)
        self.qk_pos = nn.Linear(e, 2 * e, bias=False)
        self.v_node = nn.Linear(e, 2 * e, bias=False)  # V_h (own scores) and V~_h (g's scores)
        self.v_pos = nn.Linear(e, 2 * e, bias=False)  # V~_g (h's scores) and V_g (own scores)
        self.out_node = nn.Linear(2 * e, e)
        self.out_pos = nn.Linear(2 * e, e)
        self.norm_node1, self.norm_pos1 = nn.LayerNorm(e), nn.LayerNorm(e)
        self.ff_node, self.ff_pos = feed_forward(e, ff_dim), feed_forward(e, ff_dim)
        self.norm_node2, self.norm_pos2 = nn.LayerNorm(e), nn.LayerNorm(e)

    def forward(self, h: Tensor, g: Tensor, bias: Tensor | None,
                angles: Tensor | None) -> tuple[Tensor, Tensor]:
        q_h, k_h = (split_heads(t, self.heads) for t in self.qk_node(h).chunk(2, -1))
        q_g, k_g = (split_heads(t, self.heads) for t in self.qk_pos(g).chunk(2, -1))
        if angles is not None:  # rotary PE: rotate the positional aspect's queries and keys
            q_g, k_g = apply_rotary(q_g, angles), apply_rotary(k_g, angles)
        vh_own, vh_cross = (split_heads(t, self.heads) for t in self.v_node(h).chunk(2, -1))
        vg_cross, vg_own = (split_heads(t, self.heads) for t in self.v_pos(g).chunk(2, -1))
        # A_h applied to [V_h || V~_g] and A_g to [V~_h || V_g], each in one fused call
        by_node = F.scaled_dot_product_attention(q_h, k_h, torch.cat([vh_own, vg_cross], -1))
        by_pos = F.scaled_dot_product_attention(q_g, k_g, torch.cat([vh_cross, vg_own], -1),
                                                attn_mask=bias)  # [B, H, V, 2d]
        d = vh_own.shape[-1]
        h_new = self.out_node(torch.cat([merge_heads(by_node[..., :d]),
                                         merge_heads(by_pos[..., :d])], -1))  # [B, V, E]
        g_new = self.out_pos(torch.cat([merge_heads(by_node[..., d:]),
                                        merge_heads(by_pos[..., d:])], -1))
        h, g = self.norm_node1(h + h_new), self.norm_pos1(g + g_new)
        return self.norm_node2(h + self.ff_node(h)), self.norm_pos2(g + self.ff_pos(g))


class MoveDecoder(nn.Module):
    """Scores of every pairwise move ``[B, 3, V, V]`` (module docstring, step 3)."""

    def __init__(self, embed_dim: int, heads: int, hidden: int = 32):
        super().__init__()
        e = embed_dim
        self.heads = heads
        self.node_h, self.pool_h = nn.Linear(e, e, bias=False), nn.Linear(e, e, bias=False)
        self.node_g, self.pool_g = nn.Linear(e, e, bias=False), nn.Linear(e, e, bias=False)
        self.qk_h = nn.Linear(e, 2 * e, bias=False)
        self.qk_g = nn.Linear(e, 2 * e, bias=False)
        self.aggregate = mlp([2 * heads, hidden, hidden, len(OPERATORS)])

    def compat(self, x: Tensor, qk: nn.Linear) -> Tensor:
        q, k = (split_heads(t, self.heads) for t in qk(x).chunk(2, -1))
        return q @ k.transpose(-1, -2) / math.sqrt(q.shape[-1])  # [B, H, V, V]

    def forward(self, h: Tensor, g: Tensor) -> Tensor:
        h = self.node_h(h) + self.pool_h(h.max(1).values)[:, None]  # [B, V, E]
        g = self.node_g(g) + self.pool_g(g.max(1).values)[:, None]
        c = torch.cat([self.compat(h, self.qk_h), self.compat(g, self.qk_g)], 1)  # [B, 2H, V, V]
        return self.aggregate(c.permute(0, 2, 3, 1)).permute(0, 3, 1, 2)  # [B, 3, V, V]


class DACT(nn.Module):
    """The backbone (module docstring). ``forward(obs, action=None, generator=None)`` samples
    a move (or scores ``action``) and evaluates the state."""

    kind = "pairwise"

    def __init__(self, config: DACTConfig):
        super().__init__()
        if config.problem not in FEATURES:
            raise ValueError(f"DACT here solves {', '.join(FEATURES)}, not {config.problem!r}")
        self.config = config
        e, heads = config.embed_dim, config.num_heads
        self.embed_node = nn.Linear(FEATURES[config.problem], e, bias=False)
        self.positional = PositionalInput(config.pe, config.pe_dim, heads, e // heads)
        self.embed_pos = mlp([2 + 2 * config.pe_dim, e, e])
        self.layers = nn.ModuleList(DualAspectLayer(e, heads, config.ff_dim)
                                    for _ in range(config.num_layers))
        self.decoder = MoveDecoder(e, heads)
        self.critic = Critic(2 * e, config.critic_heads, config.ff_dim)

    def encode(self, obs: Observation) -> tuple[Tensor, Tensor]:
        """Node and positional embeddings of the current solutions, ``[B, V, E]`` each."""
        h = self.embed_node(obs.features)  # [B, V, E]
        channels, bias, angles = self.positional(obs.route)
        g = self.embed_pos(torch.cat([obs.features[..., :2], channels], -1))  # [B, V, E]
        for layer in self.layers:
            h, g = layer(h, g, bias, angles)
        return h, g

    def forward(self, obs: Observation, action: Tensor | None = None,
                generator: torch.Generator | None = None) -> Decision:
        h, g = self.encode(obs)
        value = self.critic(torch.cat([h, g], -1).detach(), obs.cost, obs.best)
        logits = self.move_logits(obs, h, g)  # [B, 3, V, V]
        v = logits.shape[-1]
        chosen = None if action is None else (action[:, 0] * v + action[:, 1]) * v + action[:, 2]
        index, log_prob, entropy = categorical(logits.flatten(1), generator, chosen)
        move = unflatten_move(index, v)
        return Decision(move, log_prob, entropy, value)

    def move_logits(self, obs: Observation, h: Tensor | None = None,
                    g: Tensor | None = None) -> Tensor:
        """The actor's logits of every move ``(op, u, v)``, ``-inf`` where not allowed,
        ``[B, 3, V, V]`` (``h, g``: :meth:`encode`'s output when already computed)."""
        if obs.allowed is None:
            raise ValueError("DACT needs the pairwise move mask (an Env of kind 'pairwise')")
        if h is None or g is None:
            h, g = self.encode(obs)
        scores = self.config.clip * torch.tanh(self.decoder(h, g))  # [B, 3, V, V]
        return scores.masked_fill(~obs.allowed, float("-inf"))


# --------------------------------------------------------------------------------------------
# checkpoints (the shared format of routecli.train.checkpoint)

KIND = "dact"


def to_checkpoint(model: DACT, meta: dict[str, Any] | None = None) -> dict[str, Any]:
    return ckpt.policy_checkpoint(KIND, model.config.to_dict(), model.state_dict(), meta)


def load_model(path: str | Path) -> DACT:
    """Rebuild a :class:`DACT` from its checkpoint, in eval mode."""
    return ckpt.load_model(path, KIND, lambda c: DACT(DACTConfig.from_dict(c)), "DACT")
