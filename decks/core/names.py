"""Card-name normalisation and lookup (pure: no Django).

``normalize_name`` turns whatever a player typed or pasted into a lookup key;
``CardIndex`` maps such keys back to canonical card names and offers
"did you mean" suggestions via rapidfuzz.
"""
from __future__ import annotations

import re
import unicodedata
from collections.abc import Iterable, Iterator

from rapidfuzz import fuzz, process

__all__ = ["normalize_name", "loose_key", "CardIndex"]

# Characters mapped before Unicode folding (some would otherwise decompose into
# a space plus a combining mark, e.g. the acute accent U+00B4).
_CHAR_MAP = str.maketrans(
    {
        "æ": "ae", "Æ": "AE",
        "œ": "oe", "Œ": "OE",
        "’": "'", "‘": "'", "‚": "'", "‛": "'", "`": "'", "´": "'", "′": "'", "ʼ": "'", "＇": "'",
        "“": '"', "”": '"', "„": '"', "″": '"', "＂": '"',
        "‐": "-", "‑": "-", "‒": "-", "–": "-", "—": "-", "―": "-", "−": "-", "﹣": "-", "－": "-",
        "⁄": "/", "∕": "/", "／": "/",
    }
)
_SEPARATOR = re.compile(r"\s*/+\s*")
FACE_SEPARATOR = " // "
_WORD = re.compile(r"\w+")

# Suggestion tuning (see CardIndex._shortlist).
_RATIO_SHORTLIST = 150
_MAX_QUERY_WORDS = 8
_MIN_WORD = 3
_WORD_MATCHES = 12
_WORD_CUTOFF = 75
_MAX_POSTING = 2000
_MAX_SHORTLIST = 6000
_MAX_QUERY_CHARS = 200
_RELATIVE_CUTOFF = 20


def normalize_name(s: str) -> str:
    """Lookup key for a card name: accent-, case-, quote-, dash- and spacing-insensitive.

    Any run of slashes (with or without spaces around it) becomes ``" // "``,
    so ``"Fire/Ice"`` and ``"Fire // Ice"`` give the same key.
    """
    if not s:
        return ""
    s = s.translate(_CHAR_MAP)
    s = unicodedata.normalize("NFKD", s)
    s = "".join(ch for ch in s if not unicodedata.combining(ch))
    # NFKD may produce characters from the map again (e.g. fullwidth forms).
    s = s.translate(_CHAR_MAP).casefold()
    s = _SEPARATOR.sub(FACE_SEPARATOR, s)
    return " ".join(s.split())


def loose_key(s: str) -> str:
    """Letters and digits only (``"Jace the Mind Sculptor"`` == ``"Jace, the Mind-Sculptor"``)."""
    return "".join(ch for ch in normalize_name(s) if ch.isalnum())


class CardIndex:
    """Canonical card names, findable by full name or by any face name.

    The one resolver of the site (the pages, the API, the importers, the commands, deck completion and the
    embeddings): the exact name first, then a face name (``"Brazen Borrower"`` resolves to its card
    ``"Brazen Borrower // Petty Theft"`` unless another card has that exact full name, in which case the full
    name wins), then the loose key (letters and digits only) only when exactly one card has it. So
    ``"Wasteland"`` and ``"Waste Land"``, two cards whose loose keys collide, each stay themselves.

    Built from a plain list of names (pure: no database); :meth:`position` gives a name's index in that list.
    """

    def __init__(self, names: Iterable[str]) -> None:
        canonical: list[str] = []
        position: dict[str, int] = {}
        for i, name in enumerate(names):
            if name and name not in position:
                position[name] = i
                canonical.append(name)
        self._names: tuple[str, ...] = tuple(canonical)
        self._position = position

        by_key: dict[str, str] = {}
        for name in canonical:
            key = normalize_name(name)
            if key:
                by_key.setdefault(key, name)
        for name in canonical:
            if FACE_SEPARATOR not in normalize_name(name):
                continue
            for face in normalize_name(name).split(FACE_SEPARATOR):
                face = face.strip()
                if face:
                    by_key.setdefault(face, name)
        self._by_key = by_key

        # Punctuation-free fallback; ambiguous loose keys map to None.
        loose: dict[str, str | None] = {}
        for key, name in by_key.items():
            lk = "".join(ch for ch in key if ch.isalnum())
            if not lk:
                continue
            if lk in loose and loose[lk] != name:
                loose[lk] = None
            else:
                loose[lk] = name
        self._loose = loose
        self._suggest_ready = False

    def _suggest_tables(self) -> None:
        """The suggestion tables, built on the first suggestion (resolving alone never needs them)."""
        if self._suggest_ready:
            return
        self._choice_keys: list[str] = list(self._by_key)
        self._choice_names: list[str] = [self._by_key[k] for k in self._choice_keys]
        # Word -> indices of keys containing it; used to shortlist candidates
        # before the (comparatively slow) WRatio scoring.
        postings: dict[str, list[int]] = {}
        for i, key in enumerate(self._choice_keys):
            for word in set(_WORD.findall(key)):
                postings.setdefault(word, []).append(i)
        self._postings = postings
        self._words: list[str] = list(postings)
        self._suggest_ready = True

    def resolve(self, name: str) -> str | None:
        """Canonical name for ``name``, or None when no card matches."""
        if not isinstance(name, str):
            return None
        if name in self._position:
            return name
        key = normalize_name(name)
        if not key:
            return None
        found = self._by_key.get(key)
        if found is not None:
            return found
        lk = "".join(ch for ch in key if ch.isalnum())
        return self._loose.get(lk) if lk else None

    def position(self, name: str) -> int | None:
        """Index in the list the index was built from of the card ``name`` resolves to, or None."""
        found = self.resolve(name)
        return None if found is None else self._position[found]

    def _shortlist(self, query: str) -> list[int]:
        """Indices of keys worth scoring with WRatio for ``query``.

        WRatio over every key costs tens of milliseconds for a full card pool, so
        candidates are gathered cheaply first: the keys closest by plain ratio
        (whole-name typos) plus every key sharing a word that is close to one of
        the query's words (partial names, word order, typos inside a word).
        """
        found: set[int] = {
            idx
            for _key, _score, idx in process.extract(
                query, self._choice_keys, scorer=fuzz.ratio, processor=None, limit=_RATIO_SHORTLIST
            )
        }
        words = sorted(set(_WORD.findall(query)), key=len, reverse=True)[:_MAX_QUERY_WORDS]
        for word in words:
            if len(word) < _MIN_WORD:
                continue
            for close, _score, _i in process.extract(
                word, self._words, scorer=fuzz.ratio, processor=None, limit=_WORD_MATCHES, score_cutoff=_WORD_CUTOFF
            ):
                found.update(self._postings[close][:_MAX_POSTING])
                if len(found) >= _MAX_SHORTLIST:
                    return list(found)
        return list(found)

    def suggest_with_scores(self, name: str, limit: int = 3, score_cutoff: float = 70) -> list[tuple[str, float]]:
        """Closest canonical names with their rapidfuzz WRatio score (0-100), best first.

        Names scoring far below the best match are left out, so a near-exact
        match is not padded with unrelated cards.
        """
        query = normalize_name(name)[:_MAX_QUERY_CHARS]
        self._suggest_tables()
        if not query or limit <= 0 or not self._choice_keys:
            return []
        choices = {i: self._choice_keys[i] for i in self._shortlist(query)}
        hits = process.extract(
            query, choices, scorer=fuzz.WRatio, processor=None, limit=limit * 3 + 3, score_cutoff=score_cutoff
        )
        # Ties on WRatio (common with partial matches) go to the closer whole name.
        ranked = sorted(hits, key=lambda hit: (-hit[1], -fuzz.ratio(query, hit[0], processor=None)))
        out: list[tuple[str, float]] = []
        taken: set[str] = set()
        for _key, score, idx in ranked:
            canonical = self._choice_names[idx]
            if canonical in taken:
                continue
            if out and score < out[0][1] - _RELATIVE_CUTOFF:
                break
            taken.add(canonical)
            out.append((canonical, float(score)))
            if len(out) >= limit:
                break
        return out

    def suggest(self, name: str, limit: int = 3) -> list[str]:
        """Up to ``limit`` canonical names that look closest to ``name``."""
        return [canonical for canonical, _score in self.suggest_with_scores(name, limit)]

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and self.resolve(name) is not None

    def __len__(self) -> int:
        return len(self._names)

    def __iter__(self) -> Iterator[str]:
        return iter(self._names)
