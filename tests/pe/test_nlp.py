import math

import pytest
import torch

from routecli.pe import apply_rotary, get_pe
from routecli.pe.nlp import alibi_slopes


def test_sin_follows_vaswani(walk):
    out = get_pe("sin", 8)(walk)
    i = walk.pos[0, 5].item()
    for k in range(4):
        w = 10_000 ** (-2 * k / 8)
        assert out[0, 5, 2 * k].item() == pytest.approx(math.sin(i * w), abs=1e-6)
        assert out[0, 5, 2 * k + 1].item() == pytest.approx(math.cos(i * w), abs=1e-6)


def test_sin_and_ape_are_not_circular(walk):
    # D2 fails for linear-index encodings: the two depot ends get different vectors
    for name in ("sin", "ape"):
        out = get_pe(name, 16)(walk)
        assert not torch.allclose(out[:, 0], out[:, -1], atol=1e-2)


def test_ape_looks_up_the_position_and_clips_at_max_len(walk):
    ape = get_pe("ape", 4, max_len=5)
    out = ape(walk)
    assert torch.equal(out[0, 3], ape.table.weight[3])
    assert torch.equal(out[0, 9], ape.table.weight[5])


def test_rope_logits_are_toeplitz(walk):
    rope = get_pe("rope", 16)
    angles = rope(walk)  # [B, S, 8]
    q = torch.randn(1, 1, 1, 16).expand(3, 2, walk.num_slots, 16)
    k = torch.randn(1, 1, 1, 16).expand(3, 2, walk.num_slots, 16)
    logits = apply_rotary(q, angles) @ apply_rotary(k, angles).transpose(-1, -2)
    for off in range(-walk.num_slots + 1, walk.num_slots):
        diag = torch.diagonal(logits, offset=off, dim1=-2, dim2=-1)
        assert torch.allclose(diag, diag[..., :1].expand_as(diag), atol=1e-4)
    assert not torch.allclose(logits[..., 0, 1], logits[..., 0, 5])


def test_rotation_preserves_norms(walk):
    x = torch.randn(3, 2, walk.num_slots, 8)
    rotated = apply_rotary(x, get_pe("rope", 8)(walk))
    assert torch.allclose(rotated.norm(dim=-1), x.norm(dim=-1), atol=1e-5)


def test_rpe_is_a_clipped_banded_toeplitz_bias(walk):
    rpe = get_pe("rpe", 0, window=3)
    bias = rpe(walk)[0, 0]
    assert bias.shape == (walk.num_slots, walk.num_slots)
    for i in range(walk.num_slots):
        for j in range(walk.num_slots):
            offset = max(-3, min(3, i - j))
            assert bias[i, j] == rpe.table[offset + 3]


def test_alibi_slopes_follow_press_et_al():
    assert torch.allclose(alibi_slopes(8), torch.tensor([2.0 ** -(h + 1) for h in range(8)]))
    assert torch.allclose(alibi_slopes(4), torch.tensor([2.0 ** (-2 * (h + 1)) for h in range(4)]))
    # 6 heads: the 4-head schedule, then every other slope of the 8-head one
    expected = [2.0 ** (-2 * (h + 1)) for h in range(4)] + [2.0 ** -1, 2.0 ** -3]
    assert torch.allclose(alibi_slopes(6), torch.tensor(expected))


def test_alibi_bias_is_minus_slope_times_index_gap(walk):
    bias = get_pe("alibi", 0, num_heads=4)(walk)
    gap = (walk.pos[0, :, None] - walk.pos[0, None, :]).abs().float()
    for h, m in enumerate(alibi_slopes(4)):
        assert torch.allclose(bias[0, h], -m * gap)


def test_index_encodings_conflate_routes(multi_route):
    # D3 fails: the same within-route index gets the same vector on every route
    batch = multi_route[0]
    out = get_pe("sin", 16)(batch)
    first = (batch.pos[1] == 1).nonzero().squeeze(1)
    assert len(first) == 4 and torch.allclose(out[1, first], out[1, first[:1]].expand(4, -1))


def test_nope_is_empty(walk):
    assert get_pe("nope", 16)(walk).shape == (3, walk.num_slots, 0)


def test_sincos_encodings_need_an_even_width():
    with pytest.raises(ValueError, match="even"):
        get_pe("sin", 7)
