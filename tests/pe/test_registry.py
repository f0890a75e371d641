import pytest
import torch

from routecli.pe import PE_REGISTRY, UnknownPEError, get_pe
from routecli.pe.kinds import KINDS, build_pe, model_inputs, pair_scores, slot_vectors

from .conftest import make_batch


def build(name: str, dim: int = 16, heads: int = 4):
    torch.manual_seed(0)
    return build_pe(name, dim, dim // heads, heads).eval()


@pytest.mark.parametrize("name", list(PE_REGISTRY))
def test_what_a_model_reads_has_the_shapes_of_its_input(name, multi_route):
    batch = multi_route[0]
    pe = build(name)
    assert pe.kind == PE_REGISTRY[name].kind
    inputs = model_inputs(pe, pe(batch))
    b, s = batch.batch_size, batch.num_slots
    if inputs.node is not None:
        assert inputs.node.shape == (b, s, pe.out_dim) and torch.isfinite(inputs.node).all()
    if inputs.bias is not None:
        assert inputs.bias.shape[0] == b and inputs.bias.shape[1] in (1, 4)
        assert inputs.bias.shape[2:] == (s, s) and torch.isfinite(inputs.bias).all()
    if inputs.angles is not None:
        assert inputs.angles.shape == (b, s, pe.out_dim // 2)
        assert torch.isfinite(inputs.angles).all()


@pytest.mark.parametrize("name", list(PE_REGISTRY))
def test_padding_never_leaks_into_real_nodes(name):
    alone = make_batch((9,), seed=3)[0]
    padded = make_batch((9, 30), seed=3)[0]  # same first instance, padded to 31 slots
    assert torch.equal(alone.demand[0], padded.demand[0, :10])
    pe = build(name)
    a, p = pe(alone), pe(padded)
    pairwise = slot_vectors(pe, p) is None
    if name == "lap":  # eigenvectors have no canonical sign: compare node-to-node distances
        assert torch.allclose(torch.cdist(a[0], a[0]), torch.cdist(p[0, :10], p[0, :10]),
                              atol=1e-5)
        assert (p[0, 10:] == 0).all()
    elif pairwise:
        a, p = pair_scores(pe, a), pair_scores(pe, p)
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
    assert {s.kind for s in PE_REGISTRY.values()} <= set(KINDS)
