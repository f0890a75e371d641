"""Classical baselines: nearest-neighbour construction and PyVRP's hybrid genetic search."""
