"""What each model kind's weights file must hold, from its config (no Django, no weights loaded).

``expected_shapes(kind, config) -> {tensor name: shape}`` builds the network on PyTorch's ``meta``
device (no memory, no computation) or computes the shapes; ``dtypes(kind, config)`` the allowed
dtypes. Uploads are checked against both before any row is written.
"""
from __future__ import annotations

from ml.safetensors_check import FLOATS


class ConfigError(ValueError):
    """The config does not describe a model of this kind."""


def _need(config: dict, *keys):
    missing = [k for k in keys if k not in config]
    if missing:
        raise ConfigError(f"the config lacks {', '.join(missing)}")


def card_embeddings_shapes(config: dict) -> dict:
    _need(config, "vocab", "dim")
    v, d = int(config["vocab"]), int(config["dim"])
    return {"embeddings": (v, d), "classifier.weight": (v, d), "classifier.bias": (v,)}


def deck_diffusion_shapes(config: dict) -> dict:
    import torch

    from ml.diffusion.model import DeckDenoiser, DenoiserConfig

    _need(config, "model")
    try:
        with torch.device("meta"):
            model = DeckDenoiser(DenoiserConfig.from_dict(config["model"]))
    except (TypeError, ValueError, AssertionError, RuntimeError) as exc:
        raise ConfigError(f"the model config cannot build a denoiser: {exc}") from None
    return {name: tuple(t.shape) for name, t in model.state_dict().items()}


MASKED_FORMAT = "masked-v1"


def deck_masked_shapes(config: dict) -> dict:
    import torch

    from ml.diffusion.masked import MaskedConfig, MaskedDenoiser

    _need(config, "model", "cards")
    if config.get("format", MASKED_FORMAT) != MASKED_FORMAT:
        raise ConfigError(f"unknown deck_masked format {config.get('format')!r} ({MASKED_FORMAT})")
    if not isinstance(config["model"], dict) or not isinstance(config["cards"], list):
        raise ConfigError("model must be a JSON object and cards a list of card names")
    try:
        mc = MaskedConfig.from_dict(config["model"])
        if int(mc.vocab) != len(config["cards"]) + 1:
            raise ConfigError(f"model.vocab is {mc.vocab} but cards lists {len(config['cards'])} names "
                              f"(the vocabulary is the cards plus token 0, unknown)")
        with torch.device("meta"):
            model = MaskedDenoiser(mc)
    except (TypeError, ValueError, AssertionError, RuntimeError) as exc:
        if isinstance(exc, ConfigError):
            raise
        raise ConfigError(f"the model config cannot build a masked denoiser: {exc}") from None
    return {name: tuple(t.shape) for name, t in model.state_dict().items()}


def draft_bot_shapes(config: dict) -> dict:
    fmt = config.get("format")
    if fmt == "archetype-v1":
        _need(config, "cards", "archetypes")
        c, k = len(config["cards"]), len(config["archetypes"])
        return {"weights": (c, k), "prior": (k,), "bias": (c,)}
    if fmt == "neural-pick-v1":
        import torch

        from drafts.bots.neural import NeuralConfig, NeuralPickNet

        _need(config, "cards", "net")
        try:
            cfg = NeuralConfig.from_dict(config["net"])
            with torch.device("meta"):
                net = NeuralPickNet(len(config["cards"]), cfg)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"the net config cannot build a pick net: {exc}") from None
        members = int(config.get("ensemble", cfg.ensemble) or 1)
        return {f"member{m}.{name}": tuple(t.shape) for m in range(members) for name, t in net.state_dict().items()}
    raise ConfigError(f"unknown draft bot format {fmt!r} (archetype-v1 or neural-pick-v1)")


def game_policy_shapes(config: dict) -> dict:
    from gameplay.core.value import FEATURES, FORMAT

    _need(config, "hidden")
    if config.get("format", FORMAT) != FORMAT:
        raise ConfigError(f"unknown game policy format {config.get('format')!r} ({FORMAT})")
    try:
        sizes = [len(FEATURES), *(int(h) for h in config["hidden"]), 1]
    except (TypeError, ValueError):
        raise ConfigError("hidden must be a list of layer widths, e.g. [32]") from None
    if any(n < 1 for n in sizes):
        raise ConfigError("layer widths must be positive")
    shapes = {"mean": (len(FEATURES),), "std": (len(FEATURES),)}
    for i in range(len(sizes) - 1):
        shapes[f"layer{i}.weight"] = (sizes[i + 1], sizes[i])
        shapes[f"layer{i}.bias"] = (sizes[i + 1],)
    return shapes


SHAPES = {"card_embeddings": card_embeddings_shapes, "deck_diffusion": deck_diffusion_shapes,
          "deck_masked": deck_masked_shapes, "draft_bot": draft_bot_shapes, "game_policy": game_policy_shapes}


def expected_shapes(kind: str, config: dict) -> dict:
    if not isinstance(config, dict):
        raise ConfigError("the config must be a JSON object")
    if kind not in SHAPES:
        raise ConfigError(f"uploads of {kind} are not supported (only {', '.join(SHAPES)})")
    return SHAPES[kind](config)


def dtypes(kind: str, config: dict):
    if kind == "card_embeddings":
        return {"embeddings": frozenset({"F16", "F32"}), "classifier.weight": frozenset({"F16", "F32"}),
                "classifier.bias": frozenset({"F32", "F16"})}
    return FLOATS


def required_metadata(kind: str, config: dict) -> dict:
    """Metadata keys the loader needs, with a check for each: {key: (check(value) -> problem or None)}."""
    if kind == "card_embeddings":
        import json

        def names(value):
            try:
                got = json.loads(value)
            except ValueError:
                return "metadata 'names' is not a JSON list"
            if not isinstance(got, list) or len(got) != int(config["vocab"]):
                return f"metadata 'names' must list the {config['vocab']} card names of the vocabulary"
            return None
        return {"names": names}
    if kind == "game_policy":
        import json

        from gameplay.core.value import FEATURES, FORMAT

        def fmt(value):
            return None if value == FORMAT else f"metadata 'format' must be {FORMAT!r}"

        def features(value):
            try:
                return None if json.loads(value) == list(FEATURES) else "metadata 'features' are not this code's features"
            except ValueError:
                return "metadata 'features' is not a JSON list"
        return {"format": fmt, "features": features}
    if kind == "deck_masked":
        def masked_format(value):
            return None if value == MASKED_FORMAT else f"metadata 'format' must be {MASKED_FORMAT!r}"
        return {"format": masked_format}
    return {}


# --- quick presets: tiny runs for a fresh site, tests and smoke checks ----------------------------------------

QUICK = {
    "card_embeddings": {"epochs": 5, "dim": 32, "classifier_epochs": 1, "workers": 1},
    "deck_diffusion": {"steps": 60, "batch": 16, "d_model": 64, "heads": 4, "layers": 2, "ff": 128, "side_layers": 1,
                       "context_layers": 1, "eval_every": 30, "limit": 2000, "warmup": 10},
    "deck_masked": {"steps": 40, "examples": 400, "batch": 16, "d_model": 32, "heads": 2, "layers": 1, "ff": 64,
                    "candidates": 48},
    "draft_bot:archetype": {"epochs": 3},
    "game_policy": {"games": 5, "workers": 1, "epochs": 60, "hidden": "8"},
    "draft_bot:neural": {"epochs": 2, "net": {"hidden": [64], "epochs": 2, "refit": False, "batch_size": 256,
                                              "patience": 2, "ensemble": 1}},
}


def quick_parameters(kind: str, scope: str = "") -> dict:
    key = f"{kind}:{scope.split(':')[0]}" if kind == "draft_bot" else kind
    return dict(QUICK.get(key, {}))
