import numpy as np
import pytest
import torch

from decks.completion.models.manamorphosis.model import DeckDenoiser
from decks.completion.models.manamorphosis.trainer import TrainConfig, load_checkpoint, lr_at, train

from . import make_corpus, make_embeddings, tiny_config, trained_tiny

MICRO = dict(d_model=16, heads=2, layers=1, ff=32, side_layers=1, context_layers=1)


def test_lr_schedule():
    tc = TrainConfig(lr=1e-3, steps=100, warmup=10)
    assert lr_at(0, tc) == pytest.approx(1e-4)
    assert lr_at(9, tc) == pytest.approx(1e-3)
    assert lr_at(10, tc) == pytest.approx(1e-3)
    assert lr_at(55, tc) == pytest.approx(5e-4)
    assert lr_at(99, tc) < 1e-6


def test_training_reduces_loss():
    _, _, _, _, metrics = trained_tiny()
    hist = [h for h in metrics["history"] if h.get("val_loss") is not None]
    assert hist[0]["step"] == 0 and hist[-1]["step"] == metrics["steps"] == 300
    assert hist[-1]["val_loss"] < 0.6 * hist[0]["val_loss"]
    assert hist[-1]["loss"] < hist[1]["loss"]
    assert metrics["val_loss_main"] > 0 and metrics["val_loss_side"] > 0 and not metrics["ema"]


def test_checkpoint_resume_matches_one_run(tmp_path):
    arrays = make_corpus(60)
    E = make_embeddings()
    cfg = tiny_config(**MICRO)
    tc = TrainConfig(batch=8, lr=1e-3, steps=10, warmup=3, eval_every=5, seed=3, ema=0.9)
    calls = []
    one, m1 = train(arrays, arrays.subset(np.arange(8)), E, cfg, tc,
                    progress=lambda s, n, loss, val: calls.append((s, n, val)))
    assert [c[0] for c in calls] == list(range(1, 11)) and calls[-1][1] == 10
    assert calls[4][2] is not None and calls[3][2] is None
    ck = tmp_path / "ck.safetensors"
    _, half = train(arrays, arrays.subset(np.arange(8)), E, cfg, tc, checkpoint_path=ck, stop_after=5)
    assert half["steps"] == 5 and not half["finished"]
    tensors, meta = load_checkpoint(ck)
    assert meta["step"] == 5 and meta["model_config"] == cfg.to_dict()
    assert any(k.startswith("opt/") for k in tensors) and any(k.startswith("ema/") for k in tensors)
    two, m2 = train(arrays, arrays.subset(np.arange(8)), E, cfg, tc, checkpoint_path=ck, resume=True)
    assert m2["steps"] == 10 and m2["finished"]
    for k in one:
        assert torch.allclose(one[k], two[k], atol=1e-5), k
    assert m2["val_loss"] == pytest.approx(m1["val_loss"], rel=1e-4)
    assert [h["step"] for h in m2["history"]] == [h["step"] for h in m1["history"]] == [0, 5, 10]
    # the returned weights load into a model
    DeckDenoiser.from_tensors(cfg.to_dict(), two)
    with pytest.raises(ValueError):
        train(arrays, None, E, tiny_config(**{**MICRO, "d_model": 8}), tc, checkpoint_path=ck, resume=True)


def test_train_rejects_bad_inputs():
    arrays = make_corpus(6)
    with pytest.raises(ValueError):
        train(arrays, None, make_embeddings()[:, :8], tiny_config(**MICRO), TrainConfig(steps=1, batch=2))
    with pytest.raises(ValueError):
        train(arrays, None, make_embeddings()[:20], tiny_config(**MICRO), TrainConfig(steps=1, batch=2))
