"""The PE paper's controlled comparison behind ``routecli compare-pe``.

- :mod:`routecli.experiments.pe.paper`: the PE lists of the paper's tables, the paper's values.
- :mod:`routecli.experiments.pe.protocol`: budgets, the protocol, the backbone it builds.
- :mod:`routecli.experiments.pe.pairs`: running the (PE, seed) pairs of a resumable run
  folder, shared by processes through per-pair claims.
- :mod:`routecli.experiments.pe.summary`: statistics, Markdown, plot.
- :mod:`routecli.experiments.pe.claims`: each compared pair of encodings as a claim, judged.
- :mod:`routecli.experiments.pe.curve`: learning curves under the comparison's protocol.
"""
