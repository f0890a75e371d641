import math

import numpy as np
import pytest
import torch
from scipy.stats import spearmanr

from routecli.pe import get_pe
from routecli.pe.routing import CrossRoutePE, InRoutePE, route_angles

from .conftest import reverse_walk


@pytest.mark.parametrize("name", ["ipe", "ipe_inv"])
def test_ipe_endpoints_coincide_with_integer_harmonics(walk, name):
    out = get_pe(name, 32)(walk)
    assert torch.allclose(out[:, 0], out[:, -1], atol=1e-5)  # IPE(v_1) = IPE(v_L)


def test_direction_invariant_ipe_is_reversal_invariant(walk):
    pe = get_pe("ipe_inv", 32)
    assert torch.allclose(pe(walk), pe(reverse_walk(walk)).flip(1), atol=1e-4)


def test_direction_aware_ipe_flips_sines_and_keeps_cosines(walk):
    pe = get_pe("ipe", 32)
    fwd, back = pe(walk), pe(reverse_walk(walk)).flip(1)
    assert torch.allclose(fwd[..., 1::2], back[..., 1::2], atol=1e-4)
    assert torch.allclose(fwd[..., 0::2], -back[..., 0::2], atol=1e-4)
    assert not torch.allclose(fwd, back, atol=1e-2)


def test_paper_geometric_schedule_breaks_circularity_and_reversal(walk):
    # the correction the notebook points out: with w_k = 10000^(-2k/D) neither holds
    aware = get_pe("ipe", 32, schedule="geometric")
    inv = get_pe("ipe_inv", 32, schedule="geometric")
    for pe in (aware, inv):
        out = pe(walk)
        assert (out[:, 0] - out[:, -1]).abs().max() > 0.1
    assert (inv(walk) - inv(reverse_walk(walk)).flip(1)).abs().max() > 0.1
    fwd, back = aware(walk), aware(reverse_walk(walk)).flip(1)
    assert (fwd[..., 1::2] - back[..., 1::2]).abs().max() > 0.1


def test_ipe_is_indexed_by_travel_distance_not_index(walk):
    out = get_pe("ipe", 8, amplitude="flat")(walk)
    phase = 2 * math.pi * walk.cum / walk.total
    assert torch.allclose(out[..., 0], phase.sin(), atol=1e-5)
    assert torch.allclose(out[..., 3], (2 * phase).cos(), atol=1e-5)
    by_index = get_pe("ipe_index", 8, amplitude="flat")(walk)
    index_phase = 2 * math.pi * walk.pos / walk.length
    assert torch.allclose(by_index[..., 0], index_phase.sin(), atol=1e-5)


def test_harmonic_ipe_distance_increases_with_the_cyclic_arc(walk):
    out = get_pe("ipe", 64)(walk)[0, :-1]
    phase = (2 * math.pi * walk.cum / walk.total)[0, :-1]
    i, j = torch.triu_indices(len(phase), len(phase), offset=1)
    delta = (phase[i] - phase[j]).abs()
    arc = torch.minimum(delta, 2 * math.pi - delta)
    dist = (out[i] - out[j]).norm(dim=-1)
    order = arc.argsort()
    assert (dist[order].diff() > -1e-5).all()  # monotone in the arc
    flat = get_pe("ipe", 64, amplitude="flat")(walk)[0, :-1]
    flat_rho = spearmanr((flat[i] - flat[j]).norm(dim=-1), arc).statistic
    assert spearmanr(dist, arc).statistic > 0.99 > flat_rho + 0.3


def test_ipe_harmonic_amplitude_needs_integer_frequencies():
    with pytest.raises(ValueError, match="integer"):
        get_pe("ipe", 16, schedule="geometric", amplitude="harmonic")


def test_xpe_encodes_the_depot_angle_and_zero_pads_beyond_2k(multi_route):
    batch = multi_route[0]
    out = get_pe("xpe", 16, k=4)(batch)
    assert (out[..., 8:] == 0).all()
    assert (out[:, 0] == 0).all()  # the depot has no angle
    theta = batch.theta[1, 5]
    expected = torch.stack([f(2.0**k * theta) for k in range(4) for f in (torch.sin, torch.cos)])
    assert torch.allclose(out[1, 5, :8], expected, atol=1e-5)
    with pytest.raises(ValueError, match="2K"):
        get_pe("xpe", 6, k=4)


def test_xpe_separates_same_index_nodes_of_different_routes(multi_route):
    batch = multi_route[0]
    out = get_pe("xpe", 16)(batch)
    ipe = get_pe("ipe_index", 16)(batch)
    at_one = ((batch.pos[1] == 1) & (batch.length[1] == 6)).nonzero().squeeze(1)
    assert len(at_one) == 3  # first nodes of the three full routes: one index-based encoding
    assert torch.allclose(ipe[1, at_one], ipe[1, at_one[:1]].expand(len(at_one), -1))
    gaps = torch.cdist(out[1, at_one], out[1, at_one])
    assert gaps[~torch.eye(len(at_one), dtype=torch.bool)].min() > 0.1


def test_hierarchical_pe_concatenates_ipe_and_xpe(multi_route):
    batch = multi_route[0]
    pe = get_pe("ipe_xpe", 16)
    out = pe(batch)
    assert out.shape[-1] == 32 == pe.out_dim
    assert torch.equal(out, torch.cat([get_pe("ipe", 16)(batch), get_pe("xpe", 16)(batch)], -1))
    inv = get_pe("ipe_inv_xpe", 16)(batch)
    assert torch.equal(inv[..., :16], get_pe("ipe_inv", 16)(batch))


def numpy_route_angle(theta: np.ndarray, demand: np.ndarray, how: str) -> float:
    if how == "mean":
        return theta.mean()
    if how == "circular":
        return np.arctan2(np.sin(theta).sum(), np.cos(theta).sum())
    if how == "demand":
        return (theta * demand).sum() / demand.sum()
    if how == "median":
        return float(np.median(theta))
    return (theta.max() + theta.min()) / 2


@pytest.mark.parametrize("how", ["mean", "circular", "demand", "median", "midpoint"])
def test_per_route_xpe_angles(multi_route, how):
    batch, coords, routes, demands = multi_route
    angle = route_angles(batch, how)
    for b, rs in enumerate(routes):
        for r in rs:
            rel = coords[b][r] - coords[b][0]
            expected = numpy_route_angle(np.arctan2(rel[:, 1], rel[:, 0]), demands[b][r], how)
            assert np.allclose(angle[b, r].numpy(), expected, atol=1e-5)
    assert (angle[:, 0] == 0).all()
    out = get_pe(f"xpe_{how}", 8)(batch)
    first = routes[1][0]
    assert torch.allclose(out[1, first], out[1, first[:1]].expand(len(first), -1))


def test_hierarchical_pe_takes_a_per_route_xpe(multi_route):
    batch = multi_route[0]
    pe = get_pe("ipe_inv_xpe", 8, xpe_aggregate="circular")
    expected = torch.cat([InRoutePE(8, direction_aware=False)(batch),
                          CrossRoutePE(8, aggregate="circular")(batch)], -1)
    assert torch.allclose(pe(batch), expected)
