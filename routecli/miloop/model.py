"""MiLoop: selective memory propagation for constructive routing (Zhou et al., 2026).

One shallow decoder is applied at every construction step. A memory matrix ``M`` with one row
per node id is carried through the rollout:

1. embed the current subproblem ``[first, current, candidates]`` (Section 3.1, Eq. 12 for CVRP)
   with role-specific projections for the first and current rows;
2. fuse each row with its memory row through one of three fusion matrices (Eq. 4);
3. run L AAFM layers with the scale-distance bias (Eq. 5, 27-29);
4. gate channel-wise between memory and the new representation, role by role (Eq. 6-7);
5. score candidates from the updated memories (Eq. 8; for CVRP the capacity-conditioned
   context and output AAFM of Eq. 13-16), then write the updated rows back by node id in
   first (depot), current, candidate order: later writes win (Appendix B.1.2).

PDTSP (Appendix B.2, B.4.4): the rows are embedded by node kind (Eq. 18; a pickup together
with its delivery), a pickup row's fusion adds its delivery's memory and embedding (Eq. 19),
and the distance bias uses gamma_t = 1 in training and max(1, log_100 |A_t|) at inference.
KP (Appendix B.3, B.4.5, :meth:`MiLoop.kp_step`): no first/current rows; items are embedded from
their value density and relative weight (Eq. 23), fused and gated with one matrix each
(Eq. 24-25), attend through the value-density bias of Eq. 30, and are scored by a linear head
(Eq. 26).

Ablations (Tables 4-5): ``fusion=False`` skips step 2, ``gated=False`` replaces the memory by
the new representation, ``memory=False`` is a plain dynamic embedding (no memory at all).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

import torch
from torch import Tensor, nn
from torch.utils.checkpoint import checkpoint

from routecli.envs import CVRPEnv, ItemObservation, KPEnv, Observation, PairObservation, PDTSPEnv, TSPEnv
from routecli.envs.pdtsp import PICKUP
from routecli.nn import AAFMBlock, aafm, pairwise_distance, role_linear, scale_distance_bias
from routecli.nn.device import autocast
from routecli.resources import PRECISIONS
from routecli.train import checkpoint as ckpt

PROGRESS_EVERY = 256  # rollout steps between progress callbacks


def precision_dtype(precision: str) -> torch.dtype:
    """The dtype of the policy's activations and memory under ``precision``."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}, not {precision!r}")
    return torch.bfloat16 if precision == "bf16" else torch.float32


@dataclass(frozen=True)
class MiLoopConfig:
    """Architecture; the defaults are the paper's (Table 7)."""

    problem: str = "tsp"  # tsp | cvrp | pdtsp | kp
    dim: int = 128
    layers: int = 3
    ff_dim: int = 512
    clip: float = 10.0  # logit clipping zeta
    fusion: bool = True  # memory fusion before attention (Eq. 4)
    gated: bool = True  # gated memory update (Eq. 6-7); False: memory := new representation
    memory: bool = True  # False: plain dynamic embedding, nothing carried across steps

    def to_dict(self) -> dict:
        return asdict(self)


PROBLEMS = ("tsp", "cvrp", "pdtsp", "kp")


class MiLoop(nn.Module):
    """The MiLoop policy for one problem. Call :meth:`step` once per construction step."""

    def __init__(self, config: MiLoopConfig):
        super().__init__()
        if config.problem not in PROBLEMS:
            raise ValueError(f"MiLoop solves {', '.join(PROBLEMS)}, not {config.problem!r}")
        self.config = config
        d = config.dim
        if config.problem == "kp":
            self.embed = nn.Linear(2, d)  # [v_i / w_i, w_i / c_t] (Eq. 23)
            self.fuse_cand = nn.Linear(2 * d, d, bias=False)  # Eq. 24
            self.blocks = nn.ModuleList(AAFMBlock(d, config.ff_dim) for _ in range(config.layers))
            self.gate_cand = nn.Linear(2 * d, d)  # Eq. 25
            self.out = nn.Linear(d, 1)  # Eq. 26
            return
        # theta_init: shared projection of the node features, role projections (Section 3.1);
        # PDTSP: this one embeds deliveries (and a pickup's delivery), Eq. 18
        self.embed = nn.Linear(3 if config.problem == "cvrp" else 2, d)
        if config.problem == "pdtsp":
            self.embed_depot = nn.Linear(2, d)
            self.embed_pickup = nn.Linear(4, d)  # [x_i || x_{i+n/2}]
        self.role_first = nn.Linear(d, d, bias=False)
        self.role_last = nn.Linear(d, d, bias=False)
        # theta_fusion: [memory || embedding] -> d, one matrix per role (Eq. 4)
        self.fuse_first = nn.Linear(2 * d, d, bias=False)
        self.fuse_last = nn.Linear(2 * d, d, bias=False)
        self.fuse_cand = nn.Linear(2 * d, d, bias=False)
        if config.problem == "pdtsp":  # W^{r,pickup} of Eq. 19; the three above act as W^{r,delivery}
            self.fuse_last_pickup = nn.Linear(2 * d, d, bias=False)
            self.fuse_cand_pickup = nn.Linear(2 * d, d, bias=False)
        # theta_attn
        self.blocks = nn.ModuleList(AAFMBlock(d, config.ff_dim) for _ in range(config.layers))
        # theta_update: role-specific gates (Eq. 6)
        self.gate_first = nn.Linear(2 * d, d)
        self.gate_last = nn.Linear(2 * d, d)
        self.gate_cand = nn.Linear(2 * d, d)
        # theta_logit: compatibility context (Eq. 8 / 13)
        self.context = nn.Linear(2 * d, d)
        if config.problem == "cvrp":
            # capacity-conditioned context (Eq. 13) and output AAFM (Eq. 14-15)
            self.cap_cat = nn.Linear(d + 1, d)
            self.cap_gamma = nn.Linear(1, d)
            self.cap_beta = nn.Linear(1, d)
            self.out_q = nn.Linear(d, d, bias=False)
            self.out_k = nn.Linear(d, d, bias=False)
            self.out_v = nn.Linear(d, d, bias=False)
            self.out_alpha = nn.Parameter(torch.ones(()))

    def new_memory(self, batch: int, num_nodes: int, device: torch.device | str,
                   dtype: torch.dtype = torch.float32) -> Tensor:
        """Zero memory ``[B, N+1, D]``: one row per node id plus a spare row for padding."""
        return torch.zeros(batch, num_nodes + 1, self.config.dim, device=device, dtype=dtype)

    def step(self, obs: Observation | ItemObservation, memory: Tensor,
             first_call: bool) -> tuple[Tensor, Tensor]:
        """One construction step. Returns masked logits ``[B, K]`` (-inf = infeasible) and
        the memory ``[B, N+1, D]`` after the write-back."""
        if isinstance(obs, ItemObservation):
            return self.kp_step(obs, memory, first_call)
        cfg = self.config
        batch = torch.arange(obs.nodes.shape[0], device=obs.nodes.device)[:, None]  # [B, 1]

        # 1. initial embedding of [first, current, candidates] (PDTSP: by node kind, Eq. 18)
        partner_h0 = None
        if isinstance(obs, PairObservation):
            h0, partner_h0 = self.pair_embedding(obs)  # [B, R, D] each
            special, cand = h0[:, :2], h0[:, 2:]
        else:  # the two role rows apart, so that no gradient of a [B, R, D] slice is formed
            special, cand = self.embed(obs.features[:, :2]), self.embed(obs.features[:, 2:])
        h0 = torch.cat([self.role_first(special[:, :1]), self.role_last(special[:, 1:2]), cand], 1)

        # 2. memory fusion (Eq. 4). At the first call the embeddings are the input; the
        # memory they are gated against is the embedding itself for TSP and PDTSP (Algorithm 1,
        # line 14; Appendix B.2.2) and zero for CVRP (Appendix B.1.2).
        if not cfg.memory:
            recalled = None
        elif first_call:
            recalled = torch.zeros_like(h0) if cfg.problem == "cvrp" else h0
        else:
            recalled = memory[batch, obs.nodes].to(h0.dtype)  # [B, R, D]
        if recalled is not None and cfg.fusion and not first_call:
            h = role_linear(torch.cat([recalled, h0], -1), self.fuse_first, self.fuse_last,
                            self.fuse_cand)  # [B, R, D]
            if isinstance(obs, PairObservation) and partner_h0 is not None:
                h = self.pair_fusion(obs, memory, recalled, h0, partner_h0, h)
        else:
            h = h0

        # 3. attention layers with the scale-distance bias (Eq. 29): gamma_t for TSP, and for
        # PDTSP at inference only (Appendix B.4.4)
        distance = pairwise_distance(obs.coords)  # [B, R, R]
        gamma: Tensor | float
        if cfg.problem == "tsp" or (cfg.problem == "pdtsp" and not self.training):
            gamma = (torch.log(obs.num_candidates.float().clamp_min(1.0)) / math.log(100.0))
            gamma = gamma.clamp_min(1.0)  # [B] max{1, log_100 |A_t|}
        else:
            gamma = 1.0
        unit_bias, excluded = scale_distance_bias(distance, obs.valid, obs.num_candidates, gamma)
        for block in self.blocks:
            h = block(h, unit_bias, excluded, obs.valid)  # [B, R, D]

        # 4. selective memory update (Eq. 6-7): M' = (1 - G) * M + G * H
        if recalled is not None and cfg.gated:
            gate = torch.sigmoid(role_linear(torch.cat([recalled, h], -1), self.gate_first,
                                             self.gate_last, self.gate_cand))  # [B, R, D]
            updated = torch.lerp(recalled, h, gate)
        else:
            updated = h
        if cfg.memory:
            memory = write_memory(memory, obs.nodes, updated)

        # 5. action scoring from the updated representations (Eq. 8 / 13-16), in float32
        query = self.context(updated[:, :2].flatten(1))  # [B, D] from [m_first || m_last]
        if cfg.problem == "cvrp":
            query = self.capacity_context(query, obs, updated, distance)
        with torch.autocast(updated.device.type, enabled=False):
            scores = (updated.float() @ query.float()[:, :, None]).squeeze(-1)  # [B, R]
        logits = cfg.clip * torch.tanh(scores[:, 2:] / math.sqrt(cfg.dim))  # [B, K]
        return logits.masked_fill(~obs.feasible, float("-inf")), memory

    def pair_embedding(self, obs: PairObservation) -> tuple[Tensor, Tensor]:
        """Eq. 18: depot, pickup ([x_i || x_{i+n/2}]) and delivery projections, chosen by each
        row's node kind, and each row's delivery-partner embedding (used on pickup rows)."""
        assert obs.kind is not None
        xy, partner_xy = obs.features[..., :2], obs.features[..., 2:]  # [B, R, 2] each
        kind = obs.kind[..., None]  # [B, R, 1]
        h0 = torch.where(kind == PICKUP, self.embed_pickup(obs.features), self.embed(xy))
        h0 = torch.where(kind == 0, self.embed_depot(xy), h0)  # [B, R, D]
        return h0, self.embed(partner_xy)

    def pair_fusion(self, obs: PairObservation, memory: Tensor, recalled: Tensor, h0: Tensor,
                    partner_h0: Tensor, h: Tensor) -> Tensor:
        """Eq. 19 on the pickup rows (current and unvisited roles):
        ``[m_i || h_i] W^{r,pickup} + [m_{i+n/2} || h_{i+n/2}] W^{r,delivery}``; the partner's
        embedding gets the row's role projection (W_last for the current pickup)."""
        assert obs.kind is not None and obs.partner is not None
        batch = torch.arange(obs.nodes.shape[0], device=obs.nodes.device)[:, None]
        partner_m = memory[batch, obs.partner]  # [B, R, D] (spare row where no partner)
        partner_h = torch.cat([self.role_last(partner_h0[:, 1:2]), partner_h0[:, 2:]], 1)
        own = torch.cat([recalled[:, 1:], h0[:, 1:]], -1)  # [B, R-1, 2D]
        pair = torch.cat([partner_m[:, 1:], partner_h], -1)  # [B, R-1, 2D]
        pickup_rows = torch.cat([
            self.fuse_last_pickup(own[:, :1]) + self.fuse_last(pair[:, :1]),
            self.fuse_cand_pickup(own[:, 1:]) + self.fuse_cand(pair[:, 1:]),
        ], 1)  # [B, R-1, D]
        is_pickup = (obs.kind[:, 1:] == PICKUP)[..., None]
        return torch.cat([h[:, :1], torch.where(is_pickup, pickup_rows, h[:, 1:])], 1)

    def kp_step(self, obs: ItemObservation, memory: Tensor,
                first_call: bool) -> tuple[Tensor, Tensor]:
        """One knapsack step over the K candidate items (Appendix B.3.2)."""
        cfg = self.config
        batch = torch.arange(obs.nodes.shape[0], device=obs.nodes.device)[:, None]  # [B, 1]
        h0 = self.embed(obs.features)  # [B, K, D] (Eq. 23)
        recalled = None if not cfg.memory else h0 if first_call else memory[batch, obs.nodes]
        if recalled is not None and cfg.fusion and not first_call:
            h = self.fuse_cand(torch.cat([recalled, h0], -1))  # Eq. 24
        else:
            h = h0
        unit_bias, excluded = density_bias(obs.values, obs.weights, obs.valid, obs.num_candidates)
        for block in self.blocks:
            h = block(h, unit_bias, excluded, obs.valid)  # [B, K, D]
        if recalled is not None and cfg.gated:
            gate = torch.sigmoid(self.gate_cand(torch.cat([recalled, h], -1)))  # Eq. 25
            updated = (1 - gate) * recalled + gate * h
        else:
            updated = h
        if cfg.memory:  # padding rows carry the spare id N
            rows = (batch.expand_as(obs.nodes), obs.nodes)
            memory = (memory.index_put(rows, updated.to(memory.dtype)) if torch.is_grad_enabled()
                      else memory.index_put_(rows, updated.to(memory.dtype)))
        logits = self.out(updated).squeeze(-1).float()  # [B, K] (Eq. 26)
        return logits.masked_fill(~obs.feasible, float("-inf")), memory

    def capacity_context(self, query: Tensor, obs: Observation, updated: Tensor,
                         distance: Tensor) -> Tensor:
        """Eq. 13-15: condition the context on the remaining capacity c_t, then let it read the
        candidate memories (rows 2.. of ``updated`` ``[B, R, D]``) through AAFM with a
        distance-to-current-node bias."""
        assert obs.capacity is not None
        cap = obs.capacity[:, None].to(query.dtype)  # [B, 1]
        query = self.cap_cat(torch.cat([query, cap], -1)) * (1 + self.cap_gamma(cap)) \
            + self.cap_beta(cap)  # [B, D]
        keys = obs.valid.clone()
        keys[:, :2] = False  # [B, R] the valid candidate rows
        to_current = distance[:, 1]  # [B, R] ||x_cur - x_i||
        scale = torch.log2(obs.num_candidates.float().clamp_min(1.0))[:, None]
        read = aafm(self.out_q(query)[:, None], self.out_k(updated), self.out_v(updated),
                    (-scale * to_current)[:, None], keys, ~keys[:, None],
                    self.out_alpha).squeeze(1)  # [B, D]
        return query + read.to(query.dtype)


def density_bias(values: Tensor, weights: Tensor, valid: Tensor,
                 num_candidates: Tensor) -> tuple[Tensor, Tensor]:
    """The unit-coefficient KP bias of Eq. 30 and the excluded pairs, as
    :func:`~routecli.nn.aafm.scale_distance_bias` returns them.

    ``rho_ij = (v_i + v_j) / (w_i + w_j)``, ``rho_i^max`` its maximum over the other valid
    items, bias ``-log2|A_t| (1 - rho_ij / rho_i^max)`` (in ``(-log2|A_t|, 0]``). values,
    weights, valid ``[B, K]``; num_candidates ``[B]``; returns ``[B, K, K]`` twice.
    """
    rho = (values[:, :, None] + values[:, None, :]) / (weights[:, :, None] + weights[:, None, :])
    eye = torch.eye(values.shape[1], dtype=torch.bool, device=values.device)
    excluded = eye[None] | ~valid[:, None, :] | ~valid[:, :, None]  # [B, K, K]
    rho_max = rho.masked_fill(excluded, 0.0).amax(-1, keepdim=True).clamp_min(1e-12)
    scale = torch.log2(num_candidates.float().clamp_min(1.0))[:, None, None]
    return -scale * (1 - rho / rho_max).masked_fill(excluded, 0.0), excluded


def write_memory(memory: Tensor, nodes: Tensor, rows: Tensor) -> Tensor:
    """Write ``rows`` ``[B, R, D]`` to ``memory`` ``[B, N+1, D]`` at ``nodes`` ``[B, R]``.

    Row order is first, current, candidates; when one node holds several roles the later row
    wins (Appendix B.1.2). Losing rows and padding go to the spare slot N. Out of place while
    gradients are recorded, so the autograd graph keeps every step of the rollout; in place
    otherwise, so a decoding step does not copy the ``O(N D)`` memory.
    """
    spare = memory.shape[1] - 1
    r = nodes.shape[1]
    later = torch.arange(r, device=nodes.device)[None, :] > torch.arange(2, device=nodes.device)[:, None]
    overwritten = ((nodes[:, :2, None] == nodes[:, None, :]) & later[None]).any(-1)  # [B, 2]
    target = torch.cat([nodes[:, :2].masked_fill(overwritten, spare), nodes[:, 2:]], 1)
    batch = torch.arange(nodes.shape[0], device=nodes.device)[:, None].expand_as(target)
    if torch.is_grad_enabled():
        return memory.index_put((batch, target), rows.to(memory.dtype))
    return memory.index_put_((batch, target), rows.to(memory.dtype))


@dataclass
class Rollout:
    """Result of constructing one solution per batch row."""

    actions: Tensor  # [B, T] node ids, starting node first
    log_prob: Tensor  # [B] sum of log-probabilities of the counted decisions (Eq. 9)
    cost: Tensor  # [B] objective (of the walk so far when ``until`` stopped the rollout)
    decisions: Tensor  # [B] number of decisions in log_prob
    outside: Tensor  # [B] replayed decisions left out of log_prob: their node was no candidate


def rollout(model: MiLoop, env: TSPEnv | CVRPEnv | PDTSPEnv | KPEnv, decode: str = "sample",
            first_action: Tensor | None = None, generator: torch.Generator | None = None,
            recompute: bool = False, replay: Tensor | None = None,
            progress: Callable[[int], None] | None = None, precision: str = "fp32",
            grad_from: int = 0, until: int | None = None,
            trace: Callable[[int, Observation | ItemObservation, Tensor, Tensor, Tensor],
                            None] | None = None,
            replay_sets: Tensor | None = None,
            check: Callable[[], None] | None = None) -> Rollout:
    """Construct solutions in ``env`` with ``model``, keeping memory and log-probabilities.

    decode: ``sample`` or ``greedy``. first_action ``[B]`` forces the first decision (CVRP,
    PDTSP and KP multi-start: the first customer, pickup or item); forced decisions and no-ops
    of finished instances do not enter the log-probability. recompute: keep only each step's
    inputs for backward and rerun the step then (activation checkpointing): memory
    O(steps x N x D) instead of O(steps x N x FF x layers), for about a third more compute.
    replay ``[B, T]``: follow these node sequences (as returned in :attr:`Rollout.actions`)
    instead of choosing, to recompute their log-probabilities under the current parameters;
    an entry < 0 is decided by the policy (``decode``), so a labelled prefix can be completed
    freely. A replayed node that is not among the step's candidates (``env`` with
    :class:`~routecli.envs.base.CandidateSets`: the K nearest) is still visited, but the
    decision does not count (the policy could not have chosen it; :attr:`Rollout.outside`).
    progress(t) is called every :data:`PROGRESS_EVERY` steps with the number of decisions made.
    precision: ``fp32``, or ``bf16`` (:func:`autocast`; the memory is then kept in bfloat16).
    grad_from: the steps before this one run without gradients and their decisions do not
    count (with ``replay``: teacher forcing on a suffix, the memory at its start reached by
    replaying the prefix under the current parameters, truncated backpropagation through
    the memory).
    until: stop after this many steps (with ``grad_from``: teacher forcing on the window
    ``[grad_from, until)``; the walk is then unfinished).
    replay_sets ``[B, T, N]``: with ``replay``, the node ids as good as the replayed one at each
    step (:func:`routecli.miloop.labels.equivalent_actions`); a counted decision then adds
    ``log P(set)`` instead of the replayed action's log-probability.
    trace(t, obs, log_p, choice, memory): called after each decision with the observation,
    the log-probabilities ``[B, K]``, the chosen candidate index ``[B]`` and the memory after
    the step (analyses of what the policy saw; no effect on the rollout).
    check(): called after every step; an exception it raises abandons the rollout with ``env``
    as the step left it (decoding under a deadline).
    """
    if decode not in ("sample", "greedy"):
        raise ValueError(f"decode must be sample or greedy, not {decode!r}")
    device = env.done.device
    memory = model.new_memory(env.batch, env.num_nodes, device, precision_dtype(precision))
    log_prob = torch.zeros(env.batch, device=device)
    decisions = torch.zeros(env.batch, dtype=torch.long, device=device)
    outside = torch.zeros_like(decisions)
    grad_enabled = torch.is_grad_enabled()
    first_call = True
    step = 0
    t = 0 if isinstance(env, KPEnv) else 1  # next decision's index in Rollout.actions (a
    # routing sequence starts with its starting node, a knapsack's with its first item)
    while step != until:
        done = env.done
        if bool(done.all()):
            break
        with torch.set_grad_enabled(grad_enabled and step >= grad_from):
            obs = env.observe()
            with autocast(precision, device):
                if recompute and torch.is_grad_enabled():
                    logits, memory = checkpoint(model.step, obs, memory, first_call,
                                                use_reentrant=False)
                else:
                    logits, memory = model.step(obs, memory, first_call)
            log_p = torch.log_softmax(logits, -1)  # [B, K]
            cand = obs.nodes[:, obs.nodes.shape[1] - logits.shape[1]:]  # [B, K] (after first, current)
            target = None
            missing = torch.zeros_like(done)  # [B] the replayed node is no candidate
            if replay is not None:
                target = replay[:, t] if t < replay.shape[1] else torch.zeros_like(done, dtype=torch.long)
            if target is not None and bool((target >= 0).all()):
                is_target = cand == target[:, None]  # [B, K]
                choice = is_target.float().argmax(1)
                missing = ~done & ~is_target.any(1)
                counted = ~done & ~missing & (not (first_call and first_action is not None))
            elif first_call and first_action is not None:
                choice = (cand == first_action[:, None]).float().argmax(1)
                counted = torch.zeros_like(done)
            else:
                if decode == "greedy":
                    choice = log_p.argmax(1)
                else:
                    choice = torch.multinomial(log_p.exp(), 1, generator=generator).squeeze(1)
                if target is not None:  # a partly labelled step: labels where given
                    forced = (cand == target[:, None]).float().argmax(1)
                    choice = torch.where(target >= 0, forced, choice)
                counted = ~done
            counted = counted & (step >= grad_from)
            outside += missing & (step >= grad_from)
            picked = log_p.gather(1, choice[:, None]).squeeze(1)
            if replay_sets is not None and t < replay_sets.shape[1]:
                ids = replay_sets[:, t]  # [B, N]; candidates may hold the padding id N
                good = nn.functional.pad(ids, (0, 1)).gather(1, cand.clamp_max(ids.shape[1]))  # [B, K]
                good = good.scatter(1, choice[:, None], True)  # never empty
                picked = log_p.masked_fill(~good, float("-inf")).logsumexp(1)
            log_prob = log_prob + torch.where(counted, picked, torch.zeros_like(picked))
            decisions += counted
            if trace is not None:
                trace(t, obs, log_p, choice, memory)
            node = cand.gather(1, choice[:, None]).squeeze(1)
            env.step(torch.where(missing, target, node) if target is not None else node)
        first_call = False
        t += 1
        step += 1
        if progress is not None and t % PROGRESS_EVERY == 0:
            progress(t)
        if check is not None:
            check()
    return Rollout(env.paths(), log_prob, env.cost(), decisions, outside)


# ------------------------------------------------------------------------------------------
# checkpoints (the shared format of routecli.train.checkpoint)

KIND = "miloop"


def to_checkpoint(model: MiLoop, meta: dict | None = None) -> dict:
    """The shippable form of ``model``: config, float32 weights, ``meta``, digest."""
    return ckpt.policy_checkpoint(KIND, model.config.to_dict(), model.state_dict(), meta)


def load_policy(path: str | Path, device: str | torch.device = "cpu",
                expect: dict[str, Any] | None = None) -> MiLoop:
    """Rebuild a :class:`MiLoop` from a policy or training checkpoint, in eval mode (its
    configuration holding ``expect``: :func:`routecli.train.checkpoint.load`)."""
    return ckpt.load_model(path, KIND, lambda c: MiLoop(MiLoopConfig(**c)), "MiLoop", device,
                           expect)
