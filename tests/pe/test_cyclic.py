import torch

from routecli.pe import get_pe
from routecli.pe.cyclic import cyclic_index, gray_bits


def test_gray_codes_of_consecutive_indices_differ_in_one_bit():
    bits = gray_bits(torch.arange(64), 6)
    changes = (bits[1:] != bits[:-1]).sum(-1)
    assert (changes == 1).all()
    assert len({tuple(b.tolist()) for b in bits}) == 64


def test_cycleformer_wraps_exactly(walk):
    # PE(i) == PE(i + L): shift every position by one period
    pe = get_pe("cycleformer", 16)
    shifted = type(walk)(**{**walk.__dict__, "pos": walk.pos + walk.length})
    assert torch.equal(pe(walk), pe(shifted))
    out = pe(walk)
    assert torch.equal(out[:, 0], out[:, -1])  # the two depot ends coincide (D2)


def test_cycleformer_phase_is_two_pi_i_over_l(walk):
    out = get_pe("cycleformer", 4)(walk)
    length = walk.num_slots - 1
    phase = 2 * torch.pi * torch.tensor(3.0) / length
    assert torch.allclose(out[0, 3, :2], torch.stack([phase.sin(), phase.cos()]), atol=1e-6)


def test_dact_is_periodic_and_learnable(walk):
    pe = get_pe("dact", 8)
    out = pe(walk)
    assert torch.allclose(out[:, 0], out[:, -1])
    assert (cyclic_index(walk)[:, -1] == 0).all()
    out.sum().backward()
    assert pe.proj.weight.grad is not None and pe.proj.weight.grad.abs().sum() > 0
