import pytest
import torch

from routecli.pe import PEEncoder, get_pe

from .conftest import make_batch


def encoder(name: str) -> PEEncoder:
    torch.manual_seed(0)
    pe = get_pe(name, 8 if name == "rope" else 16, num_heads=4)
    return PEEncoder(in_dim=3, pe=pe, embed_dim=32, num_heads=4, num_layers=2, ff_dim=64).eval()


def features(batch):
    return torch.cat([batch.coords, batch.demand[..., None]], -1)  # [B, S, 3]


@pytest.mark.parametrize("name", ["nope", "sin", "ipe_xpe", "rope", "alibi", "spd", "rwse"])
def test_encoder_output_of_a_row_ignores_padding(name):
    alone = make_batch((9,), seed=5)[0]
    padded = make_batch((9, 25), seed=5)[0]
    enc = encoder(name)
    a, p = enc(features(alone), alone), enc(features(padded), padded)
    assert a.shape == (1, 10, 32)
    assert torch.allclose(a[0], p[0, :10], atol=1e-5)
    assert (p[0, 10:] == 0).all()


@pytest.mark.parametrize("name", ["ape", "rpe", "spd", "dact"])
def test_training_signal_reaches_learnable_pe_through_the_encoder(name):
    batch = make_batch((12, 15), seed=1)[0]
    enc = encoder(name).train()
    enc(features(batch), batch).pow(2).mean().backward()
    assert all(p.grad is not None and p.grad.abs().sum() > 0 for p in enc.pe.parameters())


def test_the_positional_signal_changes_the_encoding():
    batch = make_batch((12,), seed=2)[0]
    reordered = make_batch((12,), per_route=4, seed=2)[0]  # same nodes, other routes
    for name, changes in (("nope", False), ("ipe_xpe", True), ("alibi", True), ("rope", True)):
        enc = encoder(name)
        same = torch.allclose(enc(features(batch), batch), enc(features(reordered), reordered))
        assert same is not changes


def test_rotary_width_must_match_the_head_width():
    with pytest.raises(ValueError, match="head width"):
        PEEncoder(3, get_pe("rope", 16), embed_dim=32, num_heads=4)
