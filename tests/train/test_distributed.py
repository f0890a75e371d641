import os
import socket

import pytest
import torch
import torch.distributed as dist
import torch.multiprocessing as mp
from torch import nn

from routecli.train import distributed


def _worker(rank: int, port: int, out: str) -> None:
    os.environ.update(MASTER_ADDR="127.0.0.1", MASTER_PORT=str(port), RANK=str(rank),
                      WORLD_SIZE="2", LOCAL_RANK=str(rank))
    assert distributed.setup("cpu") == (rank, 2)
    torch.manual_seed(rank)  # different weights on each process before the broadcast
    model = nn.ModuleDict({"a": nn.Linear(3, 2), "b": nn.Linear(2, 2), "unused": nn.Linear(2, 1)})
    distributed.broadcast_parameters(model)
    model["a"].weight.grad = torch.full((2, 3), float(rank + 1))
    model["a"].bias.grad = torch.full((2,), float(rank))
    if rank == 1:  # used on one process only
        model["b"].weight.grad = torch.ones(2, 2)
    calls = []
    reduce = dist.all_reduce
    dist.all_reduce = lambda *a, **k: calls.append(1) or reduce(*a, **k)
    distributed.average_gradients(model.parameters(), 2)
    dist.all_reduce = reduce
    torch.save({"calls": len(calls), "state": model.state_dict(),
                "grads": {n: p.grad for n, p in model.named_parameters()}}, f"{out}{rank}.pt")
    dist.destroy_process_group()


@pytest.mark.slow
def test_gradients_are_averaged_in_one_flat_all_reduce(tmp_path):
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    mp.spawn(_worker, args=(port, str(tmp_path / "r")), nprocs=2, join=True)
    a, b = (torch.load(tmp_path / f"r{r}.pt", weights_only=False) for r in (0, 1))
    assert a["calls"] == b["calls"] == 1
    for k in a["state"]:
        assert torch.equal(a["state"][k], b["state"][k]), k  # rank 0's weights everywhere
    for result in (a, b):
        grads = result["grads"]
        assert torch.equal(grads["a.weight"], torch.full((2, 3), 1.5))
        assert torch.equal(grads["a.bias"], torch.full((2,), 0.5))
        assert torch.equal(grads["b.weight"], torch.full((2, 2), 0.5))
        assert grads["b.bias"] is None and grads["unused.weight"] is None
