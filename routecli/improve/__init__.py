"""Learned improvement search for the PE paper's controlled comparison (Layer 1 and 3).

- :mod:`routecli.improve.moves`: 2-opt / relocate / exchange on giant tours with capacity and
  precedence masks, and N2S's PDTSP pair removal-reinsertion.
- :mod:`routecli.improve.env`: instances, tours, what a policy observes, DACT's reward.
- :mod:`routecli.improve.model`: the DACT-style dual-aspect backbone, any ``routecli.pe`` PE.
- :mod:`routecli.improve.n2s`: N2S for PDTSP (synthesis attention, removal and reinsertion
  decoders), any PE.
- :mod:`routecli.improve.train`: PPO with n-step returns (DACT/N2S), rollouts and evaluation.
- The controlled comparison behind ``routecli compare-pe``: :mod:`routecli.improve.paper` (the
  PE lists of the paper's tables, the paper's values), :mod:`routecli.improve.protocol` (budgets,
  the protocol, the backbone it builds), :mod:`routecli.improve.pairs` (running the (PE, seed)
  pairs of a resumable run folder, shared by processes through per-pair claims),
  :mod:`routecli.improve.summary` (statistics, Markdown, plot).
- :mod:`routecli.improve.curve`: learning curves under the comparison's protocol.
- :mod:`routecli.improve.solver`: the ``dact`` model of ``routecli solve``/``bench``.
"""
