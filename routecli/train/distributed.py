"""Data parallelism for trainers whose forward pass is a loop (a rollout calls the policy once
per construction step, which does not fit ``DistributedDataParallel``'s hooks).

Launched by ``torchrun`` (``WORLD_SIZE > 1``), every process joins one group (``nccl`` on CUDA,
``gloo`` on CPU, the same code path otherwise), starts from rank 0's weights, computes its own
gradients, and :func:`average_gradients` averages them in one collective over one flat buffer
(DDP's arithmetic, without one call per parameter).
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from typing import TypeVar

import torch
import torch.distributed as dist
from torch import nn

T = TypeVar("T", bound=torch.Tensor)


def setup(device: str) -> tuple[int, int]:
    """Join the process group when launched by ``torchrun``; returns (rank, world size)."""
    world = int(os.environ.get("WORLD_SIZE", "1"))
    if world <= 1:
        return 0, 1
    if not dist.is_initialized():
        dist.init_process_group("nccl" if device.startswith("cuda") else "gloo")
    if device.startswith("cuda"):
        torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
    return dist.get_rank(), dist.get_world_size()


def broadcast_parameters(module: nn.Module) -> None:
    """Give every process rank 0's parameters and buffers (one flat buffer per dtype)."""
    tensors = [t.data for t in (*module.parameters(), *module.buffers())]
    for group in _by_dtype(tensors):
        flat = torch.cat([t.reshape(-1) for t in group])
        dist.broadcast(flat, 0)
        offset = 0
        for t in group:
            t.copy_(flat[offset:offset + t.numel()].view_as(t))
            offset += t.numel()


def average_gradients(parameters: Iterable[nn.Parameter], world: int) -> None:
    """Average the gradients over the ``world`` processes: one ``all_reduce`` per parameter
    dtype (one in all for float32 weights) over one flat buffer, which also carries a flag per
    parameter: one used on some process only gets zeros from the others, one that no process
    used keeps no gradient (as without data parallelism)."""
    params = [p for p in parameters if p.requires_grad]
    for group in _by_dtype(params):
        flat = torch.cat([p.grad.reshape(-1) if p.grad is not None else p.new_zeros(p.numel())
                          for p in group]
                         + [torch.tensor([float(p.grad is not None) for p in group],
                                         dtype=group[0].dtype, device=group[0].device)])
        dist.all_reduce(flat)
        used = flat[-len(group):].tolist()
        flat /= world
        offset = 0
        for p, flag in zip(group, used, strict=True):
            p.grad = flat[offset:offset + p.numel()].view_as(p) if flag > 0 else None
            offset += p.numel()


def _by_dtype(tensors: list[T]) -> list[list[T]]:
    groups: dict[torch.dtype, list[T]] = {}
    for t in tensors:
        groups.setdefault(t.dtype, []).append(t)
    return list(groups.values())


def barrier() -> None:
    """Wait for every process (one that labels data while the others wait for its files)."""
    dist.barrier()


def any_rank(flag: bool) -> bool:
    """Whether ``flag`` holds on any process (an all-reduce: call it on every rank)."""
    device = "cuda" if dist.get_backend() == "nccl" else "cpu"
    value = torch.tensor([int(flag)], device=device)
    dist.all_reduce(value, op=dist.ReduceOp.MAX)
    return bool(value.item())
