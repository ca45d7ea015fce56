import pytest
import torch

from decks.completion.models.manamorphosis.model import DeckDenoiser
from decks.completion.models.manamorphosis.sampler import ddim_sample, ddim_timesteps, ddpm_sample
from decks.completion.models.manamorphosis.schedule import cosine_schedule

from . import tiny_config


@pytest.fixture(scope="module")
def model():
    torch.manual_seed(0)
    return DeckDenoiser(tiny_config()).eval()


def _known(B=2, S=60, D=16):
    g = torch.Generator().manual_seed(5)
    x0 = torch.randn(B, S, D, generator=g)
    known = torch.zeros(B, S, dtype=torch.bool)
    known[:, : S // 3] = True
    return x0 * known[..., None], known


def test_ddim_timesteps():
    ts = ddim_timesteps(1000, 50)
    assert len(ts) == 50 and ts[0] == 999 and ts[-1] == 0 and all(a > b for a, b in zip(ts, ts[1:]))
    part = ddim_timesteps(1000, 50, t_start=599)
    assert part[0] == 599 and part[-1] == 0 and len(part) == 30


def test_ddim_keeps_known_slots_and_is_seeded(model):
    sched = cosine_schedule()
    kx, known = _known()
    fmt = torch.tensor([0, 1])
    calls = []
    a = ddim_sample(model, sched, kx, known, fmt, torch.Generator().manual_seed(1), steps=20,
                    progress=lambda i, n: calls.append((i, n)))
    b = ddim_sample(model, sched, kx, known, fmt, torch.Generator().manual_seed(1), steps=20)
    c = ddim_sample(model, sched, kx, known, fmt, torch.Generator().manual_seed(2), steps=20)
    assert a.shape == kx.shape and torch.isfinite(a).all()
    assert torch.equal(a[known], kx[known])
    assert torch.equal(a, b) and not torch.equal(a, c)
    assert calls[-1] == (20, 20) and len(calls) == 20
    # clipping bounds the norm of the unknown slots; eta > 0 adds noise but keeps known slots
    clipped = ddim_sample(model, sched, kx, known, fmt, torch.Generator().manual_seed(1), steps=10, clip_x0=1.5)
    assert clipped[~known].norm(dim=-1).max() <= 1.5 + 1e-4
    noisy = ddim_sample(model, sched, kx, known, fmt, torch.Generator().manual_seed(1), steps=10, eta=1.0)
    assert torch.equal(noisy[known], kx[known])


def test_ddpm_keeps_known_slots_and_is_seeded(model):
    sched = cosine_schedule(T=100)  # the full ancestral chain, on a short schedule to keep the test fast
    kx, known = _known(B=1)
    n = []
    a = ddpm_sample(model, sched, kx, known, torch.tensor([0]), torch.Generator().manual_seed(3),
                    progress=lambda i, tot: n.append(tot))
    b = ddpm_sample(model, sched, kx, known, torch.tensor([0]), torch.Generator().manual_seed(3))
    assert len(n) == 100 and torch.equal(a, b) and torch.equal(a[known], kx[known])
    assert torch.isfinite(a).all()


def test_side_path_and_renoise(model):
    sched = cosine_schedule()
    kx, known = _known(B=1, S=15)
    main = torch.randn(1, 60, 16)
    with pytest.raises(ValueError):
        ddim_sample(model, sched, kx, known, torch.tensor([0]), path="side", steps=5)
    a = ddim_sample(model, sched, kx, known, torch.tensor([0]), torch.Generator().manual_seed(0), context=main,
                    steps=10)
    b = ddim_sample(model, sched, kx, known, torch.tensor([0]), torch.Generator().manual_seed(0), context=main,
                    path="side", steps=10)
    assert torch.equal(a, b) and torch.equal(a[known], kx[known])
    # SDEdit-style restart from a given x0 at t_start
    full = torch.randn(1, 15, 16)
    r = ddim_sample(model, sched, full, known, torch.tensor([0]), torch.Generator().manual_seed(0), context=main,
                    steps=10, x_init=full, t_start=300)
    assert r.shape == full.shape and torch.equal(r[known], full[known])
    assert model.training is False


def test_per_row_generators_match_single_rows(model):
    sched = cosine_schedule()
    kx, known = _known(B=2)
    fmt = torch.tensor([0, 1])
    # with x0 clipping: unclipped, the first step (1 / sqrt(alpha_bar) ~ 2e4) magnifies float rounding of the
    # batched matmuls into visible differences
    both = ddim_sample(model, sched, kx, known, fmt, [torch.Generator().manual_seed(s) for s in (7, 8)], steps=10,
                       clip_x0=4.0)
    for r, s in enumerate((7, 8)):
        one = ddim_sample(model, sched, kx[r:r + 1], known[r:r + 1], fmt[r:r + 1], torch.Generator().manual_seed(s),
                          steps=10, clip_x0=4.0)
        assert torch.allclose(both[r:r + 1], one, atol=1e-4)
    with pytest.raises(ValueError):
        ddim_sample(model, sched, kx, known, fmt, [torch.Generator()], steps=2)
