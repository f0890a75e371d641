"""MiLoop (Zhou et al., 2026): model (``model.py``, top to bottom), decoding (``decode.py``),
the ``--model miloop`` solver (``solver.py``) and its trainer (``train.py``)."""
