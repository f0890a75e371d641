"""Every positional encoding behind one name: ``get_pe(name, dim, num_heads=..., **options)``.

``dim`` is the width of a node encoding (``pe.out_dim``; ``ipe_xpe`` returns ``2 * dim``) or the
per-head width a rotary encoding rotates; bias encodings ignore it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any

from routecli.pe.base import PositionalEncoding
from routecli.pe.cyclic import CycleFormerPE, DACTCyclicPE
from routecli.pe.graph import LaplacianPE, RandomWalkSE, ShortestPathBias
from routecli.pe.nlp import AbsolutePE, ALiBiBias, NoPE, RelativePE, RotaryPE, SinusoidalPE
from routecli.pe.routing import CrossRoutePE, HierarchicalPE, InRoutePE


@dataclass(frozen=True)
class PESpec:
    """Registry entry: how to build an encoding and what it is."""

    build: partial[PositionalEncoding]  # the class with the registry defaults bound
    kind: str
    family: str
    title: str
    defaults: dict[str, Any] = field(default_factory=dict)


def _spec(cls: type[PositionalEncoding], family: str, title: str, **defaults: Any) -> PESpec:
    return PESpec(partial(cls, **defaults), cls.kind, family, title, defaults)


PE_REGISTRY: dict[str, PESpec] = {
    "nope": _spec(NoPE, "none", "NoPE"),
    "ape": _spec(AbsolutePE, "nlp", "APE"),
    "sin": _spec(SinusoidalPE, "nlp", "SIN"),
    "rope": _spec(RotaryPE, "nlp", "RoPE"),
    "rpe": _spec(RelativePE, "nlp", "RPE"),
    "alibi": _spec(ALiBiBias, "nlp", "ALiBi"),
    "lap": _spec(LaplacianPE, "graph", "Laplacian PE"),
    "rwse": _spec(RandomWalkSE, "graph", "RWSE"),
    "spd": _spec(ShortestPathBias, "graph", "SPD"),
    "dact": _spec(DACTCyclicPE, "routing", "DACT CPE"),
    "cycleformer": _spec(CycleFormerPE, "routing", "CycleFormer PE"),
    "ipe": _spec(InRoutePE, "ours", "IPE (direction-aware)", direction_aware=True),
    "ipe_inv": _spec(InRoutePE, "ours", "IPE (direction-invariant)", direction_aware=False),
    "xpe": _spec(CrossRoutePE, "ours", "XPE"),
    "ipe_xpe": _spec(HierarchicalPE, "ours", "IPE+XPE (direction-aware)",
                     direction_aware=True),
    "ipe_inv_xpe": _spec(HierarchicalPE, "ours", "IPE+XPE (direction-invariant)",
                         direction_aware=False),
    "ipe_index": _spec(InRoutePE, "ablation", "IPE indexed by i/L (direction-aware)",
                       direction_aware=True, index_based=True),
    "ipe_inv_index": _spec(InRoutePE, "ablation", "IPE indexed by i/L (direction-invariant)",
                           direction_aware=False, index_based=True),
    "xpe_mean": _spec(CrossRoutePE, "ablation", "XPE per route: arithmetic mean",
                      aggregate="mean"),
    "xpe_circular": _spec(CrossRoutePE, "ablation", "XPE per route: circular mean",
                          aggregate="circular"),
    "xpe_demand": _spec(CrossRoutePE, "ablation", "XPE per route: demand-weighted mean",
                        aggregate="demand"),
    "xpe_median": _spec(CrossRoutePE, "ablation", "XPE per route: median",
                        aggregate="median"),
    "xpe_midpoint": _spec(CrossRoutePE, "ablation", "XPE per route: max-min midpoint",
                          aggregate="midpoint"),
}


class UnknownPEError(KeyError):
    """A PE name that is not in :data:`PE_REGISTRY`."""

    def __str__(self) -> str:
        return f"unknown positional encoding {self.args[0]!r}; known: {', '.join(PE_REGISTRY)}"


def canonical_pe(name: str) -> str:
    """The registry key of a PE name: case-insensitive, ``-`` and ``+`` read as ``_``."""
    return name.lower().replace("-", "_").replace("+", "_")


def get_pe(name: str, dim: int, num_heads: int = 8, **options: Any) -> PositionalEncoding:
    """Build the encoding registered as ``name`` (see :func:`canonical_pe`). Options override
    the registry defaults (e.g. ``schedule="geometric"``)."""
    key = canonical_pe(name)
    if key not in PE_REGISTRY:
        raise UnknownPEError(name)
    return PE_REGISTRY[key].build(dim=dim, num_heads=num_heads, **options)
