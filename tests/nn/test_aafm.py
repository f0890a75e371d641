import math

import pytest
import torch

from routecli.nn import AAFMBlock, RMSNorm, aafm, fused, pairwise_distance, scale_distance_bias
from routecli.nn.aafm import _Block


def naive_aafm(q, k, v, bias):
    """Eq. 28 element by element, in float64, no stabilisation."""
    b, rq, d = q.shape
    out = torch.zeros(b, rq, d, dtype=torch.float64)
    for n in range(b):
        for i in range(rq):
            for c in range(d):
                w = torch.exp(bias[n, i].double()) * torch.exp(k[n, :, c].double())
                out[n, i, c] = torch.sigmoid(q[n, i, c].double()) * (w * v[n, :, c]).sum() / w.sum()
    return out


def test_aafm_matches_naive_formula_with_masked_pairs():
    torch.manual_seed(0)
    q, k, v = torch.randn(2, 5, 4), torch.randn(2, 6, 4), torch.randn(2, 6, 4)
    bias = torch.randn(2, 5, 6)
    bias[0, 1, 2] = float("-inf")
    bias[1, :, 5] = float("-inf")
    valid = torch.ones(2, 6, dtype=torch.bool)
    valid[1, 5] = False
    torch.testing.assert_close(aafm(q, k, v, bias, valid).double(), naive_aafm(q, k, v, bias),
                               rtol=1e-5, atol=1e-6)


def test_aafm_is_stable_for_large_keys_and_biases():
    torch.manual_seed(1)
    q, k, v = torch.randn(1, 3, 4), torch.randn(1, 5, 4) * 3 + 400.0, torch.randn(1, 5, 4)
    bias = torch.randn(1, 3, 5) - 1000.0
    out = aafm(q, k, v, bias, torch.ones(1, 5, dtype=torch.bool))
    assert torch.isfinite(out).all()
    # the shift cancels: same result as the unshifted, well-scaled problem
    ref = naive_aafm(q, k - 400.0, v, bias + 1000.0)
    torch.testing.assert_close(out.double(), ref, rtol=1e-5, atol=1e-6)


def test_aafm_padding_rows_give_zeros_and_no_nan_gradients():
    q = torch.randn(1, 3, 4, requires_grad=True)
    k, v = torch.randn(1, 3, 4, requires_grad=True), torch.randn(1, 3, 4, requires_grad=True)
    bias = torch.zeros(1, 3, 3)
    bias[0, 2] = float("-inf")  # row 2 sees nothing (a padded row)
    valid = torch.tensor([[True, True, False]])
    out = aafm(q, k, v, bias, valid)
    assert torch.equal(out[0, 2], torch.zeros(4))
    out.sum().backward()
    for t in (q, k, v):
        assert torch.isfinite(t.grad).all()
    assert torch.equal(k.grad[0, 2], torch.zeros(4))  # a padded key receives no gradient


def test_scale_distance_bias_eq29_and_self_mask():
    coords = torch.tensor([[[0.0, 0.0], [3.0, 4.0], [0.0, 1.0], [9.0, 9.0]]])
    valid = torch.tensor([[True, True, True, False]])
    count = torch.tensor([8])
    bias, excluded = scale_distance_bias(pairwise_distance(coords), valid, count, gamma=2.0)
    assert math.isclose(float(bias[0, 0, 1]), -2.0 * 3.0 * 5.0, rel_tol=1e-6)  # log2 8 = 3
    assert excluded[0].diagonal().all()
    assert excluded[0, :, 3].all() and not excluded[0, 0, 1]


def test_block_is_permutation_equivariant_and_alpha_gradient_finite():
    torch.manual_seed(2)
    block = AAFMBlock(16, 32)
    h, coords = torch.randn(1, 6, 16), torch.rand(1, 6, 2)
    valid = torch.tensor([[True] * 5 + [False]])
    bias, excluded = scale_distance_bias(pairwise_distance(coords), valid, torch.tensor([4]))
    out = block(h, bias, excluded, valid)
    perm = torch.tensor([3, 0, 4, 1, 2, 5])
    bias_p, excluded_p = scale_distance_bias(pairwise_distance(coords[:, perm]), valid[:, perm],
                                             torch.tensor([4]))
    out_p = block(h[:, perm], bias_p, excluded_p, valid[:, perm])
    torch.testing.assert_close(out_p, out[:, perm])
    out[:, :5].sum().backward()
    assert torch.isfinite(block.alpha.grad)


def test_rmsnorm_unit_rms():
    x = torch.randn(3, 7, 16) * 5
    y = RMSNorm(16)(x, torch.zeros(()))
    torch.testing.assert_close(y.pow(2).mean(-1), torch.ones(3, 7), rtol=1e-4, atol=1e-4)


def _block_case(dtype=torch.float64):
    torch.manual_seed(3)
    block = AAFMBlock(8, 16).to(dtype)
    with torch.no_grad():
        for p in block.parameters():
            p.add_(0.1 * torch.randn_like(p))
    h = torch.randn(2, 6, 8, dtype=dtype, requires_grad=True)
    valid = torch.tensor([[True] * 5 + [False], [True] * 6])
    bias, excluded = scale_distance_bias(pairwise_distance(torch.rand(2, 6, 2, dtype=dtype)),
                                         valid, torch.tensor([4, 4]))
    return block, h, bias, excluded, valid


def test_block_autograd_node_has_the_exact_gradient():
    """The hand-written backward of the fused block against finite differences."""
    block, h, bias, excluded, valid = _block_case()
    params = [block.alpha, block.w_q.weight, block.w_k.weight, block.w_v.weight,
              block.norm_attn.weight, block.ff[0].weight, block.ff[0].bias, block.ff[2].weight,
              block.ff[2].bias, block.norm_ff.weight]
    assert torch.autograd.gradcheck(
        lambda h, *ps: _Block.apply(h, bias, excluded, valid, 1e-6, *ps), (h, *params))


def _node(block, h, bias, excluded, valid):
    return _Block.apply(h, bias, excluded, valid, block.norm_attn.eps, block.alpha,
                        block.w_q.weight, block.w_k.weight, block.w_v.weight,
                        block.norm_attn.weight, block.ff[0].weight, block.ff[0].bias,
                        block.ff[2].weight, block.ff[2].bias, block.norm_ff.weight)


def test_block_node_matches_eager_autograd_and_inference():
    block, h, bias, excluded, valid = _block_case()
    eager = block(h, bias, excluded, valid)  # compiled kernels off: plain autograd
    eager.sum().backward()
    grads = [p.grad.clone() for p in block.parameters()]
    block.zero_grad()
    node = _node(block, h, bias, excluded, valid)
    torch.testing.assert_close(node, eager)
    node.sum().backward()
    for p, g in zip(block.parameters(), grads):
        torch.testing.assert_close(p.grad, g)
    with torch.no_grad():
        torch.testing.assert_close(block(h, bias, excluded, valid), eager)


@pytest.mark.slow
def test_compiled_kernels_match_eager_ones():
    """The inductor-compiled kernels (a C++ compiler is needed; without one they fall back to
    the eager ones with a warning) give the eager results in float32 and bfloat16."""
    for dtype, tol in ((torch.float32, 1e-5), (torch.bfloat16, 2e-2)):
        block, h, bias, excluded, valid = _block_case(torch.float32)
        h = h.detach().to(dtype).requires_grad_()
        with torch.autocast("cpu", torch.bfloat16, enabled=dtype == torch.bfloat16):
            eager = _node(block, h, bias, excluded, valid)
        eager.float().sum().backward()
        grads = [p.grad.clone() for p in block.parameters()]
        block.zero_grad()
        with fused.compiled(True), torch.autocast("cpu", torch.bfloat16,
                                                  enabled=dtype == torch.bfloat16):
            compiled = _node(block, h, bias, excluded, valid)
        compiled.float().sum().backward()
        torch.testing.assert_close(compiled.float(), eager.float(), rtol=tol, atol=tol)
        for p, g in zip(block.parameters(), grads):
            torch.testing.assert_close(p.grad, g, rtol=tol, atol=tol * g.abs().max().item())
