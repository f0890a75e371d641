import numpy as np
import pytest
import torch

from routecli.envs.base import path_length
from routecli.problems.geometry import augment8, unit_square


def test_unit_square_keeps_the_aspect_and_fills_the_longer_side() -> None:
    xy = np.array([[10.0, 5.0], [30.0, 5.0], [20.0, 15.0]])
    unit = unit_square(xy)
    np.testing.assert_allclose(unit, [[0, 0], [1, 0], [0.5, 0.5]])
    np.testing.assert_array_equal(unit_square(np.ones((3, 2))), np.zeros((3, 2)))


def test_augment8_gives_the_eight_symmetries_in_numpy() -> None:
    xy = np.random.default_rng(0).random((20, 2))
    images = augment8(xy)
    assert images.shape == (8, 20, 2)
    np.testing.assert_array_equal(images[0], xy)
    assert len({tuple(np.round(im, 12).ravel()) for im in images}) == 8
    assert ((images >= 0) & (images <= 1)).all()


def test_augment8_preserves_tour_lengths_in_torch_in_the_same_order() -> None:
    locs = torch.rand(2, 9, 2)
    views = augment8(locs)
    tour = torch.randperm(9).repeat(2, 1)
    lengths = torch.stack([path_length(v, tour) for v in views])
    torch.testing.assert_close(lengths, lengths[:1].expand(8, -1))
    assert torch.equal(views[0], locs)
    np.testing.assert_allclose(views.numpy(), augment8(locs.numpy()), rtol=0, atol=0)


@pytest.mark.parametrize("image", range(8))
def test_each_image_maps_the_unit_square_onto_itself(image: int) -> None:
    corners = np.array([[0.0, 0.0], [1.0, 0.0], [0.0, 1.0], [1.0, 1.0]])
    mapped = augment8(corners)[image]
    assert {tuple(p) for p in mapped} == {tuple(p) for p in corners}
