import torch

from decks.completion.models.manamorphosis.schedule import cosine_schedule, q_sample


def test_cosine_schedule_shapes_and_monotonic():
    s = cosine_schedule(1000)
    assert s.T == 1000
    for name in ("betas", "alphas", "alphas_cumprod", "alphas_cumprod_prev", "sqrt_ab", "sqrt_1m_ab",
                 "posterior_variance", "posterior_log_variance", "posterior_mean_coef1", "posterior_mean_coef2"):
        assert getattr(s, name).shape == (1000,), name
    ab = s.alphas_cumprod
    assert torch.all(ab[1:] < ab[:-1])
    assert torch.all(s.betas > 0) and torch.all(s.betas <= 0.999 + 1e-6)
    assert ab[0] > 0.999 and ab[-1] < 1e-6
    assert s.alphas_cumprod_prev[0] == 1.0
    assert torch.allclose(s.sqrt_ab ** 2 + s.sqrt_1m_ab ** 2, torch.ones(1000), atol=1e-5)
    assert torch.all(s.posterior_variance >= 0)
    # halfway through, about half the signal variance is left (cosine schedule)
    assert 0.4 < float(ab[500]) < 0.6


def test_q_sample_statistics():
    s = cosine_schedule(1000)
    g = torch.Generator().manual_seed(0)
    x0 = torch.full((4000, 8), 2.0)
    t = torch.full((4000,), 300, dtype=torch.long)
    xt = q_sample(s, x0, t, torch.randn(x0.shape, generator=g))
    assert abs(float(xt.mean()) - 2.0 * float(s.sqrt_ab[300])) < 0.02
    assert abs(float(xt.std()) - float(s.sqrt_1m_ab[300])) < 0.02
    # per-sample t broadcasts over [B, S, D]
    x0 = torch.ones(2, 3, 4)
    t = torch.tensor([0, 999])
    xt = q_sample(s, x0, t, torch.zeros_like(x0))
    assert torch.allclose(xt[0], torch.full((3, 4), float(s.sqrt_ab[0])))
    assert torch.allclose(xt[1], torch.full((3, 4), float(s.sqrt_ab[999])))
