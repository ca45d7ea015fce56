"""The drafts shell: set lists from the catalogue, bots by name, storing pods and their picks.

Everything here turns rows into the pure core's objects (``drafts.core``, ``drafts.bots``) and
back. Writes happen in one transaction each, so a failure never leaves half a pod.
"""
from __future__ import annotations

import json
import threading
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import Sequence

import numpy as np
from django.conf import settings
from django.db import transaction
from django.db.models import Count, Max, Min, Q
from django.utils import timezone

from decks.core.decklist import Entry, ParsedDeck
from decks.core.setnames import set_name
from decks.models import CardSet, Printing
from decks.services import catalogue_version, save_parsed_deck
from drafts.bots import ratings as R
from drafts.bots.archetype import ArchetypeBot, default_bot
from drafts.bots.base import DraftBot, PickContext
from drafts.bots.baselines import RandomBot, RatingBot
from drafts.bots.draftsim import DraftsimBot
from drafts.core.cards import BASIC_LANDS, DraftCard, DraftError, SetList
from drafts.core.deckbuild import build_deck
from drafts.core.pod import DraftPod, simulate
from drafts.core.sets import DraftableSet, arrange, bonus_sheet_of
from drafts.core.simratings import agrees_with_players, for_cards, shown_ratings, sim_label
from drafts.models import Draft, DraftPick, DraftSeat
from ml.registry import active_version, load_version

BOT_NAMES = ("draftsim", "archetype", "neural", "rating", "random")
CLASSIC_SETS = {"M19", "M20"}
_cache: dict[tuple, object] = {}
_lock = threading.Lock()


def _cached(key: tuple, build):
    with _lock:
        if key in _cache:
            return _cache[key]
    value = build()
    with _lock:
        _cache[key] = value
    return value


def data_path(*parts: str) -> Path:
    return Path(settings.MTG_DATA_DIR).joinpath(*parts)


# --- sets ------------------------------------------------------------------------------------------------

def draftable_sets() -> list[dict]:
    """Sets whose boosters can be opened, newest first with each bonus sheet after its set, then the cubes
    (``drafts.core.sets``): code, name, booster kind, card count, and the set a bonus sheet is drafted in."""
    return [{"code": s.code, "name": s.name or s.code, "cards": s.cards, "booster": s.booster,
             "part_of": s.part_of} for _, group in _arranged_sets() for s in group]


def set_choices() -> list[tuple[str, list[tuple[str, str]]]]:
    """The draftable sets as grouped form choices: [('Sets, newest first', [(code, 'Bloomburrow (BLB)'), ...]), ...]."""
    return [(group, [(s.code, s.label) for s in sets]) for group, sets in _arranged_sets()]


def _arranged_sets() -> list[tuple[str, list[DraftableSet]]]:
    rows = tuple(CardSet.objects.annotate(
        n=Count("printings", filter=Q(printings__is_booster=True)),
        first_id=Min("printings__arena_id", filter=Q(printings__is_booster=True)),
        listed=Count("printings", filter=Q(printings__position__isnull=False)),
    ).filter(n__gte=20).order_by("code").values_list("code", "name", "set_type", "n", "first_id", "listed"))
    release, part_of = _cached(("set-relations", catalogue_version(), rows), lambda: _set_relations(rows))
    return arrange([DraftableSet(code=code, name=set_name(code, name), cards=n, booster=booster_kind(code, set_type),
                                 release=release.get(code), part_of=part_of.get(code, ""))
                    for code, name, set_type, n, _first, _listed in rows])


def _set_relations(rows) -> tuple[dict[str, int | None], dict[str, str]]:
    """Each draftable set's release key and the set each bonus sheet is drafted in, from the printings. The key is
    the set's first booster Arena id; a set without one (an Arena-only set known from its draft list) takes its
    bonus sheet's (they come out together), else the newest Arena id its cards have in any set."""
    release = {code: first for code, _n, _t, _c, first, _l in rows}
    cubes = frozenset(code for code, _n, set_type, *_ in rows if booster_kind(code, set_type) == "cube")
    listed = [code for code, *_, n_listed in rows if n_listed]
    draft_lists: dict[str, set] = {code: set() for code in listed}
    for code, card_id in Printing.objects.filter(card_set__code__in=listed, position__isnull=False).values_list(
            "card_set__code", "card_id"):
        draft_lists[code].add(card_id)
    booster_cards: dict[str, set] = {code: set() for code, *_ in rows if code not in draft_lists}
    for code, card_id in Printing.objects.filter(card_set__code__in=list(booster_cards), is_booster=True).values_list(
            "card_set__code", "card_id"):
        booster_cards[code].add(card_id)
    part_of = bonus_sheet_of(booster_cards, draft_lists, release, cubes)
    for code in [code for code, first in release.items() if first is None]:
        sheets = [release[sheet] for sheet, host in part_of.items() if host == code and release.get(sheet) is not None]
        if sheets:
            release[code] = min(sheets)
        else:
            cards = Printing.objects.filter(card_set__code=code).values("card_id")
            release[code] = Printing.objects.filter(card_id__in=cards).aggregate(newest=Max("arena_id"))["newest"]
    return release, part_of


def booster_kind(code: str, set_type: str = "") -> str:
    if code == "CUBE" or set_type == "cube":
        return "cube"
    if code in CLASSIC_SETS or set_type == "core":
        return "classic"
    return "play"


def set_list(code: str) -> SetList:
    """The draftable cards of a set from the catalogue, in the set's draft-list order."""
    code = (code or "").strip().upper()
    return _cached(("set", code, catalogue_version()), lambda: _load_set_list(code))


def _load_set_list(code: str) -> SetList:
    card_set = CardSet.objects.filter(code=code).first()
    if card_set is None:
        known = ", ".join(s["code"] for s in draftable_sets()[:12])
        raise DraftError(f"unknown set {code!r}; draftable sets include {known}")
    rows = _listed(Printing.objects.filter(card_set=card_set)).select_related("card")
    cards, basics = [], []
    for p in rows:
        c = p.card
        card = DraftCard(name=c.name, rarity=p.rarity, colors=c.colors or c.color_identity, mana_cost=c.mana_cost,
                         mana_value=c.mana_value, types=c.types)
        if p.rarity == "basic" or c.name in {b.name for b in BASIC_LANDS}:
            basics.append(card)
        elif p.is_booster and p.rarity != "special":
            cards.append(card)
    if len(cards) < 20:
        raise DraftError(f"set {code} has only {len(cards)} booster cards in the catalogue; run import_sets")
    return SetList(code=code, cards=tuple(cards), booster=booster_kind(code, card_set.set_type),
                   name=card_set.name or code, basics=tuple(basics))


def _listed(printings):
    """A set's draft list: the rows of its 17Lands set list when it has one (other printings of the
    expansion, such as Alchemy rebalances or Commander cards, are not drafted), else every printing."""
    if printings.filter(position__isnull=False).exists():
        printings = printings.filter(position__isnull=False)
    return printings.order_by("position", "collector_number", "card__name")


def log_columns(code: str) -> list[str]:
    """Card columns of the set's 17Lands files: its whole draft list (special guests included)."""
    rows = _listed(Printing.objects.filter(card_set__code=code).exclude(rarity="basic"))
    return list(rows.values_list("card__name", flat=True))


# --- bots ------------------------------------------------------------------------------------------------

def draftsim_ratings(s: SetList) -> tuple[dict[str, float], str]:
    """Base ratings (0-5) for DraftsimBot: 17Lands win rates, Draftsim's M19 ratings or Forge's ranks."""
    def build():
        catalog = data_path("arenamcp_17lands_ratings", "catalogs", f"{s.code}.catalog.json")
        if catalog.exists():
            return R.ratings_from_17lands(catalog), "17Lands GIH win rate"
        m19 = data_path("khakhalin_draftsim_derived", "m19_rating.tsv")
        if s.code == "M19" and m19.exists():
            return R.ratings_from_draftsim_m19(m19), "Draftsim M19 ratings"
        forge = data_path("forge_reeforge", "draft", "rankings.txt")
        if forge.exists():
            found = R.ratings_from_forge(forge, s.code)
            if found:
                return found, "Forge pick rankings"
        scale = {"mythic": 3.5, "rare": 3.2, "uncommon": 2.8, "common": 2.5}
        return {c.name: scale.get(c.rarity, 2.0) for c in s.cards}, "rarity (no rating data for this set)"

    return _cached(("ratings", s.code), build)


def bot_scope(family: str, code: str) -> str:
    return f"{family}:{code}"


def _active_bot_version(family: str, code: str):
    return active_version("draft_bot", bot_scope(family, code), required=False)


def get_bot(name: str, s: SetList, seed: int = 0) -> tuple[DraftBot, object]:
    """The bot a name stands for in a set: (bot, ModelVersion or None). The active trained version
    of a family is used when there is one."""
    name = (name or "").strip().lower()
    if name not in BOT_NAMES:
        raise DraftError(f"unknown bot {name!r}; choose one of {', '.join(BOT_NAMES)}")
    if name == "random":
        return RandomBot(seed=seed), None
    if name in ("draftsim", "rating"):
        ratings, _ = draftsim_ratings(s)
        return (DraftsimBot(ratings) if name == "draftsim" else RatingBot(ratings)), None
    version = _active_bot_version(name, s.code)
    if name == "archetype":
        if version is None:
            return _cached(("archetype-default", s.code, catalogue_version()),
                           lambda: default_bot(s, name="archetype")), None
        return _cached(("bot", version.pk, version.weights_sha256), lambda: _load_bot(version)), version
    if version is None:
        raise DraftError(f"no trained neural bot for {s.code}; train one with "
                         f"`manage.py models train draft_bot --scope neural: --param logs=FILE.csv.gz`")
    return _cached(("bot", version.pk, version.weights_sha256), lambda: _load_bot(version)), version


def _load_bot(version):
    loaded = load_version(version)
    family = version.scope.split(":")[0]
    if family == "archetype":
        return ArchetypeBot.from_tensors(loaded.tensors, loaded.config)
    from drafts.bots.neural import NeuralBot  # noqa: PLC0415 - imports torch (seconds): only a trained neural bot needs it

    return NeuralBot.from_tensors(loaded.tensors, loaded.config)


_sim_cache: dict = {}


def sim_ratings(code: str) -> dict[str, dict]:
    """Card name -> ``{"wr", "n"}``: the set's simulated GIH win rates with at least ``SHOWN_MIN_GAMES`` seat
    games, from the simulated pods' results (``settings.MTG_SIM_RATINGS``, written by ``python -m
    bench.draft_games``); empty without the file or the set, or while the set's simulated ratings do not yet agree
    with real players' beyond the noise (``agrees_with_players``). Read again when the file changes."""
    path = Path(settings.MTG_SIM_RATINGS)
    try:
        stamp = (str(path), path.stat().st_mtime_ns)
    except OSError:
        return {}
    if _sim_cache.get("stamp") != stamp:
        try:
            sets = json.loads(path.read_text(encoding="utf-8")).get("sets") or {}
        except (OSError, ValueError, AttributeError):
            sets = {}
        _sim_cache.update(stamp=stamp, sets={c: shown_ratings(r.get("card_table") or {}) for c, r in sets.items()
                                             if isinstance(r, dict) and agrees_with_players(r)})
    return _sim_cache["sets"].get(code.upper(), {})


def suggest(code: str, bot: str, pack: Sequence[str], pool: Sequence[str], pack_number: int = 0,
            pick_number: int = 0) -> dict:
    """Rank a pack for a drafter: the pure bot behind a name, no state stored."""
    s = set_list(code)
    unknown = [n for n in list(pack) + list(pool) if n not in s]
    if unknown:
        raise DraftError(f"not in {s.code}: {', '.join(sorted(set(unknown))[:5])}")
    if not pack:
        raise DraftError("the pack is empty")
    engine, version = get_bot(bot, s)
    ranking = engine.pick(list(pack), list(pool), PickContext(set_list=s, pack_number=pack_number,
                                                             pick_number=pick_number))
    sim = for_cards(sim_ratings(s.code), pack)
    return {"set": s.code, "bot": bot, "version": version.version if version else None,
            "ranking": [{"card": n, "score": round(sc, 4), **_sim_fields(sim.get(n))} for n, sc in ranking]}


def _sim_fields(rating: dict | None) -> dict:
    return {} if rating is None else {"sim_gih": rating["wr"], "sim_games": rating["n"], "sim_label": sim_label(rating)}


# --- storing pods ----------------------------------------------------------------------------------------

def new_log_id() -> str:
    """A 17Lands-style draft_id: the hex of a random version-4 UUID (unique even when a seed repeats)."""
    return uuid.uuid4().hex


@dataclass
class SeatPlan:
    drafter: str  # a bot name or "human"
    version: object = None


def simulate_draft(code: str, bots: Sequence[str], seed: int | None = None, build_decks: bool = True,
                   owner=None) -> Draft:
    """Run a whole pod of bots (pure core) and store it with every pick and the built decks."""
    s = set_list(code)
    if not 2 <= len(bots) <= 8:
        raise DraftError("a pod has 2 to 8 seats")
    seed = int(np.random.default_rng().integers(0, 2**31)) if seed is None else int(seed)
    engines = [get_bot(name, s, seed=seed + i) for i, name in enumerate(bots)]
    pod = DraftPod(s, seats=len(bots), seed=seed)
    started = timezone.now()
    simulate(pod, {i: bot for i, (bot, _) in enumerate(engines)})
    return store_pod(pod, s, [SeatPlan(name, version) for name, (_, version) in zip(bots, engines)], seed=seed,
                     kind="simulated", started=started, build_decks=build_decks, owner=owner)


@transaction.atomic
def store_pod(pod, s: SetList, plans: Sequence[SeatPlan], seed: int | None, kind: str, started=None,
              build_decks: bool = True, owner=None) -> Draft:
    draft = Draft.objects.create(set_code=s.code, kind=kind, status="complete" if pod.is_complete else "drafting",
                                 seats=pod.seats, packs=pod.packs, picks_per_pack=pod.picks_per_pack, seed=seed,
                                 started=started or timezone.now(), owner=owner)
    now = timezone.now()
    for seat, plan in enumerate(plans):
        row = DraftSeat.objects.create(draft=draft, seat=seat, drafter=plan.drafter, bot_version=plan.version,
                                       log_id=new_log_id())
        DraftPick.objects.bulk_create([
            DraftPick(seat=row, pack_number=r.pack_number, pick_number=r.pick_number, pack=list(r.pack),
                      pool=list(r.pool), pick=r.pick, picked_at=now,
                      scores=[[n, round(float(v), 5)] for n, v in r.scores] if r.scores else None)
            for r in pod.history(seat)])
        if build_decks and pod.is_complete:
            build_seat_deck(row, pod.pool(seat), s)
    return draft


def build_seat_deck(seat: DraftSeat, pool: Sequence[str], s: SetList):
    """Auto-build a 40-card deck from a pool and store it as a deck in the catalogue."""
    ratings, _ = draftsim_ratings(s)
    built = build_deck(list(pool), s, ratings=ratings)
    parsed = ParsedDeck(main=[Entry(n, c) for n, c in built.main], side=[Entry(n, c) for n, c in built.side],
                        name=f"{s.code} draft deck, seat {seat.seat + 1} ({built.colors or 'colorless'})")
    deck = save_parsed_deck(parsed, fmt="", source="draft")
    seat.deck = deck
    seat.colors = built.colors
    seat.save(update_fields=["deck", "colors"])
    return deck, built
