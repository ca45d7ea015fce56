"""Booster collation: which cards a freshly opened pack holds (pure: numpy, no Django).

Three kinds, chosen by :attr:`SetList.booster`:

``play``
    The simplified 14-card Play Booster that the proxy draft logs in ``shared/data/drafts`` were
    collated with (see that folder's README, "Pack collation"): one rare-or-mythic slot (a mythic
    with probability 1/7), 3 distinct uncommons and 10 distinct commons, never a duplicate.
    The random draws are made in the same order and with the same NumPy calls as the generator
    of those logs (one uniform for mythic-or-rare, one integer for the card, then
    ``choice(..., replace=False)`` for the uncommons and for the commons), so a Generator in the
    same state yields exactly the logged packs; the tests check this against the BLB file.
    ``variant="play-full"`` adds what real Play Boosters have where the card list allows it:
    a wildcard slot of any rarity and a land slot (see :meth:`BoosterCollation._open_play_full`).

``classic``
    The 15-card booster of M19/M20: a rare-or-mythic (mythic 1 in 8), 3 uncommons, 10 commons and a
    basic land from ``set_list.basics`` (or the five :data:`BASIC_LANDS`).

``cube``
    Packs of ``pack_size`` cards dealt without replacement from the whole list, so every card of
    the cube appears at most once per draft: call :meth:`BoosterCollation.open_packs` once for all
    packs of the draft.

Within a rarity every card is equally likely; cards of rarity ``basic`` or ``special`` and basic
land names never fill the rarity slots. Everything is drawn from the caller's
:class:`numpy.random.Generator`, so the same seed gives the same packs.
"""
from __future__ import annotations

import numpy as np

from drafts.core.cards import BASIC_LANDS, DraftError, SetList

PLAY_MYTHIC_RATE = 1 / 7
CLASSIC_MYTHIC_RATE = 1 / 8
PLAY_SIZE, CLASSIC_SIZE, CUBE_DEFAULT_SIZE = 14, 15, 15
# Play Booster wildcard slot: rarity weights (renormalised over the rarities the set has).
WILDCARD_WEIGHTS = (("common", 0.70), ("uncommon", 0.20), ("rare", 0.085), ("mythic", 0.015))
VARIANTS = ("play", "play-full", "classic", "cube")


def _slot_cards(set_list: SetList, rarity: str) -> list[str]:
    """Names of a rarity that may fill a booster slot (never basic lands), in set order."""
    return [c.name for c in set_list.cards if c.rarity == rarity and not c.is_basic]


class BoosterCollation:
    """Opens packs for one set list; see the module docstring for the kinds.

    ``variant`` defaults to the set's booster kind; ``"play-full"`` is allowed for ``play`` sets.
    ``pack_size`` is only for cubes (default 15); the booster kinds have a fixed size.
    ``mythic_rate`` overrides the mythic share of the rare slot (1/7 play, 1/8 classic).
    A set that lacks the cards a slot needs raises :class:`DraftError` here, not mid-draft.
    """

    def __init__(self, set_list: SetList, variant: str | None = None, pack_size: int | None = None,
                 mythic_rate: float | None = None):
        self.set_list = set_list
        self.variant = variant or set_list.booster
        if self.variant not in VARIANTS:
            raise DraftError(f"unknown collation variant {self.variant!r}; expected one of {', '.join(VARIANTS)}")
        allowed = {"play": ("play", "play-full")}.get(set_list.booster, (set_list.booster,))
        if self.variant not in allowed:
            raise DraftError(f"variant {self.variant!r} does not fit set {set_list.code} "
                             f"(booster kind {set_list.booster!r})")
        natural = {"play": PLAY_SIZE, "play-full": PLAY_SIZE, "classic": CLASSIC_SIZE}.get(self.variant)
        if natural is None:
            self.pack_size = int(pack_size or CUBE_DEFAULT_SIZE)
            if self.pack_size < 1:
                raise DraftError(f"cube pack size must be at least 1, not {pack_size}")
        else:
            if pack_size not in (None, natural):
                raise DraftError(f"a {self.variant} booster holds {natural} cards; pack_size={pack_size} "
                                 "is only for cubes")
            self.pack_size = natural
        default_rate = CLASSIC_MYTHIC_RATE if self.variant == "classic" else PLAY_MYTHIC_RATE
        self.mythic_rate = default_rate if mythic_rate is None else float(mythic_rate)

        self.rares = _slot_cards(set_list, "rare")
        self.mythics = _slot_cards(set_list, "mythic")
        self.uncommons = _slot_cards(set_list, "uncommon")
        self.commons = _slot_cards(set_list, "common")
        self.basics: list[str] = [c.name for c in (set_list.basics or BASIC_LANDS)]
        self.lands = [n for n in self.commons if set_list.card(n).is_land]  # play-full land slot
        self.cube = [c.name for c in set_list.cards]
        self._check()

    def _check(self) -> None:
        code = self.set_list.code
        if self.variant == "cube":
            if not self.cube:
                raise DraftError(f"cube {code} has no cards")
            return
        if not self.rares and not self.mythics:
            raise DraftError(f"set {code} has no rares or mythics for the rare slot")
        commons = 8 if self.variant == "play-full" else 10
        for label, pool, need in (("uncommons", self.uncommons, 3), ("commons", self.commons, commons)):
            if len(pool) < need:
                raise DraftError(f"set {code} has {len(pool)} {label}; a {self.variant} booster needs at least {need}")

    # -- opening -------------------------------------------------------------------------------

    def open_pack(self, rng: np.random.Generator) -> list[str]:
        """One pack, slot by slot (rare, uncommons, [wildcard, land,] commons, [basic])."""
        if self.variant == "cube":
            return self._deal(rng, 1)[0]
        if self.variant == "play-full":
            return self._open_play_full(rng)
        pack = [self._rare_slot(rng)]
        pack += self._distinct(rng, self.uncommons, 3)
        pack += self._distinct(rng, self.commons, 10)
        if self.variant == "classic":
            pack.append(self.basics[int(rng.integers(len(self.basics)))])
        return pack

    def open_packs(self, rng: np.random.Generator, n: int) -> list[list[str]]:
        """``n`` packs in order. For a cube they are dealt from one shuffle: no card twice."""
        if n < 0:
            raise DraftError(f"cannot open {n} packs")
        if self.variant == "cube":
            return self._deal(rng, n)
        return [self.open_pack(rng) for _ in range(n)]

    # -- slots ---------------------------------------------------------------------------------

    def _rare_slot(self, rng: np.random.Generator) -> str:
        """Mythic with probability ``mythic_rate`` (when the set has mythics), else a rare.

        The uniform is drawn even when the set has only one of the two rarities, so the stream of
        draws (and hence later slots) does not depend on the set's make-up.
        """
        mythic = rng.random() < self.mythic_rate
        pool = self.mythics if (mythic and self.mythics) or not self.rares else self.rares
        return pool[int(rng.integers(len(pool)))]

    @staticmethod
    def _distinct(rng: np.random.Generator, pool: list[str], k: int) -> list[str]:
        return [pool[i] for i in rng.choice(len(pool), k, replace=False)]

    def _open_play_full(self, rng: np.random.Generator) -> list[str]:
        """Rare/mythic, 3 uncommons, a wildcard, a land, then commons up to 14 cards.

        The wildcard's rarity is drawn with weights C 70 / U 20 / R 8.5 / M 1.5 %, renormalised
        over the rarities that still have a card not already in the pack; the card is uniform
        within it. The land slot takes a common non-basic land of the set (one not yet in the pack)
        and falls back to a basic when the set has none. Commons never repeat a card in the pack.
        """
        pack = [self._rare_slot(rng)]
        pack += self._distinct(rng, self.uncommons, 3)
        taken = set(pack)
        pools = {"common": self.commons, "uncommon": self.uncommons, "rare": self.rares, "mythic": self.mythics}
        options = [(r, w, [n for n in pools[r] if n not in taken]) for r, w in WILDCARD_WEIGHTS]
        options = [(r, w, names) for r, w, names in options if names]
        weights = np.array([w for _, w, _ in options])
        which = int(np.searchsorted(np.cumsum(weights / weights.sum()), rng.random(), side="right"))
        names = options[min(which, len(options) - 1)][2]
        pack.append(names[int(rng.integers(len(names)))])
        taken.add(pack[-1])
        lands = [n for n in self.lands if n not in taken] or self.basics
        pack.append(lands[int(rng.integers(len(lands)))])
        taken.add(pack[-1])
        commons = [n for n in self.commons if n not in taken]
        need = PLAY_SIZE - len(pack)
        if len(commons) < need:
            raise DraftError(f"set {self.set_list.code}: only {len(commons)} commons left for {need} common slots")
        pack += self._distinct(rng, commons, need)
        return pack

    def _deal(self, rng: np.random.Generator, n: int) -> list[list[str]]:
        need = n * self.pack_size
        if need > len(self.cube):
            raise DraftError(f"cube {self.set_list.code} has {len(self.cube)} cards; {n} packs of "
                             f"{self.pack_size} need {need}")
        order = rng.permutation(len(self.cube))[:need]
        return [[self.cube[i] for i in order[p * self.pack_size:(p + 1) * self.pack_size]] for p in range(n)]


__all__ = ["BoosterCollation", "CLASSIC_MYTHIC_RATE", "PLAY_MYTHIC_RATE", "VARIANTS", "WILDCARD_WEIGHTS"]
