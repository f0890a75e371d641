import torch

from routecli.models.miloop import MiLoop, MiLoopConfig
from routecli.train.checkpoint import atomic_save, load, load_policy, policy_checkpoint


def test_policy_round_trip_weights_only(tmp_path):
    torch.manual_seed(0)
    model = MiLoop(MiLoopConfig(problem="cvrp", dim=16, ff_dim=32, layers=2, gated=False))
    path = tmp_path / "p.pt"
    atomic_save(policy_checkpoint(model, {"note": "x"}), path)
    assert [p.name for p in tmp_path.iterdir()] == ["p.pt"]  # no temporary left behind
    loaded = load_policy(path)
    assert loaded.config == model.config
    for (k, a), (_, b) in zip(model.state_dict().items(), loaded.state_dict().items(),
                              strict=True):
        assert torch.equal(a, b), k
    assert load(path)["meta"] == {"note": "x"}
    torch.load(path, weights_only=True)  # plain tensors and primitives only
