import torch
from torch import nn

from routecli.nn import role_linear


def test_role_linear_is_three_linears_on_the_row_roles_with_their_gradients():
    torch.manual_seed(0)
    first, last, rest = (nn.Linear(6, 4).double() for _ in range(3))
    x = torch.randn(3, 5, 6, dtype=torch.float64, requires_grad=True)
    expected = torch.cat([first(x[:, :1]), last(x[:, 1:2]), rest(x[:, 2:])], 1)
    torch.testing.assert_close(role_linear(x, first, last, rest), expected)
    params = [m.weight for m in (first, last, rest)] + [m.bias for m in (first, last, rest)]
    assert torch.autograd.gradcheck(lambda x: role_linear(x, first, last, rest), (x,))
    out = role_linear(x, first, last, rest)
    out.pow(2).sum().backward()
    got = [p.grad.clone() for p in params]
    for p in params:
        p.grad = None
    expected.pow(2).sum().backward()
    for p, g in zip(params, got):
        torch.testing.assert_close(g, p.grad)


def test_role_linear_follows_bfloat16_autocast_with_float32_weight_gradients():
    first, last, rest = (nn.Linear(4, 4, bias=False) for _ in range(3))
    x = torch.randn(2, 4, 4)
    with torch.autocast("cpu", torch.bfloat16):
        out = role_linear(x, first, last, rest)
    assert out.dtype == torch.bfloat16
    out.float().sum().backward()
    assert rest.weight.grad is not None and rest.weight.grad.dtype == torch.float32
