import numpy as np
import pytest

from routecli.generate.portgen import E_SERIES, e_series_name, e_series_seed, portgen, portgen_name


def reference(n, seed):
    """A plain transcription of portgen's sprand/lprand (post-decrement lags)."""
    arr = [0] * 55
    arr[0] = last = seed
    nxt = 1
    for i in range(1, 55):
        ii = (21 * i) % 55
        arr[ii] = nxt
        nxt = last - nxt
        if nxt < 0:
            nxt += 10**9
        last = arr[ii]
    state = {"a": 0, "b": 24}

    def draw():
        a, b = state["a"], state["b"]
        state["a"] = 54 if a == 0 else a - 1
        state["b"] = 54 if b == 0 else b - 1
        t = arr[state["a"]] - arr[state["b"]]
        if t < 0:
            t += 10**9
        arr[state["a"]] = t
        return t

    for _ in range(165):
        draw()
    return np.array([[draw() // 1000, draw() // 1000] for _ in range(n)])


@pytest.mark.parametrize("n,seed", [(1, 0), (50, 1000), (200, 10001)])
def test_portgen_matches_the_generator_step_by_step(n, seed):
    np.testing.assert_array_equal(portgen(n, seed), reference(n, seed))


def test_coordinates_lie_in_the_portgen_range():
    xy = portgen(5000, 1234)
    assert xy.min() >= 0 and xy.max() <= 999_999


def test_e_series_names_and_seeds():
    assert e_series_seed(1000, 0) == 1000 and e_series_seed(1000, 3) == 10003
    assert e_series_name(E_SERIES["1M"], 1_000_000) == "E1M.0"
    assert e_series_name(100_000, 1_000_001) == "E100k.1"
    assert portgen_name(1000, 7) == "portgen-1000-7"


@pytest.mark.parametrize("n,seed", [(0, 1), (10, -1), (10, 10**9)])
def test_undefined_portgen_calls_are_refused(n, seed):
    with pytest.raises(ValueError, match="portgen"):
        portgen(n, seed)
