"""MTG_DEVICE in the shell: every place that picks a device goes through plumbing.device.device (which resolves the
setting with common.device.resolve_device): the worker's start-up check, complete_batch, the training kinds'
``device`` default and the completers."""
import os
import subprocess
import sys

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

import common.device
from common.device import DeviceUnavailable
from decks.completion import completers
from decks.completion.training import training_device
from ml.kinds import TrainingError
from mtgsite import celery as site_celery
from plumbing.device import device

NO_GPU = "torch sees no CUDA GPU"


@pytest.fixture
def no_gpu(monkeypatch):
    monkeypatch.setattr(common.device, "cuda_available", lambda: False)


@pytest.fixture
def a_gpu(monkeypatch):
    monkeypatch.setattr(common.device, "cuda_available", lambda: True)


def test_setting_resolves(settings, no_gpu):
    settings.MTG_DEVICE = "auto"
    assert device() == "cpu"
    settings.MTG_DEVICE = "cpu"
    assert device() == "cpu"
    settings.MTG_DEVICE = "cuda"
    with pytest.raises(DeviceUnavailable, match=NO_GPU):
        device()


def test_auto_takes_the_gpu_and_cpu_pins_the_cpu(settings, a_gpu):
    settings.MTG_DEVICE = "auto"
    assert device() == "cuda"
    assert training_device(None) == "cuda"
    settings.MTG_DEVICE = "cpu"
    assert device() == "cpu"
    assert training_device(None) == "cpu"


def test_worker_start_up_stops_on_cuda_without_a_gpu(settings, no_gpu):
    settings.MTG_DEVICE = "cuda"
    with pytest.raises(SystemExit, match=f"Celery worker not started: .*{NO_GPU}"):
        site_celery.check_device()
    settings.MTG_DEVICE = "auto"
    site_celery.check_device()  # starts


def test_complete_batch_stops_on_cuda_without_a_gpu(settings, no_gpu, tmp_path):
    settings.MTG_DEVICE = "cuda"
    tasks = tmp_path / "in.jsonl"
    tasks.write_text("{}\n")
    with pytest.raises(CommandError, match=NO_GPU):
        call_command("complete_batch", "--in", str(tasks), "--out", str(tmp_path / "out.jsonl"))


def test_training_device_parameter_defaults_to_the_setting(settings, no_gpu):
    settings.MTG_DEVICE = "cuda"
    with pytest.raises(TrainingError, match=NO_GPU):
        training_device(None)
    assert training_device("cpu") == "cpu"  # the run's own parameter wins
    with pytest.raises(TrainingError, match=NO_GPU):
        training_device("cuda")
    with pytest.raises(TrainingError, match="auto, cpu, cuda"):
        training_device("gpu")


def test_completers_use_the_one_function():
    assert completers.device is device


def test_an_unknown_setting_stops_the_site_at_start_up():
    env = {**os.environ, "MTG_DEVICE": "gpu"}
    run = subprocess.run([sys.executable, "-c", "import mtgsite.settings"], env=env, capture_output=True, text=True,
                         timeout=60)
    assert run.returncode != 0
    assert "MTG_DEVICE must be one of auto, cpu, cuda, not 'gpu'" in run.stderr
