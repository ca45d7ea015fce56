"""A small hand-made set in the database (cards, printings in draft-list order) for the shell tests, and what
a seat may be told of a pod: its pick log as the truth to check messages against, the cards it may not see,
and a planted leak that proves the scans can fail."""
from __future__ import annotations

import pytest

from tests.leaks import assert_no_leak

COLORS = "WUBRG"
# (rarity, how many per colour)
SHAPE = [("common", 8), ("uncommon", 3), ("rare", 2)]


def make_set(code: str = "TST") -> list[str]:
    """50+ cards: per colour 8 commons (creatures and spells, a curve), 3 uncommons, 2 rares; a gold
    uncommon per ally pair, 2 mythics, a colourless common artifact and a 'special' guest."""
    from decks.models import Card, CardSet, Printing
    from decks.services import bump_catalogue_version

    card_set = CardSet.objects.create(code=code, name=f"Test set {code}", set_type="expansion", source="test")
    rows = []
    for color in COLORS:
        for rarity, n in SHAPE:
            for i in range(n):
                mv = 1 + (i % 6)
                creature = i % 3 != 2
                rows.append(dict(name=f"{code} {color} {rarity} {i}", rarity=rarity, colors=color,
                                 mana_cost="{%d}{%s}" % (mv - 1, color) if mv > 1 else "{%s}" % color,
                                 mana_value=mv, types="Creature" if creature else "Instant"))
    for pair in ("WU", "UB", "BR", "RG", "GW"):
        rows.append(dict(name=f"{code} {pair} gold", rarity="uncommon", colors="".join(c for c in COLORS if c in pair),
                         mana_cost="{1}{%s}{%s}" % (pair[0], pair[1]), mana_value=3, types="Creature"))
    rows.append(dict(name=f"{code} mythic dragon", rarity="mythic", colors="R", mana_cost="{4}{R}{R}", mana_value=6,
                     types="Creature"))
    rows.append(dict(name=f"{code} mythic angel", rarity="mythic", colors="W", mana_cost="{3}{W}{W}", mana_value=5,
                     types="Creature"))
    rows.append(dict(name=f"{code} golem", rarity="common", colors="", mana_cost="{3}", mana_value=3,
                     types="Artifact Creature"))
    rows.append(dict(name=f"{code} guest", rarity="special", colors="B", mana_cost="{B}", mana_value=1, types="Instant"))
    names = []
    for position, r in enumerate(rows):
        card = Card.objects.create(name=r["name"], name_key=r["name"].lower(), front_name=r["name"],
                                   mana_cost=r["mana_cost"], mana_value=r["mana_value"], colors=r["colors"],
                                   color_identity=r["colors"], type_line=r["types"], types=r["types"])
        Printing.objects.create(card=card, card_set=card_set, rarity=r["rarity"], position=position,
                                is_booster=r["rarity"] != "special")
        names.append(r["name"])
    for basic in ("Plains", "Island", "Swamp", "Mountain", "Forest"):
        Card.objects.get_or_create(name=basic, defaults=dict(name_key=basic.lower(), front_name=basic,
                                                             type_line="Basic Land", types="Land", supertypes="Basic",
                                                             copy_limit=0))
    bump_catalogue_version()
    return names


@pytest.fixture
def draft_set(db):
    return make_set("TST")


@pytest.fixture(autouse=True)
def model_dir(settings, tmp_path):
    """Trained versions go to a temporary folder, never into the site's var/models."""
    settings.MTG_MODEL_DIR = tmp_path / "models"
    return settings.MTG_MODEL_DIR


# --- hidden information: what a seat may be told ------------------------------------------------------

def card_names(cards) -> list[str]:
    return [c["name"] for c in cards or []]


class PickLog:
    """Every seat's pick log of a pod (its DraftPick rows): what each seat was shown at each pick and what
    it took, the truth that the messages a seat received are checked against."""

    def __init__(self, draft):
        from drafts.core.pod import DraftPod
        from drafts.models import DraftPick
        from drafts.services import set_list

        self.shown: dict[tuple[int, int, int], tuple[list, list]] = {}
        self.picks: dict[int, list[str]] = {}
        self.cards: set[str] = set()  # every card of the draft: all the packs opened in it
        for p in DraftPick.objects.filter(seat__draft=draft).select_related("seat").order_by(
                "seat__seat", "pack_number", "pick_number"):
            self.shown[(p.seat.seat, p.pack_number, p.pick_number)] = (p.pack, p.pool)
            self.picks.setdefault(p.seat.seat, []).append(p.pick)
            self.cards.update(p.pack)
        draft.refresh_from_db()
        pod = DraftPod.from_state(set_list(draft.set_code), draft.state)
        for seat in range(pod.seats):  # the packs the seats hold now, not picked from yet
            pack = pod.current_pack(seat)
            if pack is not None:
                self.shown[(seat, pod.pack_number, pod.pick_number(seat))] = (pack, pod.pool(seat))
                self.cards.update(pack)

    def check(self, seat: int, msg: dict) -> None:
        """``msg`` was sent to ``seat``'s socket: a seat view is that seat's own, its pack the one the log
        says it was shown then and its pool its own picks so far; and no message names a card of the
        draft outside the seat's own pack and pool at that point (the other seats' packs and pools)."""
        allowed: set[str] = set()
        if msg["type"] == "seat":
            assert msg["seat"] == seat, f"seat {seat} was sent seat {msg['seat']}'s view"
            pool = card_names(msg["pool"])
            assert pool == self.picks.get(seat, [])[:len(pool)], f"seat {seat} was sent a pool not its own"
            allowed = set(pool)
            if msg["pack"]:
                pack, before = self.shown[(seat, msg["pack_number"], msg["pick_number"])]
                assert card_names(msg["pack"]) == pack and pool == before, f"seat {seat} was sent a pack not its own"
                allowed |= set(pack)
        elif msg["type"] == "picked":
            assert msg["card"] in self.picks.get(seat, []), f"seat {seat} was told of a pick not its own"
            allowed = {msg["card"]}
        assert_no_leak(msg, self.cards - allowed, what=f"seat {seat}'s {msg['type']} message")


def seat_secrets(pod, seat: int, every_card) -> set[str]:
    """The cards ``seat`` may not see in ``pod`` now: every card of the set (``every_card``) but those in its
    own current pack and pool. The other seats' packs and pools are among them."""
    return set(every_card) - set(pod.current_pack(seat) or []) - set(pod.pool(seat))


@pytest.fixture
def planted_leak(monkeypatch):
    """A deliberate leak, to prove the scans can fail: every seat view also carries the next seat's pack and pool."""
    from drafts.pods import service

    real = service.seat_view

    def leaky(pod, seat, **kwargs):
        view = real(pod, seat, **kwargs)
        nxt = (seat + 1) % pod.seats
        view["next_seat"] = {"pack": pod.current_pack(nxt), "pool": pod.pool(nxt)}
        return view

    monkeypatch.setattr(service, "seat_view", leaky)
