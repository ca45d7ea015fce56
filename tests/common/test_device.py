"""common.device.resolve_device: the one resolution of MTG_DEVICE (pure: no Django)."""
import pytest

from common.device import CHOICES, DeviceUnavailable, cuda_available, resolve_device


def test_auto_is_cpu_without_a_gpu_and_cuda_with_one():
    assert resolve_device("auto", lambda: False) == "cpu"
    assert resolve_device("auto", lambda: True) == "cuda"
    assert resolve_device("", lambda: False) == "cpu"
    assert resolve_device(None, lambda: True) == "cuda"


def test_auto_follows_torch():
    assert resolve_device("auto") == ("cuda" if cuda_available() else "cpu")


def test_cpu_is_cpu_even_with_a_gpu():
    assert resolve_device("cpu", lambda: True) == "cpu"
    assert resolve_device(" CPU ", lambda: False) == "cpu"


def test_cuda_without_a_gpu_is_a_clear_error_not_a_cpu_fallback():
    with pytest.raises(DeviceUnavailable, match="MTG_DEVICE=cuda.*no CUDA GPU"):
        resolve_device("cuda", lambda: False)
    assert resolve_device("cuda", lambda: True) == "cuda"


def test_an_unknown_setting_names_the_choices():
    with pytest.raises(ValueError, match="auto, cpu, cuda"):
        resolve_device("gpu", lambda: True)
    assert CHOICES == ("auto", "cpu", "cuda")
