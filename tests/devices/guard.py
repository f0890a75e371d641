"""A CPU-only stand-in for a GPU run: :class:`DeviceGuard` fails on the device slips that would
break or slow a CUDA run, while everything still computes on the CPU.

Inside the guard, a call made directly from ``routecli`` code fails when it

- creates a tensor from nothing (``torch.zeros``, ``arange``, ``rand``, ``tensor``, ...) or from
  NumPy (``as_tensor``, ``from_numpy``) without a ``device=``: on a GPU run that tensor lands
  on the CPU and the next op mixing it with CUDA data raises;
- copies a tensor to the host (``.cpu()``, ``.numpy()``, ``.to("cpu")`` with the device as a
  string) anywhere but
  :func:`routecli.nn.device.to_host`, the declared CPU boundary: a hidden synchronising
  round trip inside a step;

It cannot see: a ``device=`` that is right on the CPU but hard-coded (``device="cpu"``), a
``torch.Generator()`` made on the CPU (the same object on a CPU run),
tensors made inside torch or NumPy code, ``.item()`` / ``bool(t)`` synchronisations, and
kernels that exist only on one device. ``benchmarks/gpu_check.py`` covers those on a GPU.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import torch
from torch.overrides import TorchFunctionMode

import routecli

PACKAGE = str(Path(routecli.__file__).parent)
BOUNDARY = str(Path(routecli.__file__).parent / "nn" / "device.py")  # to_host: allowed copies

FACTORIES: set[Callable[..., Any]] = {
    torch.zeros, torch.ones, torch.empty, torch.full, torch.arange, torch.linspace, torch.eye,
    torch.rand, torch.randn, torch.randint, torch.randperm, torch.tensor, torch.as_tensor,
    torch.from_numpy, torch.scalar_tensor,
}
HOST_COPIES = {torch.Tensor.cpu, torch.Tensor.numpy}


class DeviceSlip(AssertionError):
    """A tensor left on, or brought back to, the CPU inside a guarded step."""


def _caller() -> str | None:
    """``file:line`` of the code that made the torch call, if it is routecli's own (a call
    from inside torch is torch's business)."""
    frame = sys._getframe(2)
    name = frame.f_code.co_filename
    inside = name.startswith(PACKAGE) and name != BOUNDARY
    return f"{name}:{frame.f_lineno}" if inside else None


def _to_cpu(args: tuple[Any, ...], kwargs: dict[str, Any]) -> bool:
    """``.to("cpu")`` spelled as a string (``.to(x.device)`` follows the data, whatever it is)."""
    targets = [a for a in args[1:] if isinstance(a, str)]
    if isinstance(kwargs.get("device"), str):
        targets.append(kwargs["device"])
    return any(torch.device(target).type == "cpu" for target in targets)


class DeviceGuard(TorchFunctionMode):
    """Raise :class:`DeviceSlip` on the first slip (module docstring) made by routecli code."""

    def __torch_function__(self, func, types, args=(), kwargs=None):  # noqa: ANN001, ANN204
        kwargs = kwargs or {}
        where = _caller()
        if where is not None:
            self._check(func, args, kwargs, where)
        return func(*args, **kwargs)

    @staticmethod
    def _check(func: Any, args: tuple[Any, ...], kwargs: dict[str, Any], where: str) -> None:
        name = getattr(func, "__name__", str(func))
        from_tensor = func is torch.as_tensor and args and isinstance(args[0], torch.Tensor)
        if func in FACTORIES and "device" not in kwargs and not from_tensor:
            raise DeviceSlip(f"{where}: torch.{name} without device=")
        if func in HOST_COPIES or (func is torch.Tensor.to and _to_cpu(args, kwargs)):
            raise DeviceSlip(f"{where}: Tensor.{name} copies to the host inside a step")
