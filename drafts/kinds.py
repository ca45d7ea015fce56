"""The registry kind ``draft_bot`` (scope FAMILY:SET, archetype or neural): what an uploaded version's weights
must hold, the scope, the training parameters with their types and the quick preset. Training and evaluation are
``drafts.training``'s; registered with ``ml.kinds`` from ``DraftsConfig.ready`` (it imports the models)."""
from __future__ import annotations

from drafts.training import FAMILIES, KIND, QUICK, evaluate, train
from ml.kinds import ConfigError, Kind, TrainingError, need


def shapes(config: dict) -> dict:
    fmt = config.get("format")
    if fmt == "archetype-v1":
        need(config, "cards", "archetypes")
        c, k = len(config["cards"]), len(config["archetypes"])
        return {"weights": (c, k), "prior": (k,), "bias": (c,)}
    if fmt == "neural-pick-v1":
        import torch  # noqa: PLC0415 - seconds to import: kept off Django start-up

        from drafts.bots.neural import NeuralConfig, NeuralPickNet  # noqa: PLC0415 - imports torch, as above

        need(config, "cards", "net")
        try:
            cfg = NeuralConfig.from_dict(config["net"])
            with torch.device("meta"):  # shapes only: no memory, no computation
                net = NeuralPickNet(len(config["cards"]), cfg)
        except (TypeError, ValueError) as exc:
            raise ConfigError(f"the net config cannot build a pick net: {exc}") from None
        members = int(config.get("ensemble", cfg.ensemble) or 1)
        return {f"member{m}.{name}": tuple(t.shape) for m in range(members) for name, t in net.state_dict().items()}
    raise ConfigError(f"unknown draft bot format {fmt!r} (archetype-v1 or neural-pick-v1)")


def check_scope(scope: str) -> None:
    """FAMILY:SET, or FAMILY: (the set of the ``logs`` file)."""
    family, colon, _ = scope.partition(":")
    if family not in FAMILIES or not colon:
        raise TrainingError("A draft bot's scope is FAMILY:SET with FAMILY archetype or neural, e.g. archetype:BLB "
                            "(FAMILY: alone takes the set of the 'logs' file).")


def held_out_top1(metrics: dict):
    return ((metrics or {}).get("held_out") or {}).get("all", {}).get("top1")


def better(new: dict, current: dict) -> bool:
    """A new version beats the active one on held-out top-1 agreement (the active one without it: yes)."""
    theirs = held_out_top1(current)
    return theirs is None or held_out_top1(new) > theirs


DRAFT_BOT = Kind(
    KIND, label="Draft bot", shapes=shapes, train=train, evaluate=evaluate, check_scope=check_scope,
    parameters={"epochs": int, "seed": int, "limit": int, "logs": str, "stored": bool, "draft_kind": str,
                "consented": bool, "seats": str, "net": dict, "n_archetypes": int, "lr": float, "plot": str},
    evaluate_parameters={"logs": str, "stored": bool, "draft_kind": str, "consented": bool, "limit": int,
                         "split": str},
    better=better,
    quick=lambda scope: QUICK.get(scope.partition(":")[0], {}))
