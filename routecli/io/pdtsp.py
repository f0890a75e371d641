"""Pickup-and-delivery TSP files: VRPLIB with a ``PICKUP_AND_DELIVERY_SECTION``.

The layout (``routecli generate pdtsp --format file`` writes it; ``vrplib.read_instance`` reads
it as is, the pairs coming back as ``pickup_and_delivery``)::

    NAME : pdtsp-100-s0-0
    TYPE : PDTSP
    DIMENSION : 101                  # the depot + n/2 pickups + n/2 deliveries
    EDGE_WEIGHT_TYPE : EUC_2D        # any TSPLIB rule, EXACT_2D, or EXPLICIT with a matrix
    NODE_COORD_SECTION
    1 500 500                        # id x y; node 1 is the depot
    ...
    PICKUP_AND_DELIVERY_SECTION
    1 0 0                            # id pickup delivery, as in Li & Lim's files:
    2 0 52                           #   a pickup names its delivery (pickup column 0),
    ...
    52 2 0                           #   a delivery names its pickup (delivery column 0)
    ...
    DEPOT_SECTION
    1
    -1
    EOF

Any consistent pairing is read: every node but the depot is a pickup that names its delivery
or a delivery that names its pickup, and each names the other back. The instance is renumbered
into the MiLoop layout (Appendix B.2: depot, the pickups in file order, then their deliveries in
the same order) and keeps the file's ids, so tours are read and written in the file's numbering.
Anything inconsistent (an odd number of paired nodes, a delivery whose pickup does not name it
back, a node both or neither) is refused with one line naming the line and the node.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np

from routecli.errors import InstanceFormatError, excerpt
from routecli.io.text import check_single_depot, dimension, node_table, parse, spec_type
from routecli.io.tsplib import edge_weight_rule, instance_metric
from routecli.problems import Metric, PDTSPInstance

SPEC_KEYS = {"NAME", "COMMENT", "TYPE", "DIMENSION", "EDGE_WEIGHT_TYPE", "EDGE_WEIGHT_FORMAT",
             "EDGE_DATA_FORMAT", "NODE_COORD_TYPE", "DISPLAY_DATA_TYPE"}
SECTION_KEYS = {"NODE_COORD_SECTION", "EDGE_WEIGHT_SECTION", "DISPLAY_DATA_SECTION",
                "PICKUP_AND_DELIVERY_SECTION", "DEPOT_SECTION"}
PAIRS = "PICKUP_AND_DELIVERY_SECTION"


def pdtsp_from_text(text: str, source: str, round_rule: str | None = None) -> PDTSPInstance:
    """A PDTSP from the text of a VRPLIB file with ``TYPE : PDTSP``."""
    spec, sections = parse(text, source, SPEC_KEYS, SECTION_KEYS)
    kind = spec_type(spec)
    if kind != "PDTSP":
        raise InstanceFormatError(f"{source}: TYPE {excerpt(kind)} is not PDTSP")
    n = dimension(spec, source)
    if (n - 1) % 2:
        raise InstanceFormatError(f"{source}: line {spec['DIMENSION'].line}: DIMENSION {n} leaves "
                                  f"{n - 1} nodes besides the depot, an odd number of paired nodes")
    metric = instance_metric(spec, sections, n, edge_weight_rule(spec, source, ("EXACT_2D",)),
                             round_rule, source)
    check_single_depot(sections, source)
    order = _layout(sections, n, source)
    name = spec["NAME"].value if "NAME" in spec and spec["NAME"].value else Path(source).stem
    if np.array_equal(order, np.arange(n)):
        return PDTSPInstance(name, metric)
    return PDTSPInstance(name, _renumbered(metric, order), file_ids=order + 1)


def _renumbered(metric: Metric, order: np.ndarray) -> Metric:
    """``metric`` with node ``k`` the file's node ``order[k]`` (0-based)."""
    coords = metric.coords[order] if metric.coords is not None else None
    matrix = metric.matrix[np.ix_(order, order)] if metric.matrix is not None else None
    return Metric(metric.rule, coords=coords, matrix=matrix)


def _layout(sections: dict, n: int, source: str) -> np.ndarray:
    """The file's nodes (0-based) in the MiLoop layout: the depot, the pickups in file order,
    their deliveries in the same order; each row ``id pickup delivery`` is checked (file ids)."""
    if PAIRS not in sections:
        raise InstanceFormatError(f"{source}: missing {PAIRS}")
    section = sections[PAIRS]
    table, lines = node_table(section, n, ("pickup", "delivery"), source)
    for i in range(n):
        node, (pickup, delivery) = i + 1, table[i]
        where = f"{source}: line {lines[i]}: {PAIRS}: node {node}"
        for value in (pickup, delivery):
            if value != np.floor(value) or not 0 <= value <= n:
                raise InstanceFormatError(f"{where}: {value:g} is not a node id in 0..{n}")
        if node == 1:
            if pickup or delivery:
                raise InstanceFormatError(f"{where} is the depot; its pickup and delivery must "
                                          "be 0 0")
            continue
        if pickup == 0 and delivery == 0:
            raise InstanceFormatError(f"{where} is neither a pickup nor a delivery (0 0)")
        if pickup and delivery:
            raise InstanceFormatError(f"{where} is both a delivery (of {pickup:g}) and a pickup "
                                      f"(for {delivery:g})")
        # the partner must name this node back: a delivery's pickup, a pickup's delivery
        named, back_column, role, other, names_back, missing = (
            (pickup, 1, "delivery", "pickup", "delivers to", "is not a pickup") if pickup else
            (delivery, 0, "pickup", "delivery", "is the delivery of", "is not a delivery"))
        partner = int(named)
        back = table[partner - 1, back_column]
        if back != node:
            raise InstanceFormatError(
                f"{where}: {role} without its {other}: node {partner} "
                + (f"{names_back} {back:g}" if back else missing))
    pickups = np.flatnonzero(table[:, 1] > 0)
    deliveries = table[pickups, 1].astype(np.int64) - 1
    return np.concatenate([[0], pickups, deliveries])
