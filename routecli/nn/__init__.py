"""Shared neural layers: RMSNorm, the adaptation attention free module (AAFM) and its block."""

from routecli.nn.aafm import AAFMBlock, RMSNorm, aafm, pairwise_distance, scale_distance_bias

__all__ = ["AAFMBlock", "RMSNorm", "aafm", "pairwise_distance", "scale_distance_bias"]
