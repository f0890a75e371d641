"""Positional encodings for routing solutions (PE paper Sections 3-4, Appendix D).

One input type, :class:`RouteBatch` (batched, padded multi-route solutions), one call signature
``pe(batch) -> Tensor`` whose meaning is ``pe.kind`` ("node" ``[B, S, D]``, "bias"
``[B, H|1, S, S]``, "rotary" angles ``[B, S, D/2]``), and one registry, :data:`PE_REGISTRY` /
:func:`get_pe`. :class:`PEEncoder` shows the integration of Section 4.3.
"""

from routecli.pe.base import PositionalEncoding, apply_rotary
from routecli.pe.batch import RouteBatch, route_graph
from routecli.pe.encoder import PEEncoder
from routecli.pe.registry import PE_REGISTRY, PESpec, UnknownPEError, get_pe

__all__ = ["PEEncoder", "PESpec", "PE_REGISTRY", "PositionalEncoding", "RouteBatch",
           "UnknownPEError", "apply_rotary", "get_pe", "route_graph"]
