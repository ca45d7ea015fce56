"""How the draftable sets are offered (pure: no Django): newest first, each bonus sheet right after its set, cubes
last, every one named with its code.

Release order comes from the data, not from a table: 17Lands' card list gives each printing its Arena id, and
Arena numbers its cards as sets come out, so a set's smallest booster id orders it among the others (M19 comes
after Dominaria and before Guilds of Ravnica, as released). A set no printing of which has an Arena id (an
Arena-only set known from its draft list) borrows the newest id its cards have elsewhere. A bonus sheet (a set
of reprints drafted inside another set's boosters, e.g. MAR in Marvel Super Heroes) is recognised by the same
data: every one of its booster cards is on the draft list of one other set, and it has no list of its own.
"""
from __future__ import annotations

from dataclasses import dataclass, replace

from decks.core.setnames import set_label

SETS_GROUP = "Sets, newest first"
CUBES_GROUP = "Cubes"


@dataclass(frozen=True)
class DraftableSet:
    code: str
    name: str             # the set's own name, empty when nobody named it
    cards: int            # booster cards
    booster: str          # play | classic | cube
    release: int | None   # a key that grows with the release date (an Arena id), None when unknown
    part_of: str = ""     # the set whose boosters this bonus sheet is drafted in

    @property
    def label(self) -> str:
        """'Bloomburrow (BLB)'; a bonus sheet nobody named: 'Marvel Super Heroes bonus sheet (MAR)'; else the code."""
        return set_label(self.code, self.name)


def bonus_sheet_of(booster_cards: dict[str, set], draft_lists: dict[str, set], release: dict[str, int | None],
                   cubes: frozenset[str] = frozenset()) -> dict[str, str]:
    """{bonus sheet code: the code of the set it is drafted in}: a set with no draft list of its own whose booster
    cards are all on another set's list (not a cube's); among several such sets, the one released nearest to it."""
    out = {}
    for code, cards in booster_cards.items():
        if code in draft_lists or not cards:
            continue
        hosts = [host for host, listed in draft_lists.items() if host != code and host not in cubes and cards <= listed]
        if hosts:
            mine = release.get(code)
            out[code] = min(hosts, key=lambda h: (abs((release.get(h) or 0) - mine) if mine is not None else 0, h))
    return out


def _newest_first(s: DraftableSet) -> tuple:
    return (s.release is None, -(s.release or 0), s.code)


def arrange(sets: list[DraftableSet]) -> list[tuple[str, list[DraftableSet]]]:
    """[(group, sets)]: the sets newest first, each followed by its bonus sheets (named after it when nobody named
    them), then the cubes; a bonus sheet whose set is not offered stands as a set of its own."""
    codes = {s.code for s in sets}
    names = {s.code: s.name or s.code for s in sets}
    sheets: dict[str, list[DraftableSet]] = {}
    main, cubes = [], []
    for s in sets:
        if s.booster == "cube":
            cubes.append(s)
        elif s.part_of and s.part_of in codes and s.part_of != s.code:
            if not s.name or s.name == s.code:
                s = replace(s, name=f"{names[s.part_of]} bonus sheet")
            sheets.setdefault(s.part_of, []).append(s)
        else:
            main.append(s)
    ordered = []
    for s in sorted(main, key=_newest_first):
        ordered.append(s)
        ordered += sorted(sheets.get(s.code, []), key=_newest_first)
    groups = [(SETS_GROUP, ordered)]
    if cubes:
        groups.append((CUBES_GROUP, sorted(cubes, key=lambda s: s.code)))
    return groups
