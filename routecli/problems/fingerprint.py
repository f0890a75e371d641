"""The one instance fingerprint: what keys the reference cache, the best-known registry
(``routecli/io/bks.csv``) and every results file (:mod:`routecli.results`)."""

from __future__ import annotations

import hashlib
from dataclasses import fields
from typing import TYPE_CHECKING

import numpy as np

if TYPE_CHECKING:
    from routecli.problems import Instance


def fingerprint(instance: Instance) -> str:
    """32 hex digits of SHA-256 over everything that defines ``instance`` (its name excluded):
    the problem, the distance rule, coordinates or matrix in their numbering, and every other
    field that is set (an unset optional field leaves the digest as it was before the field
    existed). Renumbering the nodes changes it, since solutions are stored by node number."""
    digest = hashlib.sha256(instance.problem.encode())
    for f in fields(instance):
        if f.name == "name":
            continue
        value = getattr(instance, f.name)
        if value is None:  # an optional field left unset (a fleet limit) changes nothing
            continue
        if hasattr(value, "rule"):  # Metric
            digest.update(value.rule.encode())
            for arr in (value.coords, value.matrix):
                if arr is not None:
                    digest.update(np.ascontiguousarray(arr, np.float64).tobytes())
        else:
            digest.update(np.ascontiguousarray(value, np.float64).tobytes())
    return digest.hexdigest()[:32]
