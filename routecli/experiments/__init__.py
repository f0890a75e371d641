"""Comparison harnesses: the controlled experiments that train and compare several variants
under one protocol and report them against a paper's tables.

- :mod:`routecli.experiments.pe`: the PE paper's comparison behind ``routecli compare-pe``
  (encodings on the DACT/N2S backbones of :mod:`routecli.improve`).
- :mod:`routecli.experiments.ablation`: the MiLoop ablation (variants of
  :mod:`routecli.miloop`'s training).
"""
