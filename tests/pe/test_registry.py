import pytest
import torch

from routecli.pe import PE_REGISTRY, UnknownPEError, get_pe

from .conftest import make_batch


def build(name: str, dim: int = 16, heads: int = 4):
    torch.manual_seed(0)
    return get_pe(name, 4 if name == "rope" else dim, num_heads=heads).eval()


@pytest.mark.parametrize("name", list(PE_REGISTRY))
def test_shapes_follow_the_kind(name, multi_route):
    batch = multi_route[0]
    pe = build(name)
    out = pe(batch)
    b, s = batch.batch_size, batch.num_slots
    assert pe.kind == PE_REGISTRY[name].kind
    if pe.kind == "node":
        assert out.shape == (b, s, pe.out_dim)
    elif pe.kind == "bias":
        assert out.shape[0] == b and out.shape[1] in (1, 4) and out.shape[2:] == (s, s)
    else:
        assert out.shape == (b, s, pe.out_dim // 2)
    assert torch.isfinite(out).all()


@pytest.mark.parametrize("name", list(PE_REGISTRY))
def test_padding_never_leaks_into_real_nodes(name):
    alone = make_batch((9,), seed=3)[0]
    padded = make_batch((9, 30), seed=3)[0]  # same first instance, padded to 31 slots
    assert torch.equal(alone.demand[0], padded.demand[0, :10])
    pe = build(name)
    a, p = pe(alone), pe(padded)
    if name == "lap":  # eigenvectors have no canonical sign: compare node-to-node distances
        assert torch.allclose(torch.cdist(a[0], a[0]), torch.cdist(p[0, :10], p[0, :10]),
                              atol=1e-5)
        assert (p[0, 10:] == 0).all()
    elif pe.kind == "bias":
        assert torch.allclose(a[0], p[0, :, :10, :10], atol=1e-5)
        assert (p[0, :, 10:] == 0).all() and (p[0, :, :, 10:] == 0).all()
    else:
        assert torch.allclose(a[0], p[0, :10], atol=1e-5)
        assert (p[0, 10:] == 0).all()


@pytest.mark.parametrize("name", ["ape", "rpe", "spd", "dact"])
def test_gradients_reach_learnable_encodings(name, multi_route):
    pe = build(name).train()
    out = pe(multi_route[0])
    (out * torch.randn_like(out)).sum().backward()
    grads = [p.grad for p in pe.parameters()]
    assert grads and all(g is not None and g.abs().sum() > 0 for g in grads)


def test_names_are_normalised_and_unknown_names_fail_clearly():
    assert get_pe("IPE+XPE", 8).out_dim == 16
    assert get_pe("ipe-inv", 8).direction_aware is False
    with pytest.raises(UnknownPEError, match="unknown positional encoding 'posenc'"):
        get_pe("posenc", 8)


def test_registry_covers_every_method_of_the_paper():
    titles = {spec.title.split(" (")[0] for spec in PE_REGISTRY.values()}
    for method in ("NoPE", "APE", "SIN", "RoPE", "RPE", "ALiBi", "Laplacian PE", "RWSE", "SPD",
                   "DACT CPE", "CycleFormer PE", "IPE", "XPE", "IPE+XPE"):
        assert method in titles
    assert {s.kind for s in PE_REGISTRY.values()} == {"node", "bias", "rotary"}
