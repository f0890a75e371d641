import torch

from routecli.envs.base import ROW_ALIGN, compact, normalise_coords, path_length


def test_compact_gathers_available_ids_in_order_and_pads():
    avail = torch.tensor([[False, True, False, True], [True, False, False, False]])
    ids, valid = compact(avail, pad_id=4)
    assert ids.shape == (2, ROW_ALIGN)  # padded to a multiple of ROW_ALIGN rows
    assert ids[:, :2].tolist() == [[1, 3], [0, 4]] and (ids[:, 2:] == 4).all()
    assert valid[:, :2].tolist() == [[True, True], [True, False]] and not valid[:, 2:].any()


def test_normalise_coords_keeps_aspect_ratio_and_ignores_padding():
    coords = torch.tensor([[[2.0, 1.0], [6.0, 3.0], [4.0, 2.0], [100.0, -50.0]]])
    valid = torch.tensor([[True, True, True, False]])
    out = normalise_coords(coords, valid)
    assert out[0, :3].tolist() == [[0.0, 0.0], [1.0, 0.5], [0.5, 0.25]]  # x-range 4, y-range 2
    assert out[0, 3].tolist() == [0.0, 0.0]


def test_normalisation_is_invariant_to_translation_and_scale():
    coords = torch.rand(2, 9, 2)
    valid = torch.ones(2, 9, dtype=torch.bool)
    torch.testing.assert_close(normalise_coords(coords * 7.5 + 3.0, valid),
                               normalise_coords(coords, valid), rtol=1e-5, atol=1e-5)


def test_path_length_closes_the_walk():
    locs = torch.tensor([[[0.0, 0.0], [3.0, 0.0], [3.0, 4.0]]])
    assert float(path_length(locs, torch.tensor([[0, 1, 2]]))) == 12.0
