"""Neural deconstruction search (PE paper, Layer 2): policy (``policy.py``), its inputs from the
search state (``features.py``), the removal policy the search engine calls (``removal.py``),
the ``--model nds`` solver (``solver.py``) and its trainer (``train.py``)."""
