"""Shared neural layers: RMSNorm, the adaptation attention free module (AAFM) and its block,
role-specific linear maps."""

from routecli.nn.aafm import AAFMBlock, RMSNorm, aafm, pairwise_distance, scale_distance_bias
from routecli.nn.roles import role_linear

__all__ = ["AAFMBlock", "RMSNorm", "aafm", "pairwise_distance", "role_linear",
           "scale_distance_bias"]
