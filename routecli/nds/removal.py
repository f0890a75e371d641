"""The learned removal policy as the search engine's :class:`routecli.search.ruin.RemovalPolicy`,
alone (the PE paper's NDS) or interleaved with string removal (:class:`HybridRemoval`)."""

from __future__ import annotations

import numpy as np
import torch

from routecli.nds.features import node_features, removable, solution_batch
from routecli.nds.options import BF16_ON_CPU
from routecli.nds.policy import NDSPolicy, sample_latent, unit_distance
from routecli.nn.device import mixed_precision, to_host
from routecli.problems.geometry import augment8
from routecli.search.ruin import POLICY_STRINGS
from routecli.search.state import SearchProblem, SearchState


class LearnedRemoval:
    """:class:`routecli.search.ruin.RemovalPolicy` backed by an :class:`NDSPolicy`.

    Each call encodes the current solution on the 8 symmetric images of the instance
    (:func:`routecli.problems.geometry.augment8`; only the instance itself without ``augment``)
    and samples ``rollouts / 8`` removal sets per image (at least one), each with its own
    latent ``z``. The encoding is kept while the
    solution stays the same (the search rejected the last proposal), so a rejected
    iteration costs only the decoder: the encoder is about three quarters of a call on a CPU.
    The policy runs on the device its weights are on; the proposals go back to the search
    engine as NumPy arrays.
    """

    name = "learned"
    kernel: int | None = None
    every: int | None = None

    def __init__(self, model: NDSPolicy, augment: bool = True, precision: str = "auto"):
        self.model = model.eval()
        self.augment = augment
        # the encoder's arithmetic (bf16 runs its matrix products on the CPU's bf16 units, AMX
        # / AVX-512-BF16: several times the fp32 rate); the decoder stays fp32, its steps are
        # small and bound by per-operation overhead, where bf16 measured slower
        self.precision = precision
        self.device = next(model.parameters()).device
        self._images: tuple[SearchProblem, np.ndarray, torch.Tensor] | None = None
        self._encoded: tuple[SearchProblem, bytes, torch.Tensor] | None = None
        self.encodings = 0  # encoder calls so far (the rest of the proposals reused one)

    def images(self, problem: SearchProblem) -> np.ndarray:
        """The coordinate copies the policy reads (cached per problem). ``[A, V, 2]``."""
        if self._images is None or self._images[0] is not problem:  # holding it keeps ids unique
            unit = problem.unit_coords
            self._images = (problem, augment8(unit) if self.augment else unit[None],
                            unit_distance(unit, self.device)[None])
        return self._images[1]

    def distance(self, problem: SearchProblem) -> torch.Tensor:
        """Unit-square distances of the problem (cached with the images). ``[1, V, V]``."""
        self.images(problem)
        assert self._images is not None
        return self._images[2]

    @torch.inference_mode()
    def propose(self, problem: SearchProblem, state: SearchState, rng: np.random.Generator,
                k: int, rollouts: int) -> np.ndarray:
        coords = self.images(problem)  # [A, V, 2]
        copies = len(coords)
        allowed = removable(problem, state, copies, self.device)  # [A, V]
        steps = min(k, int(allowed[0].sum()))
        if steps == 0:
            return np.full((rollouts, 1), -1, np.int64)
        per_copy = max(1, -(-rollouts // copies))
        generator = torch.Generator(self.device).manual_seed(int(rng.integers(2**62)))
        latent = sample_latent(copies, per_copy, self.model.config.latent_dim, generator)
        actions, _ = self.model.decode(self.encode(problem, state), allowed, latent, steps,
                                       generator, distance=self.distance(problem))
        return to_host(actions.reshape(-1, steps)[:rollouts]).astype(np.int64)

    @torch.inference_mode()
    def encode(self, problem: SearchProblem, state: SearchState) -> torch.Tensor:
        """Embeddings of ``state`` on the images ``[A, V, E]``, reused while the solution
        (successors, predecessors, routes, positions: everything the features derive from)
        is unchanged."""
        key = state.nodes.tobytes()
        cached = self._encoded
        if cached is not None and cached[0] is problem and cached[1] == key:
            return cached[2]
        coords = self.images(problem)
        with mixed_precision(self.device, self.precision, BF16_ON_CPU):
            emb = self.model.encode(node_features(problem, state, coords, self.device),
                                    solution_batch(problem, state, coords, self.device)).float()
        self._encoded = (problem, key, emb)
        self.encodings += 1
        return emb


class HybridRemoval:
    """String removal in the engine's compiled loop with one learned iteration after every
    ``every`` string iterations: ``rollouts`` proposals of ``remove`` customers from ``learned``,
    repaired, the best one competing under the same annealing rule."""

    name = "hybrid"
    kernel: int | None = POLICY_STRINGS

    def __init__(self, learned: LearnedRemoval, every: int, rollouts: int, remove: int):
        self.learned = learned
        self.every: int | None = every
        self.rollouts = rollouts
        self.remove = remove
        self.calls = 0  # learned iterations so far

    def propose(self, problem: SearchProblem, state: SearchState, rng: np.random.Generator,
                k: int, rollouts: int) -> np.ndarray:
        # k and rollouts size the string iterations; the learned ones have their own
        self.calls += 1
        return self.learned.propose(problem, state, rng, self.remove, self.rollouts)
