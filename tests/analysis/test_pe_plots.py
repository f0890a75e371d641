import numpy as np
import pytest
import torch

from routecli.analysis.pe_plots import (
    PLOTS,
    cosine_similarity,
    encoding_matrix,
    longest_route_walk,
    plot_pe,
)
from routecli.pe import get_pe
from tests.pe.conftest import make_batch


@pytest.fixture
def batch():
    return make_batch((20,), per_route=7, seed=0)[0]


def test_longest_route_walk_is_closed_and_ordered(batch):
    walk = longest_route_walk(batch)
    assert walk.num_slots == 9  # depot, 7 customers, depot
    assert torch.equal(walk.coords[0, 0], walk.coords[0, -1])
    assert torch.allclose(walk.total[0, 0], batch.total[0, batch.route[0] == 1][0])


def test_heatmap_matrices_by_kind(batch):
    walk = longest_route_walk(batch)
    node, _ = encoding_matrix(get_pe("ipe", 8), walk)
    bias, _ = encoding_matrix(get_pe("alibi", 0, num_heads=2), walk)
    rotary, _ = encoding_matrix(get_pe("rope", 8), walk)
    assert node.shape == (9, 8) and bias.shape == rotary.shape == (9, 9)
    assert np.allclose(np.diag(rotary), 8)  # |R 1|^2 for an all-ones 8-vector
    sim = cosine_similarity(node)
    assert sim[0, -1] == pytest.approx(1.0, abs=1e-5)  # circular IPE: the depot ends agree


def test_plot_pe_writes_pngs_and_rejects_similarity_of_a_bias(batch, tmp_path):
    paths = plot_pe(batch, "ipe_xpe", PLOTS, tmp_path, dim=16)
    assert [p.name for p in paths] == ["ipe_xpe-heatmap.png", "ipe_xpe-similarity.png",
                                       "ipe-channels.png", "xpe-angles.png", "ipe_xpe-pca.png"]
    assert all(p.stat().st_size > 1000 for p in paths)
    with pytest.raises(ValueError, match="node encoding"):
        plot_pe(batch, "spd", ("similarity",), tmp_path, dim=16)
