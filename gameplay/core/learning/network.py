"""The policy/value network: a prior over a decision's legal actions and P(win), from the position's mechanics.

After ForgeRL as issue 19 describes it (a network over the position's mechanics and each legal action, giving a
prior over the actions and a value, trained first by imitation of the engine's strongest AI) and AlphaZero (Silver
et al. 2017: the prior steers PUCT, the value scores the leaves), on the engine's own state JSON:

- ``slim_state(state)``: the part of ``Game.state()`` the encoder reads (the zones a player can see into
  and their objects, without the engine's bookkeeping): about 30 KB instead of 0.5 MB, so self-play can
  store positions and the encoder can change after they were played.
- ``encode(state, seat, actions)``: the position *as ``seat`` sees it* as a set of entity tokens (one
  per permanent, card in ``seat``'s hand, graveyard card and stack object, one per player, one for the
  turn) and one token per legal action. An object token carries its mechanics, not its name: types,
  colours, mana value, power, toughness, damage, tapped, summoning sickness, counters, keywords,
  abilities (mana, activated, triggered, static) and its zone and controller; a player token life,
  poison, cards in hand, library, graveyard, untapped lands (mana available), lands played; the turn
  token the phase, the turn, whose turn and priority it is, the prompt. An action token is its kind
  with the tokens of the objects it names (the card cast, the ability's source, the attackers, the
  target) pooled in. The opponent's hand and both libraries are counts only.
- ``PolicyValueNet`` (torch): the entity and action tokens projected to ``width``, a small transformer
  encoder over all of them, a logit per action token (illegal actions are padding, masked to -inf) and
  a value from the turn token. About 60,000 weights, 0.25 MB of safetensors.
- ``NetEvaluator``: what the search asks of it (``gameplay.core.search.evaluation.Evaluator``: any object with
  ``predict(state, seat, actions) -> (a probability per action, P(seat wins))``), loaded from a safetensors file with
  weights-only semantics: ``load`` refuses another format, other encoder sizes, wrong shapes or
  non-finite weights with the reason (``PolicyModelError``).

Pure: no Django; imports ``gameplay.core.engine``, ``search.evaluation`` and ``learning.value`` only. Which version
is in use the caller says, by its file (``learning.weights``; the shell asks the registry: ``gameplay.models_in_use``). torch is imported when a network is built.
"""
from __future__ import annotations

import functools
import json
import math
import time
from pathlib import Path

import numpy as np

from gameplay.core.engine.adapter import Action
from gameplay.core.learning.value import read_weights
from gameplay.core.search.evaluation import win_probability

FORMAT = "game-policy-net-v1"

CORE_TYPES = ("Land", "Creature", "Instant", "Sorcery", "Artifact", "Enchantment", "Planeswalker", "Battle")
COLOURS = ("White", "Blue", "Black", "Red", "Green")
KEYWORDS = ("Flying", "Reach", "Deathtouch", "Lifelink", "Trample", "Vigilance", "Haste", "FirstStrike",
            "DoubleStrike", "Menace", "Defender", "Hexproof", "Indestructible", "Flash", "Prowess", "Ward",
            "Shadow", "Fear", "Intimidate", "Skulk", "Protection", "Convoke", "Delve", "Cycling", "Kicker")
ZONES = ("Battlefield", "Hand", "Graveyard", "Stack", "Exile")
PHASES = ("Untap", "Upkeep", "Draw", "PreCombatMain", "BeginCombat", "DeclareAttackers", "DeclareBlockers",
          "FirstStrikeDamage", "CombatDamage", "EndCombat", "PostCombatMain", "End", "Cleanup")
PROMPTS = ("Priority", "DeclareAttackers", "DeclareBlockers", "TargetSelection", "MulliganDecision", "SelectCards")
ACTION_KINDS = ("PassPriority", "PlayLand", "CastSpell", "ActivateAbility", "DeclareAttackers", "DeclareBlockers",
                "ChooseTarget", "SelectCards", "MulliganDecision")

# token layouts (the sizes are in a file's metadata: a file from another layout is refused)
OBJECT_FIELDS = (("mine", 1), ("zone", len(ZONES)), ("types", len(CORE_TYPES)), ("colours", len(COLOURS)),
                 ("numbers", 7), ("state", 4), ("keywords", len(KEYWORDS)), ("abilities", 6))
OBJECT_SIZE = sum(n for _, n in OBJECT_FIELDS)
PLAYER_SIZE = 10
TURN_SIZE = len(PHASES) + len(PROMPTS) + 6
ENTITY_SIZE = 3 + max(OBJECT_SIZE, PLAYER_SIZE, TURN_SIZE)  # 3: which kind of token it is
ACTION_SIZE = len(ACTION_KINDS) + 1 + 6 + OBJECT_SIZE       # kind (+ other), counts and flags, the named objects
MAX_ENTITIES = 96  # a position with more objects keeps the battlefield and the stack first

_KEEP_FIELDS = ("id", "name", "controller", "owner", "card_types", "power", "toughness", "damage_marked", "tapped",
                "keywords", "counters", "mana_cost", "color", "attached_to", "zone", "summoning_sick",
                "has_summoning_sickness", "loyalty", "face_down")


class PolicyModelError(ValueError):
    """A weights file that is not a policy/value network of this format (corrupt, wrong shapes or layout)."""


# ---------------------------------------------------------------------------------------------
# The position as the encoder reads it

def _slim_object(obj: dict) -> dict:
    out = {k: obj.get(k) for k in _KEEP_FIELDS if k in obj}
    abilities = obj.get("abilities") or []
    out["abilities"] = [{"mana": bool(a.get("is_mana_ability")), "kind": a.get("kind"),
                         "tap": (a.get("cost") or {}).get("type") == "Tap"} for a in abilities if isinstance(a, dict)]
    out["triggers"] = len(obj.get("trigger_definitions") or [])
    out["statics"] = len(obj.get("static_definitions") or [])
    return out


def slim_state(state: dict) -> dict:
    """What ``encode`` reads of ``Game.state()``: players (hand and library as object ids), the visible zones'
    objects (the hands' too: ``encode`` shows a seat only its own), the stack, the turn, the phase, the prompt."""
    st = state.get("state", state)
    objects = st.get("objects") or {}
    ids = list(st.get("battlefield") or []) + list(st.get("exile") or [])
    players = []
    for p in st.get("players") or []:
        ids += list(p.get("hand") or []) + list(p.get("graveyard") or [])
        players.append({k: p.get(k) for k in ("id", "life", "poison_counters", "hand", "graveyard",
                                               "lands_played_this_turn")} | {"library": len(p.get("library") or [])})
    stack = []
    for entry in st.get("stack") or []:
        if isinstance(entry, dict):
            source = entry.get("source_id") or entry.get("id")
            stack.append({"source": source, "controller": entry.get("controller")})
            if source is not None:
                ids.append(source)
    return {"slim": 1, "players": players, "battlefield": list(st.get("battlefield") or []), "stack": stack,
            "objects": {str(i): _slim_object(objects[str(i)]) for i in ids if str(i) in objects},
            "turn_number": st.get("turn_number"), "phase": st.get("phase"), "active_player": st.get("active_player"),
            "priority_player": st.get("priority_player"), "current_starting_player": st.get("current_starting_player"),
            "waiting_for": {"type": (st.get("waiting_for") or {}).get("type")}}


def _num(value, scale: float) -> float:
    try:
        return max(-3.0, min(3.0, float(value) / scale))
    except (TypeError, ValueError):
        return 0.0


def _mana_value(obj: dict) -> int:
    cost = obj.get("mana_cost") or {}
    return int(cost.get("generic") or 0) + len(cost.get("shards") or []) if cost.get("type") == "Cost" else 0


def _one_hot(value, names) -> list[float]:
    return [1.0 if value == n else 0.0 for n in names]


def object_vector(obj: dict, seat: int, zone: str) -> list[float]:
    """An object's mechanics from ``seat``'s side (``OBJECT_FIELDS`` layout)."""
    types = (obj.get("card_types") or {}).get("core_types") or []
    keywords = {k if isinstance(k, str) else next(iter(k), "") for k in obj.get("keywords") or []
                if isinstance(k, (str, dict))}
    counters = obj.get("counters") or {}
    abilities = obj.get("abilities") or []
    sick = bool(obj.get("summoning_sick") or obj.get("has_summoning_sickness"))
    return ([1.0 if obj.get("controller", obj.get("owner")) == seat else 0.0]
            + _one_hot(zone, ZONES)
            + [1.0 if t in types else 0.0 for t in CORE_TYPES]
            + [1.0 if c in (obj.get("color") or []) else 0.0 for c in COLOURS]
            + [_num(obj.get("power"), 5), _num(obj.get("toughness"), 5), _num(obj.get("damage_marked"), 5),
               _num(_mana_value(obj), 5), _num(obj.get("loyalty"), 5),
               _num(sum(v for v in counters.values() if isinstance(v, (int, float))) if isinstance(counters, dict) else 0, 3),
               1.0 if obj.get("power") is not None else 0.0]
            + [1.0 if obj.get("tapped") else 0.0, 1.0 if sick else 0.0, 1.0 if obj.get("attached_to") is not None else 0.0,
               1.0 if obj.get("face_down") else 0.0]
            + [1.0 if k in keywords else 0.0 for k in KEYWORDS]
            + [_num(sum(a.get("mana", False) for a in abilities), 2),
               _num(sum(not a.get("mana", False) for a in abilities), 2),
               _num(sum(bool(a.get("tap")) and not a.get("mana", False) for a in abilities), 2),
               _num(obj.get("triggers") or 0, 2), _num(obj.get("statics") or 0, 2),
               1.0 if "Land" not in types and _mana_value(obj) == 0 else 0.0])


def _pad(kind: int, values: list[float]) -> list[float]:
    row = [0.0, 0.0, 0.0] + values
    row[kind] = 1.0
    return row + [0.0] * (ENTITY_SIZE - len(row))


def _ids_of(value) -> list[int]:
    """Object ids an action's data names (the card, the source, attackers, blockers, a target, chosen cards)."""
    out = []
    if isinstance(value, dict):
        for key, v in value.items():
            if key in ("object_id", "source_id", "Object") and isinstance(v, int):
                out.append(v)
            elif key in ("attacks", "assignments", "cards", "target", "targets"):
                out += _ids_of(v)
    elif isinstance(value, list):
        for v in value:
            out += [v] if isinstance(v, int) else _ids_of(v)
    return out


def action_vector(action: dict, state: dict, seat: int) -> list[float]:
    kind, data = action.get("type"), action.get("data") or {}
    objects = state["objects"]
    named = [objects[str(i)] for i in _ids_of(data) if str(i) in objects]
    pooled = np.zeros(OBJECT_SIZE)
    for obj in named:
        pooled += np.asarray(object_vector(obj, seat, obj.get("zone") or "Battlefield"))
    if named:
        pooled /= len(named)
    target = data.get("target") if isinstance(data, dict) else None
    player = target.get("Player") if isinstance(target, dict) else None
    choice = (data.get("choice") or {}).get("type") if isinstance(data, dict) and isinstance(data.get("choice"), dict) else None
    return (_one_hot(kind, ACTION_KINDS) + [0.0 if kind in ACTION_KINDS else 1.0]
            + [_num(len(data.get("attacks") or []) if isinstance(data, dict) else 0, 3),
               _num(len(data.get("assignments") or []) if isinstance(data, dict) else 0, 3),
               _num(len(named), 3), 1.0 if player == seat else 0.0, 1.0 if player not in (None, seat) else 0.0,
               1.0 if choice == "Mulligan" else 0.0]
            + pooled.tolist())


def encode(state: dict, seat: int, actions: list) -> tuple[np.ndarray, np.ndarray]:
    """(entity tokens [E, ENTITY_SIZE], action tokens [A, ACTION_SIZE]) of the position as ``seat`` sees it.
    ``state`` is ``Game.state()`` or ``slim_state`` of it; ``actions`` are ``Action``s or their dicts."""
    st = state if state.get("slim") else slim_state(state)
    objects = st["objects"]
    players = {p["id"]: p for p in st["players"]}
    if seat not in players or len(players) != 2:
        raise ValueError(f"the state has no two-player game with seat {seat}")
    rows = []
    for oid in st["battlefield"]:
        if str(oid) in objects:
            rows.append(_pad(0, object_vector(objects[str(oid)], seat, "Battlefield")))
    for entry in st["stack"]:
        obj = objects.get(str(entry.get("source"))) or {"controller": entry.get("controller")}
        rows.append(_pad(0, object_vector(obj, seat, "Stack")))
    for oid in players[seat].get("hand") or []:  # the opponent's hand is a count
        if str(oid) in objects:
            rows.append(_pad(0, object_vector(objects[str(oid)], seat, "Hand")))
    for p in players.values():
        for oid in p.get("graveyard") or []:
            if str(oid) in objects:
                rows.append(_pad(0, object_vector(objects[str(oid)], seat, "Graveyard")))
    rows = rows[:MAX_ENTITIES - 3]
    for pid in (seat, 1 - seat):
        p = players[pid]
        untapped = sum(1 for oid in st["battlefield"]
                       if (o := objects.get(str(oid)) or {}).get("controller") == pid and not o.get("tapped")
                       and "Land" in ((o.get("card_types") or {}).get("core_types") or []))
        rows.append(_pad(1, [1.0 if pid == seat else 0.0, _num(p.get("life"), 20), _num(p.get("poison_counters"), 10),
                             _num(len(p.get("hand") or []), 7), _num(p.get("library"), 40),
                             _num(len(p.get("graveyard") or []), 20), _num(untapped, 5),
                             _num(p.get("lands_played_this_turn"), 1),
                             1.0 if st.get("active_player") == pid else 0.0,
                             1.0 if st.get("current_starting_player") == pid else 0.0]))
    rows.append(_pad(2, _one_hot(st.get("phase"), PHASES) + _one_hot((st.get("waiting_for") or {}).get("type"), PROMPTS)
                     + [_num(st.get("turn_number"), 20), 1.0 if st.get("active_player") == seat else 0.0,
                        1.0 if st.get("priority_player") == seat else 0.0, _num(len(st["stack"]), 3),
                        _num(len(actions), 10), 1.0]))
    acts = [a.to_dict() if isinstance(a, Action) else a for a in actions]
    entity = np.asarray(rows, dtype=np.float32)
    action = np.asarray([action_vector(a, st, seat) for a in acts], dtype=np.float32).reshape(len(acts), ACTION_SIZE)
    return entity, action


def batch(samples: list[tuple[np.ndarray, np.ndarray]]):
    """Pad encoded samples into arrays: entities [B, E, .], their mask [B, E], actions [B, A, .], their mask [B, A]
    (a sample with no action, a position seen by the seat not to act, gets one masked dummy action)."""
    n_e = max(len(e) for e, _ in samples)
    n_a = max(1, max(len(a) for _, a in samples))
    ent = np.zeros((len(samples), n_e, ENTITY_SIZE), np.float32)
    act = np.zeros((len(samples), n_a, ACTION_SIZE), np.float32)
    ent_mask = np.zeros((len(samples), n_e), bool)
    act_mask = np.zeros((len(samples), n_a), bool)
    for i, (e, a) in enumerate(samples):
        ent[i, :len(e)], ent_mask[i, :len(e)] = e, True
        act[i, :len(a)], act_mask[i, :len(a)] = a, True
    return ent, ent_mask, act, act_mask


# ---------------------------------------------------------------------------------------------
# The network

def build_net(width: int = 64, layers: int = 2, heads: int = 4):
    """A ``PolicyValueNet`` (torch.nn.Module): ``forward(ent, ent_mask, act, act_mask) -> (logits [B, A], value
    logit [B])``; illegal (padding) actions get -inf."""
    import torch  # noqa: PLC0415 - heavy; only a process that uses the network needs it

    class PolicyValueNet(torch.nn.Module):
        def __init__(self):
            super().__init__()
            self.config = {"width": width, "layers": layers, "heads": heads}
            self.entity_in = torch.nn.Sequential(torch.nn.Linear(ENTITY_SIZE, width), torch.nn.ReLU(),
                                                 torch.nn.Linear(width, width))
            self.action_in = torch.nn.Sequential(torch.nn.Linear(ACTION_SIZE, width), torch.nn.ReLU(),
                                                 torch.nn.Linear(width, width))
            block = torch.nn.TransformerEncoderLayer(width, heads, dim_feedforward=2 * width, dropout=0.0,
                                                     batch_first=True, norm_first=True)
            self.encoder = torch.nn.TransformerEncoder(block, layers, enable_nested_tensor=False)
            self.policy_out = torch.nn.Sequential(torch.nn.Linear(width, width), torch.nn.ReLU(), torch.nn.Linear(width, 1))
            self.value_out = torch.nn.Sequential(torch.nn.Linear(2 * width, width), torch.nn.ReLU(), torch.nn.Linear(width, 1))

        def forward(self, ent, ent_mask, act, act_mask):
            tokens = torch.cat([self.entity_in(ent), self.action_in(act)], dim=1)
            mask = torch.cat([ent_mask, act_mask], dim=1)
            h = self.encoder(tokens, src_key_padding_mask=~mask)
            n_e = ent.shape[1]
            logits = self.policy_out(h[:, n_e:])[..., 0].masked_fill(~act_mask, -math.inf)
            weights = ent_mask.unsqueeze(-1).float()
            pooled = (h[:, :n_e] * weights).sum(1) / weights.sum(1).clamp(min=1)
            turn = h[torch.arange(len(h)), ent_mask.sum(1) - 1]  # the turn token is each sample's last entity
            value = self.value_out(torch.cat([turn, pooled], dim=-1))[..., 0]
            return logits, value

    return PolicyValueNet()


def save(net, path: str | Path, info: dict) -> None:
    from safetensors.torch import save_file  # noqa: PLC0415 - with torch

    meta = {"format": FORMAT, "config": json.dumps(net.config), "info": json.dumps(info),
            "sizes": json.dumps([ENTITY_SIZE, ACTION_SIZE])}
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    save_file({k: v.detach().contiguous() for k, v in net.state_dict().items()}, str(path), metadata=meta)


def load(path: str | Path):
    """(network in eval mode, info) from a safetensors file (tensors only: nothing is unpickled)."""
    import torch  # noqa: PLC0415 - with the network

    path = Path(path)
    meta, tensors = read_weights(path, "pt", PolicyModelError)
    if meta.get("format") != FORMAT:
        raise PolicyModelError(f"{path.name} is not a {FORMAT} network (format {meta.get('format')!r})")
    try:
        config = json.loads(meta.get("config") or "{}")
        info = json.loads(meta.get("info") or "{}")
        sizes = json.loads(meta.get("sizes") or "[]")
        net = build_net(int(config["width"]), int(config["layers"]), int(config["heads"]))
    except (ValueError, KeyError, TypeError, AssertionError):
        raise PolicyModelError(f"{path.name} has unreadable metadata") from None
    if sizes != [ENTITY_SIZE, ACTION_SIZE]:
        raise PolicyModelError(f"{path.name} was trained on other tokens than this code encodes")
    try:
        net.load_state_dict(tensors, strict=True)
    except RuntimeError as exc:
        raise PolicyModelError(f"{path.name}: wrong tensors for its config ({str(exc).splitlines()[0][:200]})") from None
    if not all(torch.isfinite(t).all() for t in tensors.values()):
        raise PolicyModelError(f"{path.name} holds non-finite weights")
    net.eval()
    return net, info


def tensor_shapes(width: int, layers: int, heads: int) -> dict:
    """Each tensor's shape in a file of this config (the registry checks uploads against it)."""
    return {k: tuple(v.shape) for k, v in build_net(width, layers, heads).state_dict().items()}


# ---------------------------------------------------------------------------------------------
# What the search uses

class NetEvaluator:
    """The network as the search's prior and leaf value (``SearchModels.evaluator``, ``gameplay.core.search.evaluation``)."""

    def __init__(self, net, info: dict | None = None, path: str | None = None):
        self.net, self.info, self.path = net, info or {}, path
        self.calls, self.seconds = 0, 0.0

    def _run(self, samples):
        import torch  # noqa: PLC0415 - already loaded with the network

        start = time.perf_counter()
        with torch.no_grad():
            logits, value = self.net(*(torch.from_numpy(a) for a in batch(samples)))
        self.calls += 1
        self.seconds += time.perf_counter() - start
        return logits.numpy(), torch.sigmoid(value).numpy()

    def predict(self, state: dict, seat: int, actions: list) -> tuple[list[float], float]:
        """(probability per action, P(``seat`` wins)) of a position (``Game.state()`` or slim)."""
        logits, value = self._run([encode(state, seat, actions)])
        if not actions:
            return [], float(value[0])
        z = logits[0, :len(actions)]
        p = np.exp(z - z.max())
        return (p / p.sum()).tolist(), float(value[0])


@functools.lru_cache(maxsize=4)
def _cached(path: str, mtime: float) -> NetEvaluator:
    net, info = load(path)
    return NetEvaluator(net, info, path)


def evaluator_at(path: str | Path) -> NetEvaluator:
    """The network in ``path``, loaded once per process (again when the file changes)."""
    path = Path(path)
    try:
        mtime = path.stat().st_mtime
    except OSError:
        raise PolicyModelError(f"no policy network at {path}") from None
    return _cached(str(path), mtime)


def score(evaluator: NetEvaluator, records: list[dict], value_model=None) -> dict:
    """How well the network predicts held-out decision records (``selfplay.decision_records``): move-prediction
    accuracy against the imitated AI (top-1, and the AI's choice among the network's top 2) beside a trivial
    baseline (the first offered action of the kind the AI chose most often in training: ``info["kind_order"]``),
    and the Brier score of P(the deciding seat wins) beside 0.5, the engine's evaluation squashed
    (``gameplay.core.search.evaluation.win_probability``) and ``value_model`` (the 36-feature ``value.ValueModel``) when given."""
    if not records:
        raise ValueError("no decisions to score")
    order = {k: i for i, k in enumerate(evaluator.info.get("kind_order") or [])}
    hits = top2 = base = labelled = 0
    p_net, won = [], []
    for start in range(0, len(records), 128):
        part = records[start:start + 128]
        logits, v = evaluator._run([encode(r["state"], r["seat"], r["actions"]) for r in part])
        for r, z, p in zip(part, logits, v):
            won.append(r["won"])
            p_net.append(float(p))
            if r.get("choice") is None:
                continue
            labelled += 1
            ranked = np.argsort(-z[:len(r["actions"])])
            hits += int(ranked[0] == r["choice"])
            top2 += int(r["choice"] in ranked[:2])
            kinds = [order.get(a["type"], len(order)) for a in r["actions"]]
            base += int(int(np.argmin(kinds)) == r["choice"])
    y = np.asarray(won, dtype=np.float64)
    ways = {"net": np.asarray(p_net), "constant": np.full(len(y), 0.5)}
    rows = [r["value_x"] for r in records if r.get("value_x")]
    if len(rows) == len(records):
        ev = np.array([row[0][-1] * 10 for row in rows])  # the feature is the evaluation / 10 (clipped to +-3)
        ways["engine"] = np.array([win_probability(e) for e in ev])
        if value_model is not None:
            ways["value_model"] = np.array([value_model.predict(row[0], row[1]) for row in rows])
    out = {"games": len({r.get("seed") for r in records}), "decisions": len(records), "labelled": labelled,
           "net_accuracy": round(hits / max(1, labelled), 4), "net_top2": round(top2 / max(1, labelled), 4),
           "baseline_accuracy": round(base / max(1, labelled), 4),
           "mean_actions": round(float(np.mean([len(r["actions"]) for r in records])), 2)}
    for name, p in ways.items():
        out[f"{name}_brier"] = round(float(np.mean((p - y) ** 2)), 4)
    return out
