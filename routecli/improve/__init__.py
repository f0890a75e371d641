"""Learned improvement search: the DACT and N2S models (Layer 1 and 3 of the PE paper).

- :mod:`routecli.improve.moves`: 2-opt / relocate / exchange on giant tours with capacity and
  precedence masks, and N2S's PDTSP pair removal-reinsertion.
- :mod:`routecli.improve.env`: instances, tours, what a policy observes, DACT's reward.
- :mod:`routecli.improve.model`: the DACT-style dual-aspect backbone, any ``routecli.pe`` PE.
- :mod:`routecli.improve.n2s`: N2S for PDTSP (synthesis attention, removal and reinsertion
  decoders), any PE.
- :mod:`routecli.improve.train`: PPO with n-step returns (DACT/N2S), rollouts and evaluation.
- :mod:`routecli.improve.imitation`: offline imitation of reference tours.
- :mod:`routecli.improve.solver`: the ``dact`` model of ``routecli solve``/``bench``.

The PE paper's comparison built on these models is :mod:`routecli.experiments.pe`.
"""
