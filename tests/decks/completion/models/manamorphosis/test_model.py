import pytest
import torch

from decks.completion.models.manamorphosis.model import DeckDenoiser, DenoiserConfig

from . import tiny_config


def _inputs(B=2, S=60, D=16, seed=0):
    g = torch.Generator().manual_seed(seed)
    return (torch.randn(B, S, D, generator=g), torch.randint(0, 1000, (B,), generator=g),
            torch.rand(B, S, generator=g) < 0.3, torch.tensor([0, 2])[:B])


def test_config_roundtrip_and_defaults():
    c = DenoiserConfig()
    assert (c.dim, c.d_model, c.heads, c.layers, c.ff, c.side_layers, c.context_layers, c.formats) == \
        (128, 256, 8, 6, 1024, 3, 2, 7)
    assert DenoiserConfig.from_dict({**c.to_dict(), "ignored": 1}) == c


def test_forward_shapes_and_parameter_count():
    torch.manual_seed(0)
    m = DeckDenoiser(tiny_config()).eval()
    x, t, k, f = _inputs()
    assert m.forward_main(x, t, k, f).shape == (2, 60, 16)
    xs, _, ks, _ = _inputs(S=15)
    assert m.forward_side(xs, t, ks, f, x).shape == (2, 15, 16)
    assert m.parameter_count() == sum(p.numel() for p in m.parameters())
    assert m.parameter_count("main") + m.parameter_count("side") == m.parameter_count()


def test_permutation_equivariance_no_positional_dependence():
    torch.manual_seed(0)
    m = DeckDenoiser(tiny_config(dropout=0.0)).eval()
    x, t, k, f = _inputs()
    perm = torch.randperm(60)
    with torch.no_grad():
        out = m.forward_main(x, t, k, f)
        out_p = m.forward_main(x[:, perm], t, k[:, perm], f)
        assert torch.allclose(out[:, perm], out_p, atol=1e-5)
        xs, _, ks, _ = _inputs(S=15, seed=1)
        sp = torch.randperm(15)
        side = m.forward_side(xs, t, ks, f, x)
        assert torch.allclose(side[:, sp], m.forward_side(xs[:, sp], t, ks[:, sp], f, x), atol=1e-5)
        # the main-deck context is a set too: permuting it changes nothing
        assert torch.allclose(side, m.forward_side(xs, t, ks, f, x[:, perm]), atol=1e-5)
        # precomputed context memory gives the same result
        assert torch.allclose(side, m.forward_side(xs, t, ks, f, memory=m.encode_context(x, f)), atol=1e-6)


def test_conditioning_matters_and_unknown_format():
    torch.manual_seed(0)
    m = DeckDenoiser(tiny_config()).eval()
    x, t, k, f = _inputs()
    with torch.no_grad():
        base = m.forward_main(x, t, k, f)
        assert not torch.allclose(base, m.forward_main(x, t + 1, k, f))
        assert not torch.allclose(base, m.forward_main(x, t, ~k, f))
        unknown = torch.tensor([3, 3])  # formats=3 -> index 3 is "unknown"
        assert torch.allclose(m.forward_main(x, t, k, unknown), m.forward_main(x, t, k, torch.tensor([-1, 99])))


def test_from_tensors_roundtrip():
    torch.manual_seed(0)
    m = DeckDenoiser(tiny_config()).eval()
    m2 = DeckDenoiser.from_tensors(tiny_config().to_dict(), m.state_dict())
    x, t, k, f = _inputs()
    with torch.no_grad():
        assert torch.equal(m.forward_main(x, t, k, f), m2.forward_main(x, t, k, f))


def test_v_prediction_returns_eps():
    torch.manual_seed(0)
    m = DeckDenoiser(tiny_config(prediction="v")).eval()
    x, t, k, f = _inputs()
    with torch.no_grad():
        raw = m.forward_main(x, t, k, f, raw=True)
        eps = m.forward_main(x, t, k, f)
    a, s = m.sqrt_ab[t][:, None, None], m.sqrt_1m_ab[t][:, None, None]
    assert torch.allclose(eps, s * x + a * raw, atol=1e-6)
    assert "sqrt_ab" not in m.state_dict()  # schedule buffers are not weights
    with pytest.raises(ValueError):
        DeckDenoiser(tiny_config(prediction="x0"))
