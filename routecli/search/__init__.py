"""Decoding and search procedures on top of the learned policies."""
