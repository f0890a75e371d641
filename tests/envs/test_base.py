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


def test_per_row_candidate_sets_query_each_rows_own_instance():
    """coords [B, N, 2]: row r's candidates are those of a CandidateSets of instance r alone;
    with K >= N they are every unvisited node, in compact()'s order."""
    import numpy as np
    import pytest

    from routecli.envs.base import CandidateSets

    xy = np.random.default_rng(0).random((3, 15, 2))
    visited = torch.rand(3, 15, generator=torch.Generator().manual_seed(1)) < 0.4
    current = torch.tensor([2, 7, 11])
    visited[torch.arange(3), current] = True
    ids, valid = CandidateSets(xy, k=4).select(current, visited, pad_id=15)
    for r in range(3):
        alone, _ = CandidateSets(xy[r], k=4).select(current[r:r + 1], visited[r:r + 1], 15)
        assert ids[r].tolist() == alone[0].tolist() and int(valid[r].sum()) == 4
    every, every_valid = CandidateSets(xy, k=15).select(current, visited, pad_id=15)
    full, full_valid = compact(~visited, pad_id=15)
    assert torch.equal(every, full) and torch.equal(every_valid, full_valid)
    with pytest.raises(ValueError, match="one instance"):
        CandidateSets(xy, k=4, demand=np.zeros(15))
    with pytest.raises(ValueError, match="3 instances asked for 2 rows"):
        CandidateSets(xy, k=4).select(current[:2], visited[:2], pad_id=15)
