"""The one adapter from an encoding to what a model and an analysis consume."""

import pytest
import torch

from routecli.pe import PE_REGISTRY
from routecli.pe.kinds import KINDS, build_pe, heatmap, model_inputs, node_channels, slot_vectors

from .conftest import make_batch


def test_every_registered_encoding_has_a_kind_the_adapter_knows():
    assert {spec.kind for spec in PE_REGISTRY.values()} <= set(KINDS)


@pytest.mark.parametrize("name", ["ipe_xpe", "alibi", "rope", "nope"])
def test_each_kind_reaches_one_model_input_at_the_width_it_is_built_for(name):
    batch, *_ = make_batch((7, 5))
    pe = build_pe(name, 16, 8, num_heads=4)
    out = pe(batch)
    inputs = model_inputs(pe, out)
    given = {k: v for k, v in vars(inputs).items() if v is not None}
    assert list(given) == [{"node": "node", "bias": "bias", "rotary": "angles"}[pe.kind]]
    assert node_channels(pe) == (pe.out_dim if pe.kind == "node" else 0)
    if pe.kind == "rotary":
        assert pe.out_dim == 8  # the head width it rotates
    matrix, what = heatmap(pe, out)
    assert matrix.ndim == 2 and what
    vectors = slot_vectors(pe, out)
    assert (vectors is None) == (pe.kind == "bias")
    if vectors is not None:
        assert vectors.shape[:2] == (batch.batch_size, batch.num_slots)
        assert torch.isfinite(vectors).all()
