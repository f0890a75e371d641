"""Training MiLoop: losses (reference-free DPO, REINFORCE), checkpoints, the trainer, DDP."""
