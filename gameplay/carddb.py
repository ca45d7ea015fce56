"""The rules engine's card database, built from our catalogue (the shell around core.carddata).

``card_data_path()`` is a JSON file under ``VAR_DIR/game`` named after a fingerprint of the
catalogue, so it is rebuilt when cards are imported. ``get_engine()`` loads it once per process.
``EngineCard`` rows record, per card, whether the engine fully supports it.
"""
from __future__ import annotations

import hashlib
import json
import os
import shutil
import threading
from concurrent.futures import ProcessPoolExecutor, as_completed
from importlib.metadata import PackageNotFoundError, version
from multiprocessing import get_context
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.db.models import Max

from decks.core.names import normalize_name
from decks.models import Card
from gameplay.core.engine.carddata import build_card_data
from gameplay.core.engine.adapter import PhaseEngine
from gameplay.models import EngineCard

ENGINE = "phase"
CARD_FIELDS = ("id", "name", "front_name", "mana_cost", "colors", "color_identity", "type_line", "supertypes",
               "types", "subtypes", "oracle_text", "power", "toughness", "loyalty", "defense", "layout",
               "keywords", "faces")
CHUNK_SIZE = 500  # cards a worker converts at a time (a few seconds: the progress bar moves, the pool stays fed)
_lock = threading.Lock()
_engines: dict[str, object] = {}


def engine_version() -> str:
    """The installed phase-python's version; "" when it is not installed (the play features say so)."""
    try:
        return version("phase-python")
    except PackageNotFoundError:
        return ""


def _fingerprint() -> str:
    agg = Card.objects.aggregate(n=Max("id"))
    raw = f"{Card.objects.count()}:{agg['n']}:{engine_version()}"
    return hashlib.sha1(raw.encode()).hexdigest()[:12]


def card_data_path() -> Path:
    return Path(settings.VAR_DIR) / "game" / f"card-data-{_fingerprint()}.json"


def merge_card_data(parts) -> dict:
    """Chunks of ``build_card_data`` output, in catalogue order -> the mapping one call over the whole
    catalogue returns (same keys, same order, same faces): a face without a layout replaces one with a
    layout, else the first wins, as inside ``build_card_data``."""
    data: dict[str, dict] = {}
    for part in parts:
        for key, entry in part.items():
            if key not in data or (data[key].get("layout") and not entry.get("layout")):
                data[key] = entry
    return data


def convert_chunk(cards: list[dict]) -> tuple[dict, dict]:
    """One chunk of catalogue records -> (its card data, ``{name: problems}``); run in a worker process."""
    import phase  # noqa: PLC0415 - the rules engine's binding, loaded only to build (it may be missing)

    verdicts: dict[str, list | None] = {}
    data = build_card_data(cards, phase.build_oracle_face, phase.build_oracle_face_multi, verdicts.__setitem__)
    return data, verdicts


class Conversion:
    """A conversion of catalogue records, started at once and collected by :meth:`result`.

    phase's ``build_oracle_face`` holds the GIL (threads do not scale), so with ``workers`` > 1 the records
    go in chunks of ``chunk_size`` to a pool of forked processes, which work while the caller does something
    else (``setup_site`` imports the decks meanwhile); the chunks are merged in catalogue order, so the
    result is the one a single ``build_card_data`` call gives. One worker: converted in :meth:`result`."""

    def __init__(self, cards: list[dict], workers: int = 1, chunk_size: int = CHUNK_SIZE, fingerprint: str = ""):
        self.cards = cards
        self.fingerprint = fingerprint  # the catalogue's, when the cards are all of it
        self.chunks = [cards[i:i + chunk_size] for i in range(0, len(cards), chunk_size)]
        self.pool = None
        self.futures: dict = {}
        self.cache: Path | None = None  # start_build: where the result is kept, and what was kept there before
        self.saved: dict | None = None
        if workers > 1 and len(self.chunks) > 1:
            # fork: the workers inherit the loaded binding and never touch Django (spawn would re-import the settings)
            self.pool = ProcessPoolExecutor(max_workers=min(workers, len(self.chunks)), mp_context=get_context("fork"))
            self.futures = {self.pool.submit(convert_chunk, chunk): i for i, chunk in enumerate(self.chunks)}

    def result(self, progress=None) -> tuple[dict, dict]:
        """(the engine's card data, ``{name: problems}`` in catalogue order); ``progress(done, total)`` is told
        after each chunk (each card when serial)."""
        total = len(self.cards)
        if self.pool is None:
            verdicts: dict[str, list | None] = {}

            def on_card(name, problems):
                verdicts[name] = problems
                if progress:
                    progress(len(verdicts), total)

            import phase  # noqa: PLC0415 - the rules engine's binding, loaded only to build (it may be missing)

            data = build_card_data(self.cards, phase.build_oracle_face, phase.build_oracle_face_multi, on_card)
            return data, verdicts
        results: list = [None] * len(self.chunks)
        done = 0
        try:
            for future in as_completed(self.futures):
                i = self.futures[future]
                results[i] = future.result()
                done += len(self.chunks[i])
                if progress:
                    progress(done, total)
        finally:
            self.cancel()
        verdicts = {}
        for _, part in results:
            verdicts.update(part)
        return merge_card_data(data for data, _ in results), verdicts

    def cancel(self) -> None:
        """Stop the workers (the chunks not started are dropped)."""
        if self.pool is not None:
            self.pool.shutdown(cancel_futures=True)


def convert(cards: list[dict], workers: int = 1, progress=None, chunk_size: int = CHUNK_SIZE) -> tuple[dict, dict]:
    """The catalogue records -> (the engine's card data, ``{name: problems}`` in catalogue order)."""
    return Conversion(cards, workers, chunk_size).result(progress)


def catalogue_hash(cards: list[dict]) -> str:
    """What a conversion depends on: the cards' records (their ids aside) and the engine's version."""
    digest = hashlib.sha1(engine_version().encode())
    for card in cards:
        digest.update(json.dumps([card.get(k) for k in CARD_FIELDS if k != "id"], ensure_ascii=False,
                                 default=str).encode())
    return digest.hexdigest()[:16]


def _cached(cards: list[dict]) -> tuple[Path, dict | None]:
    """The conversion cache of these cards (``VAR_DIR/game/conversion-<catalogue hash>.json``: the verdicts
    and the card-data file written with them), and its content when both files are there."""
    cache = Path(settings.VAR_DIR) / "game" / f"conversion-{catalogue_hash(cards)}.json"
    if cache.exists():
        saved = json.loads(cache.read_text(encoding="utf-8"))
        data = cache.parent / saved["data"]
        if data.exists() and hashlib.sha1(data.read_bytes()).hexdigest() == saved["sha1"]:  # not rebuilt since
            return cache, saved
    return cache, None


def start_build(workers: int = 1) -> Conversion:
    """Start converting the whole catalogue now (``workers`` processes); :func:`build` finishes it. Nothing
    starts when the same catalogue was converted before (by the same engine version): its result is reused."""
    import phase  # noqa: PLC0415, F401 - loaded before the fork, so the workers inherit the binding

    cards = list(Card.objects.values(*CARD_FIELDS))
    cache, saved = _cached(cards)
    conversion = Conversion(cards, 1 if saved else workers, fingerprint=_fingerprint())
    conversion.cache, conversion.saved = cache, saved
    return conversion


def build(progress=None, workers: int = 1, started: Conversion | None = None, log=None) -> tuple[Path, dict]:
    """Build the card database and the EngineCard rows for the whole catalogue (``workers`` processes), or
    finish the conversion ``started`` by :func:`start_build` (redone when the catalogue changed since).
    ``log(text)`` is told when the writing starts."""
    phase_version = engine_version()
    conversion = started
    if started is None or started.fingerprint != _fingerprint():
        if started is not None:
            started.cancel()
        conversion = start_build(workers)
    cards = conversion.cards
    ids = {c["name"]: c["id"] for c in cards}
    path = card_data_path()
    path.parent.mkdir(parents=True, exist_ok=True)
    saved = conversion.saved
    if saved:  # converted before: the file and the verdicts as they were
        if saved["data"] != path.name:
            shutil.copyfile(conversion.cache.parent / saved["data"], path)
        verdicts, faces = dict(saved["verdicts"]), saved["faces"]
        if progress:
            progress(len(cards), len(cards))
    else:
        data, verdicts = conversion.result(progress)
        faces = len(data)
        if log:
            log(f"writing the card data ({faces} faces)")
        raw = json.dumps(data, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        tmp = path.with_suffix(".tmp")
        tmp.write_bytes(raw)
        os.replace(tmp, path)
        tmp = conversion.cache.with_suffix(".tmp")
        tmp.write_text(json.dumps({"data": path.name, "sha1": hashlib.sha1(raw).hexdigest(), "faces": faces,
                                   "verdicts": list(verdicts.items())}, ensure_ascii=False), encoding="utf-8")
        os.replace(tmp, conversion.cache)
    if log:
        log(f"writing {len(verdicts)} support rows")
    rows = [EngineCard(card_id=ids[name], engine=ENGINE, engine_version=phase_version, built=problems is not None,
                       supported=problems == [], problems=problems or []) for name, problems in verdicts.items()]
    with transaction.atomic():
        EngineCard.objects.filter(engine=ENGINE).delete()
        EngineCard.objects.bulk_create(rows, batch_size=2000)
    summary = {"cards": len(cards), "built": sum(v is not None for v in verdicts.values()),
               "supported": sum(v == [] for v in verdicts.values()), "faces": faces, "path": str(path)}
    return path, summary


def get_engine():
    """The process-wide PhaseEngine over the current catalogue (built on first use)."""
    path = card_data_path()
    with _lock:
        engine = _engines.get(str(path))
        if engine is None:
            if not path.exists():
                build()
            engine = PhaseEngine(path)
            _engines.clear()
            _engines[str(path)] = engine
    return engine


def resolve_names(names) -> tuple[dict[str, Card], list[str]]:
    """Deck names -> catalogue cards (by normalised name or front face) and the unknown names."""
    wanted = {n: normalize_name(n) for n in set(names)}
    found = {c.name_key: c for c in Card.objects.filter(name_key__in=set(wanted.values()))}
    missing = [n for n, key in wanted.items() if key not in found]
    if missing:
        fronts = {normalize_name(c.front_name): c for c in Card.objects.filter(front_name__in=missing)}
        found.update(fronts)
    resolved = {n: found[k] for n, k in wanted.items() if k in found}
    return resolved, sorted(n for n in wanted if n not in resolved)


def deck_support(names) -> dict:
    """Which cards of a deck the engine does not know or does not fully support.

    Returns ``{"unknown": [names], "unsupported": {name: [problems]}, "supported": bool}``.
    """
    resolved, unknown = resolve_names(names)
    rows = {r.card_id: r for r in EngineCard.objects.filter(engine=ENGINE, card__in=[c.id for c in resolved.values()])}
    unsupported = {}
    for name, card in sorted(resolved.items()):
        row = rows.get(card.id)
        if row is None or not row.built:
            unsupported[name] = ["the engine cannot build this card"]
        elif not row.supported:
            unsupported[name] = row.problems or ["some abilities are not implemented"]
    return {"unknown": unknown, "unsupported": unsupported, "supported": not unknown and not unsupported}


def support_view(cards) -> dict | None:
    """Engine support of some catalogue cards, for the card and deck pages.

    ``None`` when support was never computed (``build_engine_cards`` has not run), else
    ``{"checked": n, "unsupported": [{"card": Card, "problems": [...]}], "supported": bool}``.
    """
    cards = list(cards)
    rows = {r.card_id: r for r in EngineCard.objects.filter(engine=ENGINE, card__in=[c.pk for c in cards])}
    if not rows and not EngineCard.objects.filter(engine=ENGINE).exists():
        return None
    unsupported = []
    for card in sorted(cards, key=lambda c: c.name):
        row = rows.get(card.pk)
        if row is None or not row.built:
            unsupported.append({"card": card, "problems": ["the engine cannot build this card"]})
        elif not row.supported:
            unsupported.append({"card": card, "problems": row.problems or ["some abilities are not implemented"]})
    return {"checked": len(cards), "unsupported": unsupported, "supported": not unsupported}
