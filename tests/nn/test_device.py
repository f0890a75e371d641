"""The one precision vocabulary: what auto resolves to on which device, under a model's policy."""

import pytest

from routecli.nn import device


def test_auto_precision_is_bf16_only_where_it_is_native(monkeypatch):
    monkeypatch.setattr(device, "native_bf16", lambda device="cpu": False)
    assert device.resolve_precision("auto") == "fp32"  # emulated bf16 is slower
    monkeypatch.setattr(device, "native_bf16", lambda device="cpu": True)
    assert device.resolve_precision("auto") == "bf16"
    assert device.resolve_precision("fp32") == "fp32"  # an explicit choice is kept
    with pytest.raises(ValueError, match="auto or one of"):
        device.resolve_precision("fp16")


def test_a_model_whose_cpu_gains_nothing_keeps_fp32_on_the_cpu_under_auto(monkeypatch):
    monkeypatch.setattr(device, "native_bf16", lambda device="cpu": True)
    assert device.resolve_precision("auto", "cpu", bf16_on_cpu=False) == "fp32"
    assert device.resolve_precision("bf16", "cpu", bf16_on_cpu=False) == "bf16"
    assert device.resolve_precision("auto", "cuda", bf16_on_cpu=False) == "bf16"
