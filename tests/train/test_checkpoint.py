from pathlib import Path

import pytest
import torch

from routecli.miloop.model import MiLoop, MiLoopConfig, load_policy, to_checkpoint
from routecli.train.checkpoint import CheckpointError, config_digest, load, save, shipped, tensor_digest


def small_model() -> MiLoop:
    torch.manual_seed(0)
    return MiLoop(MiLoopConfig(problem="cvrp", dim=16, ff_dim=32, layers=2, gated=False))


def test_policy_round_trip_weights_only(tmp_path):
    model = small_model()
    path = tmp_path / "p.pt"
    save(to_checkpoint(model, {"note": "x"}), path)
    assert [p.name for p in tmp_path.iterdir()] == ["p.pt"]  # no temporary left behind
    loaded = load_policy(path)
    assert loaded.config == model.config
    for (k, a), (_, b) in zip(model.state_dict().items(), loaded.state_dict().items(),
                              strict=True):
        assert torch.equal(a, b), k
    data = load(path, "miloop")
    assert data["meta"] == {"note": "x"} and data["kind"] == "miloop" and data["format"] == 2
    assert data["sha256"] == tensor_digest(model.state_dict())
    assert data["config_sha256"] == config_digest(data["config"])
    torch.load(path, weights_only=True)  # plain tensors and primitives only


def test_a_flipped_byte_in_the_weights_is_refused(tmp_path):
    path = tmp_path / "p.pt"
    data = to_checkpoint(small_model())
    save(data, path)
    raw = bytearray(path.read_bytes())
    weight = data["model"]["embed.weight"].numpy().tobytes()
    at = bytes(raw).find(weight)
    assert at > 0
    raw[at + 3] ^= 0x40
    path.write_bytes(bytes(raw))
    with pytest.raises(CheckpointError, match="SHA-256"):
        load_policy(path)


# short text (the unpickler meets it with a KeyError or an IndexError) and stray pickles too
@pytest.mark.parametrize("content", [b"", b"not a checkpoint", b"PK\x03\x04truncated", b"hello\n",
                                     b"a", b"\x80\x02}q\x00.", b"\x80\x04K\x01."])
def test_unreadable_files_are_one_line_errors(tmp_path, content):
    path = tmp_path / "bad.pt"
    path.write_bytes(content)
    with pytest.raises(CheckpointError, match="not a (readable )?routecli checkpoint"):
        load(path)


def test_missing_unsafe_and_foreign_files_are_refused(tmp_path):
    with pytest.raises(CheckpointError, match="not found"):
        load(tmp_path / "missing.pt")

    class Payload:
        def __reduce__(self):
            return (print, ("pwned",))

    torch.save({"x": Payload()}, tmp_path / "evil.pt")
    with pytest.raises(CheckpointError, match="not a readable"):
        load(tmp_path / "evil.pt")
    torch.save({"config": {}, "model": {}}, tmp_path / "legacy.pt")
    with pytest.raises(CheckpointError, match="format"):
        load(tmp_path / "legacy.pt")
    save(to_checkpoint(small_model()), tmp_path / "m.pt")
    with pytest.raises(CheckpointError, match="a miloop checkpoint, not a nds one"):
        load(tmp_path / "m.pt", "nds")


def test_weights_of_another_architecture_are_refused(tmp_path):
    data = to_checkpoint(small_model())
    data["config"]["dim"] = 32
    save(data, tmp_path / "m.pt")
    with pytest.raises(CheckpointError, match="do not fit the MiLoop architecture"):
        load_policy(tmp_path / "m.pt")


def test_shipped_checkpoints_are_package_data_overridable_by_the_environment(tmp_path,
                                                                            monkeypatch):
    assert shipped("miloop-cvrp.pt").is_file()
    save(to_checkpoint(small_model()), tmp_path / "miloop-cvrp.pt")
    monkeypatch.setenv("ROUTECLI_CHECKPOINTS", str(tmp_path))
    assert shipped("miloop-cvrp.pt") == tmp_path / "miloop-cvrp.pt"
    assert shipped("miloop-tsp.pt").is_file()  # not in the override folder: the package's


class _Payload:
    ran = False

    def __reduce__(self):  # noqa: ANN204 - what a malicious pickle carries
        return (_mark_ran, ())


def _mark_ran() -> None:
    _Payload.ran = True


def test_a_raw_malicious_pickle_is_one_line_without_warnings(tmp_path):
    import pickle
    import warnings

    path = tmp_path / "raw.pt"
    path.write_bytes(pickle.dumps({"kind": "miloop", "model": _Payload()}, protocol=4))
    with warnings.catch_warnings(record=True) as caught, pytest.raises(CheckpointError) as info:
        warnings.simplefilter("always")
        load(path)
    assert not caught and not _Payload.ran  # torch's pickle-protocol warning stays inside
    from routecli.errors import display_path

    assert str(info.value).startswith(f"{display_path(path)}: not a readable routecli checkpoint "
                                      "(a weights-only load refuses it: 'Unsupported")


def test_a_model_dictionary_holding_a_plain_integer_is_refused(tmp_path):
    data = to_checkpoint(small_model())
    data["model"]["embed.weight"] = 3
    torch.save(data, tmp_path / "p.pt")
    with pytest.raises(CheckpointError, match="not a tensor"):
        load_policy(tmp_path / "p.pt")


@pytest.mark.parametrize("layers, message", [
    (10**6, "layers=1000000 does not fit the weights"),  # refused before anything is built
    (3, "configuration and weights differ"),  # within the bound, caught by the layout
])
def test_an_edited_configuration_is_refused_before_the_model_is_built(tmp_path, layers,
                                                                      message):
    data = to_checkpoint(small_model())
    data["config"]["layers"] = layers
    data["config_sha256"] = config_digest(data["config"])  # crafted: the digests match
    torch.save(data, tmp_path / "p.pt")
    with pytest.raises(CheckpointError, match=message):
        load_policy(tmp_path / "p.pt")


def test_a_zero_head_count_is_one_line(tmp_path):
    # fuzz (edited checkpoints): NDS cannot be laid out on the meta device, and num_heads 0
    # passed the bound into a ZeroDivisionError traceback
    from routecli.nds.policy import load_policy as load_nds
    from routecli.train.checkpoint import shipped

    data = torch.load(shipped("nds-cvrp.pt"), map_location="cpu", weights_only=True)
    data["config"]["num_heads"] = 0
    data["config_sha256"] = config_digest(data["config"])  # crafted: the digests match
    torch.save(data, tmp_path / "n.pt")
    with pytest.raises(CheckpointError, match="weights do not fit the NDS architecture"):
        load_nds(tmp_path / "n.pt")


def test_an_edit_that_keeps_every_weight_shape_is_refused_by_the_configuration_digest(
        tmp_path):
    # fuzz (edited checkpoints): nds-cvrp.pt with num_heads 8 -> 16 fits every weight and
    # solved, with another model than the one trained
    from routecli.nds.policy import load_policy as load_nds

    data = torch.load(shipped("nds-cvrp.pt"), map_location="cpu", weights_only=True)
    data["config"]["num_heads"] *= 2
    torch.save(data, tmp_path / "n.pt")
    with pytest.raises(CheckpointError, match="configuration does not match its SHA-256"):
        load_nds(tmp_path / "n.pt")


def test_a_format_1_file_loads_with_its_tensor_digest_checked(tmp_path):
    data = to_checkpoint(small_model())
    data["format"] = 1
    del data["config_sha256"]
    torch.save(data, tmp_path / "old.pt")
    assert load_policy(tmp_path / "old.pt").config == small_model().config
    data["model"]["embed.weight"] += 1
    torch.save(data, tmp_path / "old.pt")
    with pytest.raises(CheckpointError, match="weights do not match"):
        load_policy(tmp_path / "old.pt")


def test_a_folder_is_named_a_folder(tmp_path):
    with pytest.raises(CheckpointError, match="is a folder, not a checkpoint file"):
        load(tmp_path)


def _with_weights(tmp_path: Path, change) -> Path:
    """A checkpoint of :func:`small_model` whose weights ``change`` edits, digests recomputed
    (what a careful forger, or a training run gone wrong, writes)."""
    data = to_checkpoint(small_model())
    change(data["model"])
    path = tmp_path / "edited.pt"
    dense = all(t.layout == torch.strided and not t.is_meta for t in data["model"].values())
    if dense:
        save(data, path)
    else:  # no digest of a sparse or meta tensor: the check must come before the digest's
        torch.save(data, path)
    return path


@pytest.mark.parametrize("change, message", [
    (lambda w: w["embed.weight"].fill_(float("nan")), "embed.weight' holds NaN or infinite"),
    (lambda w: w["embed.weight"].fill_(float("inf")), "holds NaN or infinite"),
    (lambda w: [t.zero_() for t in w.values()], "every weight is zero"),
    (lambda w: w.update({"embed.weight": w["embed.weight"].to_sparse()}), "layout torch.sparse_coo"),
    (lambda w: w.update({"embed.weight": torch.empty(3, 3, device="meta")}), r"no data \(meta\)"),
])
def test_weights_that_cannot_be_a_trained_model_are_refused(tmp_path, change, message):
    path = _with_weights(tmp_path, change)
    with pytest.raises(CheckpointError, match=message):
        load(path)
    with pytest.raises(CheckpointError, match=message):
        load_policy(path)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), [1.0, float("-inf")]])
def test_a_configuration_value_that_is_not_finite_is_refused(tmp_path, value):
    data = to_checkpoint(small_model())
    data["config"]["clip"] = value
    save(data, tmp_path / "clip.pt")
    with pytest.raises(CheckpointError, match="configuration 'clip'=.* is not a plain finite"):
        load_policy(tmp_path / "clip.pt")


def test_a_checkpoint_of_another_problem_or_without_a_runs_state_is_refused(tmp_path):
    save(to_checkpoint(small_model()), tmp_path / "cvrp.pt")
    with pytest.raises(CheckpointError, match="a checkpoint of problem 'cvrp', not 'tsp'"):
        load_policy(tmp_path / "cvrp.pt", expect={"problem": "tsp"})
    with pytest.raises(CheckpointError, match="not a training run's state .no optimizer."):
        load(tmp_path / "cvrp.pt", needs={"optimizer": dict})
    assert load(tmp_path / "cvrp.pt", expect={"problem": "cvrp"})["kind"] == "miloop"
