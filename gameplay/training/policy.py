"""Training and evaluation of the policy/value network (``gameplay.core.learning.network``): the registry kind ``game_policy_net``.

Engine self-play between the sample decks, both seats played by the imitated engine AI (VeryHard), records
every real decision (``selfplay.decision_records``); the network learns the AI's choice (cross-entropy over
the offered actions) and the game's winner (binary cross-entropy, from both seats' sides of each position).
With ``imitate="search:<level>"`` both seats are the search player (with the active network, if any, where the
games are played in this process or on the Celery workers; spawned processes play with the shipped models), and a
searched decision's target is the search's root visit counts instead (AlphaZero's round: ``policy_target``).
Games are played in local processes, or as Celery tasks (``celery``: ``gameplay.tasks.policy_games``) so that
they fan out over the workers. Plain functions that ``manage.py models train game_policy_net`` and the training
runs (``ml.training``) call; the kind is declared in ``gameplay.kinds``.
"""
from __future__ import annotations

import collections
import json
import math
import tempfile
import time
from pathlib import Path

import numpy as np
from django.conf import settings

from gameplay import carddb
from gameplay.training import value as value_training
from gameplay.core.learning import network as policy
from gameplay.core.matches import selfplay
from gameplay.core.engine.decks import sample_decks
from gameplay.models_in_use import search_models
from ml import registry
from ml.kinds import ConfigError, TrainingError, need, settle
from ml.models import ModelVersion
from ml.progress import Progress

KIND = "game_policy_net"
EVAL_SEED = 31000  # held-out games: seeds 31000 + i (training 30000 + i; the value model 20000+, the benches 1000+, 5000+)
DEFAULTS = {"games": 60, "workers": 2, "seed": 30000, "imitate": "VeryHard", "records": None, "from_records": [],
            "celery": False, "width": 64, "layers": 2, "heads": 4, "epochs": 20, "lr": 1e-3, "batch": 64,
            "weight_decay": 1e-4, "teacher": 0.5, "notes": ""}
QUICK = {"games": 2, "workers": 1, "imitate": "Easy", "epochs": 3, "width": 16, "layers": 1, "heads": 2}


def read_records(path: Path) -> list[dict]:
    def ok(r):
        return (isinstance(r.get("state"), dict) and r.get("won") in (0, 1) and isinstance(r.get("actions"), list)
                and r.get("seat") in (0, 1) and "seed" in r)
    return value_training.read_lines(path, ok, "a decision record")


def play(games: int, seed: int, workers: int, progress: Progress, *, imitate: str = "VeryHard",
         records_path: str | None = None, celery: bool = False) -> tuple[list[dict], list[str]]:
    """``games`` self-play games, both seats ``imitate``, as decision records: (records, failed games). One worker
    plays them in this process; more, in spawned processes; ``celery``, as tasks on the Celery workers."""
    def here(jobs):
        engine = carddb.get_engine()
        models = search_models()  # the learned models in use, once for these games
        return (selfplay.pool_decisions({**job, "engine": engine}, models=models) for job in jobs)

    runner = here if workers == 1 else None
    if celery:
        from gameplay.tasks import policy_games_over_workers  # noqa: PLC0415 - the tasks sit above this module

        runner = policy_games_over_workers
    return value_training.play_games(games, seed, workers, progress, rows_path=records_path,
                                     schedule=((imitate, imitate),), task=selfplay.pool_decisions, runner=runner)


def policy_target(record: dict) -> np.ndarray | None:
    """A decision record's policy target over its offered actions: the search's root visit counts, normalised,
    where a search player searched it (AlphaZero's target: Silver et al. 2017), else the action played (the
    imitated AI's choice); None when neither is known (the AI chose outside the offered actions)."""
    n = len(record["actions"])
    visits = record.get("visits")
    if isinstance(visits, list) and len(visits) == n and sum(visits) > 0:
        v = np.asarray(visits, dtype=np.float32)
        return v / v.sum()
    if record.get("choice") is None:
        return None
    t = np.zeros(n, np.float32)
    t[record["choice"]] = 1.0
    return t


def check_imitate(name: str) -> None:
    """``imitate`` names an engine AI (``VeryHard``) or a search player (``search:fast``, AlphaZero's self-play):
    refused at once with the reason, rather than in every game."""
    from gameplay.core.matches.players import EnginePlayer, SearchPlayer, make_player  # noqa: PLC0415 - above the core

    try:
        player = make_player(name if ":" in str(name) else f"engine:{name}")
    except (ValueError, TypeError) as exc:
        raise TrainingError(f"imitate: {exc}") from None
    if not isinstance(player, (EnginePlayer, SearchPlayer)):
        raise TrainingError("imitate must be an engine AI (VeryHard) or a search player (search:<level>)")


def samples(records: list[dict], teacher: float = 0.0) -> tuple[list, list, np.ndarray]:
    """Encoded samples, their policy targets (``policy_target``; None: none) and value targets: each record from
    the acting seat's side (with its actions), then from the other seat's (value only). A value target is the
    winner, mixed with the share ``teacher`` of the 36-feature value model's P(win) of the position (trained on
    165 games' outcomes: a few dozen games are too few outcomes for the network's value alone)."""
    model = search_models().leaf_model() if teacher else None
    out, targets, won = [], [], []
    for r in records:
        target = float(r["won"])
        if model is not None:
            target = (1 - teacher) * target + teacher * model.predict(r["value_x"][0], r["value_x"][1])
        out.append(policy.encode(r["state"], r["seat"], r["actions"]))
        targets.append(policy_target(r))
        won.append(target)
        out.append(policy.encode(r["state"], 1 - r["seat"], []))
        targets.append(None)
        won.append(1 - target)
    return out, targets, np.asarray(won, dtype=np.float32)


def fit_records(records: list[dict], p: dict, progress: Progress, valid_share: float = 0.15):
    """The network fitted on ``records`` (Adam, policy cross-entropy + value BCE); the epoch with the best
    validation loss (games held apart) is kept. -> (net, info)."""
    import torch  # noqa: PLC0415 - heavy; only training needs it

    seeds = sorted({r["seed"] for r in records})
    if len(seeds) < 2:
        raise TrainingError("too few games to train on (need decisions from at least 2)")
    rng = np.random.default_rng(0)
    held = set(rng.permutation(seeds)[: max(1, int(len(seeds) * valid_share))].tolist())
    train = [r for r in records if r["seed"] not in held]
    valid = [r for r in records if r["seed"] in held]
    x_tr, c_tr, y_tr = samples(train, p["teacher"])
    x_va, c_va, y_va = samples(valid)  # validated against the winners alone
    torch.manual_seed(0)
    net = policy.build_net(p["width"], p["layers"], p["heads"])
    opt = torch.optim.AdamW(net.parameters(), lr=p["lr"], weight_decay=p["weight_decay"])

    def losses(xs, ts, ys, idx):
        ent, ent_mask, act, act_mask = (torch.from_numpy(a) for a in policy.batch([xs[i] for i in idx]))
        logits, v = net(ent, ent_mask, act, act_mask)
        target = torch.zeros_like(logits)
        for row, i in enumerate(idx):
            if ts[i] is not None:
                target[row, :len(ts[i])] = torch.from_numpy(ts[i])
        has = target.sum(-1) > 0
        # cross-entropy against a distribution (one-hot for an imitated choice, the visit shares for a searched
        # one); padding actions have -inf logits and no target mass, so they are left out of the sum
        logp = torch.log_softmax(logits[has], -1).masked_fill(target[has] <= 0, 0.0)
        pol = -(target[has] * logp).sum() if has.any() else logits.sum() * 0
        val = torch.nn.functional.binary_cross_entropy_with_logits(v, torch.from_numpy(ys[idx]), reduction="sum")
        hits = (logits[has].argmax(-1) == target[has].argmax(-1)).sum().item() if has.any() else 0
        brier = ((torch.sigmoid(v) - torch.from_numpy(ys[idx])) ** 2).sum().item()
        return pol, val, int(has.sum()), hits, brier

    def validate():
        net.eval()
        tot = collections.Counter()
        with torch.no_grad():
            for start in range(0, len(x_va), 256):
                idx = np.arange(start, min(len(x_va), start + 256))
                pol, val, n, hits, brier = losses(x_va, c_va, y_va, idx)
                tot.update(pol=pol.item(), val=val.item(), n=n, hits=hits, brier=brier, m=len(idx))
        return {"policy_loss": tot["pol"] / max(1, tot["n"]), "value_loss": tot["val"] / max(1, tot["m"]),
                "accuracy": tot["hits"] / max(1, tot["n"]), "brier": tot["brier"] / max(1, tot["m"])}

    best, best_state, best_epoch, history = math.inf, None, 0, []
    start = time.process_time()
    for epoch in progress.bar(range(p["epochs"]), total=p["epochs"], desc="epochs"):
        net.train()
        order = rng.permutation(len(x_tr))
        for s in range(0, len(order), p["batch"]):
            idx = order[s:s + p["batch"]]
            pol, val, n, _, _ = losses(x_tr, c_tr, y_tr, idx)
            loss = pol / max(1, n) + val / len(idx)
            opt.zero_grad()
            loss.backward()
            torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
            opt.step()
        m = validate()
        history.append({k: round(v, 4) for k, v in m.items()})
        total = m["policy_loss"] + m["value_loss"]
        progress.log(f"epoch {epoch + 1}: validation accuracy {m['accuracy']:.3f}, brier {m['brier']:.4f}")
        if total < best:
            best, best_epoch = total, epoch
            best_state = {k: t.detach().clone() for k, t in net.state_dict().items()}
    net.load_state_dict(best_state)
    net.eval()
    chosen = collections.Counter(r["actions"][r["choice"]]["type"] for r in train if r.get("choice") is not None)
    info = {"games": len(seeds), "decisions": len(records), "valid_games": len(held), "best_epoch": best_epoch,
            **{f"valid_{k}": v for k, v in history[best_epoch].items()}, "epochs": p["epochs"],
            "config": {k: p[k] for k in ("width", "layers", "heads")}, "teacher": p["teacher"], "imitate": records[0].get("levels", [None])[0],
            "kind_order": [k for k, _ in chosen.most_common()], "train_cpu_seconds": round(time.process_time() - start, 1),
            "parameters": sum(t.numel() for t in net.parameters())}
    return net, info


def fit(params: dict, progress: Progress):
    """Records from files (``from_records``) and of ``games`` new self-play games (appended to ``records``), fitted."""
    p = settle(params, DEFAULTS)
    if p["games"] < 0 or p["workers"] < 1 or p["epochs"] < 1:
        raise TrainingError("games must be >= 0, workers and epochs >= 1")
    check_imitate(p["imitate"])
    records = []
    for path in p["from_records"]:
        if not Path(path).is_file():
            raise TrainingError(f"no such records file: {path}")
        records += read_records(Path(path))
    if p["games"]:
        played, failed = play(p["games"], p["seed"], p["workers"], progress, imitate=p["imitate"],
                              records_path=p["records"], celery=bool(p["celery"]))
        for line in failed[:10]:
            progress.log(line)
        records += played
    net, info = fit_records(records, p, progress)
    seeds = sorted({r["seed"] for r in records})
    info["seeds"] = f"{seeds[0]}..{seeds[-1]}"
    return net, info


def register(net, info: dict, notes: str = "") -> ModelVersion:
    """The network as the next game_policy_net version (its file under MTG_MODEL_DIR), not activated."""
    folder = registry.model_dir() / KIND / "_"
    folder.mkdir(parents=True, exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=folder, suffix=".safetensors", delete=False) as fh:
        path = Path(fh.name)
    try:
        policy.save(net, path, info)
        path.chmod(0o644)
        return registry.register_file(
            KIND, path, config={"format": policy.FORMAT, **net.config},
            metrics={k: info[k] for k in ("games", "decisions", "valid_accuracy", "valid_brier", "valid_policy_loss",
                                          "valid_value_loss", "best_epoch", "parameters") if k in info},
            data_snapshot={"seeds": info.get("seeds"), "games": info.get("games"), "imitate": info.get("imitate"),
                           "decks": sorted(sample_decks(settings.MTG_DATA_DIR))},
            activate=False, notes=notes or "")
    except BaseException:
        path.unlink(missing_ok=True)
        raise


def train(params: dict, progress: Progress, scope: str = "") -> ModelVersion:
    net, info = fit(params, progress)
    return register(net, info, params.get("notes") or "")


def evaluate(version: ModelVersion, params: dict, progress: Progress) -> dict:
    """Move-prediction accuracy against the imitated AI and value Brier score on fresh self-play games (seeds
    31000 + i, never trained on), beside the 36-feature value model and the trivial baselines."""
    games = int(params.get("games", 12))
    try:
        evaluator = policy.evaluator_at(registry.resolve_path(version.weights_path))
    except policy.PolicyModelError as exc:
        raise TrainingError(str(exc)) from None
    imitate = params.get("imitate") or evaluator.info.get("imitate") or "VeryHard"
    progress.log(f"playing {games} {imitate} self-play games")
    records, failed = play(games, int(params.get("seed", EVAL_SEED)), int(params.get("workers", 1)), progress,
                           imitate=imitate)
    if not records:
        raise TrainingError("no finished game to evaluate on" + (f" ({failed[0]})" if failed else ""))
    out = policy.score(evaluator, records, search_models().leaf_model())
    progress.metric("accuracy", out["net_accuracy"])
    return out


# --- the registry kind ---------------------------------------------------------------------------------------

def _config(config: dict) -> tuple[int, int, int]:
    need(config, "width", "layers", "heads")
    if config.get("format", policy.FORMAT) != policy.FORMAT:
        raise ConfigError(f"unknown policy network format {config.get('format')!r} ({policy.FORMAT})")
    try:
        width, layers, heads = int(config["width"]), int(config["layers"]), int(config["heads"])
    except (TypeError, ValueError):
        raise ConfigError("width, layers and heads are integers") from None
    if min(width, layers, heads) < 1 or width % heads:
        raise ConfigError("width, layers and heads must be positive, width a multiple of heads")
    return width, layers, heads


def shapes(config: dict) -> dict:
    return policy.tensor_shapes(*_config(config))


def metadata(config: dict) -> dict:
    def fmt(text):
        return None if text == policy.FORMAT else f"metadata 'format' must be {policy.FORMAT!r}"

    def sizes(text):
        try:
            return None if json.loads(text) == [policy.ENTITY_SIZE, policy.ACTION_SIZE] else \
                "metadata 'sizes' are not this code's token sizes"
        except ValueError:
            return "metadata 'sizes' is not a JSON list"

    def net_config(text):
        try:
            return None if tuple(json.loads(text)[k] for k in ("width", "layers", "heads")) == _config(config) else \
                "metadata 'config' differs from the version's config"
        except (ValueError, KeyError, TypeError, ConfigError):
            return "metadata 'config' is not the network's width, layers and heads"
    return {"format": fmt, "sizes": sizes, "config": net_config}
