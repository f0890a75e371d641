"""The one adapter from a positional encoding to what a model, or an analysis, consumes.

An encoding's ``kind`` says what its tensor means (:mod:`routecli.pe.base`); :data:`KINDS` says,
per kind and in this one place, how that tensor reaches a model (:class:`PEInputs`: node
channels concatenated before the first projection, an attention-logit bias, rotary angles),
at which width it is built (a node width, or the per-head width it rotates), and how the
analyses read it (per-slot vectors, a heatmap). Models and analyses call :func:`model_inputs`,
:func:`build_pe`, :func:`node_channels` and :func:`slot_vectors`; a new kind is one entry here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

import torch
from torch import Tensor

from routecli.pe.base import PositionalEncoding, apply_rotary
from routecli.pe.registry import PE_REGISTRY, UnknownPEError, canonical_pe, get_pe


@dataclass(frozen=True)
class PEInputs:
    """What a model consumes of one encoding (None where its kind gives nothing)."""

    node: Tensor | None = None  # [B, S, D] channels, concatenated with the node features
    bias: Tensor | None = None  # [B, H|1, S, S] added to every layer's attention logits
    angles: Tensor | None = None  # [B, S, Dh/2] rotating every layer's queries and keys


def _rotated_ones(angles: Tensor) -> Tensor:
    """``R(i) 1``: what rotary angles ``[B, S, Dh/2]`` make of a constant query ``[B, S, Dh]``
    (their inner products are the logits the rotation alone adds)."""
    ones = torch.ones(angles.shape[0], 1, angles.shape[1], 2 * angles.shape[-1],
                      dtype=angles.dtype, device=angles.device)
    return apply_rotary(ones, angles)[:, 0]


def _rotary_pairs(angles: Tensor) -> Tensor:
    rotated = _rotated_ones(angles)
    return (rotated @ rotated.transpose(1, 2))[:, None]


@dataclass(frozen=True)
class Kind:
    """How an encoding of one kind is built, consumed and read."""

    width: Literal["node", "head"]  # built at the node width, or at the per-head width
    inputs: Callable[[Tensor], PEInputs]
    channels: bool  # whether it adds channels to every node's features
    vectors: Callable[[Tensor], Tensor] | None  # per-slot vectors [B, S, D]; None: pairwise
    pairs: Callable[[Tensor], Tensor]  # what it adds between slots i, j: [B, H|1, S, S]
    heatmap: Callable[[Tensor], Tensor]  # the matrix a heatmap shows of the first solution
    heatmap_title: str


KINDS: dict[str, Kind] = {
    "node": Kind("node", lambda out: PEInputs(node=out), True, lambda out: out,
                 lambda out: (out @ out.transpose(1, 2))[:, None], lambda out: out[0],
                 "PE[position, channel]"),
    "bias": Kind("node", lambda out: PEInputs(bias=out), False, None, lambda out: out,
                 lambda out: out[0, 0], "logit bias[i, j] (head 0)"),
    "rotary": Kind("head", lambda out: PEInputs(angles=out), False, _rotated_ones,
                   _rotary_pairs, lambda out: _rotary_pairs(out)[0, 0],
                   "rotary logit <R(i)1, R(j)1>"),
}


def model_inputs(pe: PositionalEncoding, out: Tensor) -> PEInputs:
    """``out = pe(batch)`` as a model consumes it."""
    return KINDS[pe.kind].inputs(out)


def build_pe(name: str, node_dim: int, head_dim: int, num_heads: int,
             **options: Any) -> PositionalEncoding:
    """The registered encoding ``name`` at the width its kind is consumed at: ``node_dim``
    channels, or the per-head width ``head_dim`` it rotates."""
    key = canonical_pe(name)
    if key not in PE_REGISTRY:
        raise UnknownPEError(name)
    width = KINDS[PE_REGISTRY[key].kind].width
    return get_pe(key, head_dim if width == "head" else node_dim, num_heads=num_heads, **options)


def node_channels(pe: PositionalEncoding) -> int:
    """The channels ``pe`` adds to every node's features (0 for a kind that adds none)."""
    return pe.out_dim if KINDS[pe.kind].channels else 0


def slot_vectors(pe: PositionalEncoding, out: Tensor) -> Tensor | None:
    """Per-slot vectors ``[B, S, D]`` an analysis compares (None for a pairwise kind)."""
    vectors = KINDS[pe.kind].vectors
    return None if vectors is None else vectors(out)


def pair_scores(pe: PositionalEncoding, out: Tensor) -> Tensor:
    """What ``pe`` adds between slots ``i`` and ``j``, per head: ``[B, H|1, S, S]``."""
    return KINDS[pe.kind].pairs(out)


def heatmap(pe: PositionalEncoding, out: Tensor) -> tuple[Tensor, str]:
    """The matrix a heatmap of ``out`` shows for the first solution, and what it is."""
    kind = KINDS[pe.kind]
    return kind.heatmap(out), kind.heatmap_title
