"""Which torch device the models run on: ``resolve_device(setting)`` for ``MTG_DEVICE`` (pure: torch only).

``auto`` is ``cuda`` when torch sees a GPU, else ``cpu``; ``cpu`` is always ``cpu``; ``cuda`` is ``cuda`` or,
where torch sees no GPU, :class:`DeviceUnavailable` (never a silent fall-back to the CPU). The site's shell
reads the setting and calls this (``plumbing.device.device``); pure model code takes the device as an argument.
"""
from __future__ import annotations

from collections.abc import Callable

CHOICES = ("auto", "cpu", "cuda")


class DeviceUnavailable(RuntimeError):
    """``MTG_DEVICE=cuda`` where torch sees no GPU."""


def cuda_available() -> bool:
    import torch  # noqa: PLC0415 torch takes seconds to import: only when a device is asked for

    return bool(torch.cuda.is_available())


def resolve_device(requested: str | None, has_cuda: Callable[[], bool] | None = None) -> str:
    """``"cpu"`` or ``"cuda"`` for a setting of ``auto``, ``cpu`` or ``cuda`` (any case, blank = ``auto``);
    ``has_cuda`` says whether a GPU is there (default: :func:`cuda_available`)."""
    wanted = (requested or "auto").strip().lower()
    if wanted not in CHOICES:
        raise ValueError(f"MTG_DEVICE must be one of {', '.join(CHOICES)}, not {requested!r}")
    if wanted == "cpu":
        return "cpu"
    if (has_cuda or cuda_available)():
        return "cuda"
    if wanted == "cuda":
        raise DeviceUnavailable("MTG_DEVICE=cuda, but torch sees no CUDA GPU (torch.cuda.is_available() is False): "
                                "install a CUDA build of torch and the driver, or set MTG_DEVICE=auto or cpu.")
    return "cpu"
