"""Decklist text parsing (pure: no Django).

Reads the formats players paste: plain ``4 Card`` lists, MTGO ``.txt``
(main, blank line, sideboard), MTG Arena exports (section headers and
``(SET) 123`` suffixes), ``SB:`` prefixed lines, and ``//`` or ``#`` comments.
Unreadable lines become ``LineError``s; parsing never raises.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import Enum

from .names import CardIndex

__all__ = ["Entry", "ParsedDeck", "LineError", "ParseResult", "parse_decklist", "shown_errors", "MAX_COUNT",
           "MAX_LINE_LENGTH", "SHOWN_ERRORS"]

MAX_COUNT = 250          # copies of one card on one line (Relentless Rats decks stay well below)
MAX_LINE_LENGTH = 500    # longest card name is ~140 characters
MAX_SUGGESTED_LINES = 50  # fuzzy suggestions are computed for this many distinct unknown names at most
SHOWN_ERRORS = 10        # a page lists this many errors, then says how many more and on which lines


@dataclass(frozen=True)
class Entry:
    """``count`` copies of the card with canonical name ``name``."""

    name: str
    count: int


@dataclass
class ParsedDeck:
    main: list[Entry]
    side: list[Entry]
    name: str = ""
    commander: list[Entry] = field(default_factory=list)

    @property
    def main_count(self) -> int:
        return sum(e.count for e in self.main)

    @property
    def side_count(self) -> int:
        return sum(e.count for e in self.side)

    def counts(self) -> dict[str, int]:
        """Copies per card name over main deck and sideboard together."""
        total: dict[str, int] = {}
        for entry in (*self.main, *self.side):
            total[entry.name] = total.get(entry.name, 0) + entry.count
        return total


@dataclass(frozen=True)
class LineError:
    line_no: int  # 1-based
    line: str     # the raw line as pasted
    message: str
    suggestions: list[str] = field(default_factory=list)


@dataclass
class ParseResult:
    """``deck`` holds whatever could be read even when there are errors (None only
    when the text was refused outright, e.g. too many lines)."""

    deck: ParsedDeck | None
    errors: list[LineError]

    @property
    def ok(self) -> bool:
        return not self.errors


class _Section(Enum):
    MAIN = "main"
    SIDE = "side"
    COMMANDER = "commander"
    COMPANION = "companion"
    MAYBE = "maybe"
    ABOUT = "about"


_HEADER_WORDS: dict[str, _Section] = {
    "deck": _Section.MAIN,
    "main": _Section.MAIN,
    "maindeck": _Section.MAIN,
    "mainboard": _Section.MAIN,
    "sideboard": _Section.SIDE,
    "side": _Section.SIDE,
    "sb": _Section.SIDE,
    "commander": _Section.COMMANDER,
    "commanders": _Section.COMMANDER,
    "companion": _Section.COMPANION,
    "companions": _Section.COMPANION,
    "maybeboard": _Section.MAYBE,
    "maybe": _Section.MAYBE,
    "considering": _Section.MAYBE,
    "about": _Section.ABOUT,
}
# "Sideboard", "SIDEBOARD:", "Sideboard (15)", "Main Deck [60]", "// Sideboard", "# Commander"
_HEADER = re.compile(
    r"^(?:(?://|#)\s*)?(?P<word>[a-z]+(?:[ \t]+[a-z]+)?)\s*:?\s*"
    r"(?:\(\s*[0-9]{1,4}\s*\)|\[\s*[0-9]{1,4}\s*\]|[0-9]{1,4})?\s*:?$",
    re.IGNORECASE,
)
_MAX_HEADER_LENGTH = 40
_SB_PREFIX = re.compile(r"^sb\s*:\s*", re.IGNORECASE)
_NAME_LINE = re.compile(r"^name(?:\s*:\s*|\s+)(?P<name>.+)$", re.IGNORECASE)
_NAME_COLON = re.compile(r"^name\s*:\s*(?P<name>.+)$", re.IGNORECASE)
# "4 Bolt", "4x Bolt", "4 x Bolt", "-1 Bolt", "4" (count only)
_COUNT = re.compile(r"^(?P<count>[+-]?[0-9]+)(?:\s*[xX×](?=\s|$))?\s*(?P<rest>.*)$")
# Arena / Moxfield suffix: " (M11) 146", " (2X2) 12a *F*", " [MH2]"
_SET_SUFFIX = re.compile(
    r"\s*[(\[][A-Za-z0-9_-]{1,10}[)\]](?:\s+(?!\*)\S+)?(?:\s+\*[A-Za-z]{1,10}\*)*\s*$"
)
_INVISIBLE = str.maketrans({"\ufeff": None, "\u200b": None, "\u200c": None, "\u200d": None, "\u2060": None})


def _header_section(line: str) -> _Section | None:
    if len(line) > _MAX_HEADER_LENGTH:
        return None
    m = _HEADER.match(line)
    if not m:
        return None
    word = "".join(m.group("word").lower().split())
    return _HEADER_WORDS.get(word)


def _is_comment(line: str) -> bool:
    return line.startswith("//") or line.startswith("#")


def _strip_set(text: str) -> str:
    return _SET_SUFFIX.sub("", text).strip()


def _split_lines(text: str) -> list[str]:
    """Lines as an editor shows them (only CR/LF count as line breaks)."""
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


class _Board:
    """Ordered name -> count accumulator for one board."""

    def __init__(self) -> None:
        self.counts: dict[str, int] = {}

    def add(self, name: str, count: int) -> None:
        self.counts[name] = self.counts.get(name, 0) + count

    def entries(self) -> list[Entry]:
        return [Entry(name, count) for name, count in self.counts.items()]


class _Parser:
    def __init__(self, index: CardIndex) -> None:
        self.index = index
        self.boards = {s: _Board() for s in (_Section.MAIN, _Section.SIDE, _Section.COMMANDER, _Section.COMPANION)}
        self.errors: list[LineError] = []
        self.deck_name = ""
        self._suggestion_cache: dict[str, list[tuple[str, float]]] = {}

    # -- names ---------------------------------------------------------------

    def resolve(self, rest: str) -> str | None:
        """Canonical card for the text after the count.

        Tries the whole text first (so ``Fire // Ice`` stays one card), then the
        text before each ``//`` from the right (a trailing comment), each with and
        without an Arena ``(SET) 123`` suffix.
        """
        candidates = [rest]
        cuts = [m.start() for m in re.finditer("//", rest)]
        candidates += [rest[:cut].strip() for cut in reversed(cuts)]
        for candidate in candidates:
            if not candidate:
                continue
            found = self.index.resolve(candidate)
            if found is None:
                stripped = _strip_set(candidate)
                if stripped and stripped != candidate:
                    found = self.index.resolve(stripped)
            if found is not None:
                return found
        return None

    def unknown_name(self, rest: str) -> tuple[str, list[str]]:
        """The name to report for an unknown card, and suggestions for it.

        With a ``//`` in the text, both readings (split-card name vs. name plus
        comment) are scored and the one closer to a real card is reported.
        """
        whole = _strip_set(rest) or rest.strip()
        readings = [whole]
        if "//" in rest:
            before = _strip_set(rest[: rest.index("//")].strip())
            if before:
                readings.insert(0, before)  # ties go to the comment reading
        best_name, best_score = readings[0], -1.0
        best_suggestions: list[str] = []
        for reading in readings:
            scored = self._suggest(reading)
            score = scored[0][1] if scored else 0.0
            if score > best_score:
                best_name, best_suggestions, best_score = reading, [n for n, _ in scored], score
        return best_name, best_suggestions

    def _suggest(self, name: str) -> list[tuple[str, float]]:
        key = name.casefold()
        if key in self._suggestion_cache:
            return self._suggestion_cache[key]
        if len(self._suggestion_cache) >= MAX_SUGGESTED_LINES:
            return []
        scored = self.index.suggest_with_scores(name)
        self._suggestion_cache[key] = scored
        return scored

    # -- lines ---------------------------------------------------------------

    def error(self, line_no: int, raw: str, message: str, suggestions: list[str] | None = None) -> None:
        self.errors.append(LineError(line_no, raw, message, list(suggestions or [])))

    def card_line(self, line_no: int, raw: str, line: str) -> tuple[str, int] | None:
        """Parse ``[count] name [(SET) num] [// comment]``; record an error and return None when bad."""
        # A name that itself starts with digits ("1996 World Champion") wins over a count.
        whole = self.index.resolve(line)
        if whole is not None:
            return whole, 1

        m = _COUNT.match(line)
        if m:
            raw_count, rest = m.group("count"), m.group("rest").strip()
        else:
            raw_count, rest = "", line
        name_part = rest
        if rest.startswith("//") or rest.startswith("#"):
            name_part = ""  # "4 // comment"

        if not name_part:
            self.error(line_no, raw, f"Line has a count ({raw_count}) but no card name." if raw_count
                       else "Line has no card name.")
            return None

        count = 1
        if raw_count:
            digits = raw_count.lstrip("+-").lstrip("0") or "0"
            negative = raw_count.startswith("-") and digits != "0"
            if negative or digits == "0":
                self.error(line_no, raw, f"Count {raw_count} is not valid; each card needs at least 1 copy.")
                return None
            if len(digits) > len(str(MAX_COUNT)) or int(digits) > MAX_COUNT:
                shown = raw_count if len(raw_count) <= 12 else raw_count[:12] + "…"
                self.error(line_no, raw, f"Count {shown} is too large; at most {MAX_COUNT} copies of a card per line.")
                return None
            count = int(digits)

        found = self.resolve(name_part)
        if found is None:
            shown, suggestions = self.unknown_name(name_part)
            self.error(line_no, raw, f'Unknown card "{shown}"', suggestions)
            return None
        return found, count

    def parse(self, lines: list[str]) -> ParsedDeck:
        # The MTGO blank-line split only applies when nothing marks the sideboard explicitly.
        explicit_side = any(
            _header_section(stripped) is _Section.SIDE or _SB_PREFIX.match(stripped)
            for stripped in (ln.translate(_INVISIBLE).strip() for ln in lines)
        )
        section = _Section.MAIN
        blank_split_used = explicit_side
        main_has_cards = False

        for line_no, raw in enumerate(lines, start=1):
            line = raw.translate(_INVISIBLE).strip()
            if not line:
                if not blank_split_used and section is _Section.MAIN and main_has_cards:
                    section = _Section.SIDE
                    blank_split_used = True
                continue

            if len(line) > MAX_LINE_LENGTH:
                if not (_is_comment(line) or section is _Section.MAYBE):
                    self.error(line_no, raw, f"Line is too long ({len(line)} characters); "
                                             f"a card line has at most {MAX_LINE_LENGTH}.")
                continue

            header = _header_section(line)
            if header is not None:
                section = header
                continue

            named = _NAME_COLON.match(line)
            if section is _Section.ABOUT:
                named = _NAME_LINE.match(line)
                if not named:
                    section = _Section.MAIN  # About holds only the name; anything else is the deck
            if named:
                self.deck_name = " ".join(named.group("name").split())
                continue

            if _is_comment(line) or section is _Section.MAYBE:
                continue

            target = section
            sb = _SB_PREFIX.match(line)
            if sb:
                target = _Section.SIDE
                line = line[sb.end():].strip()
                if not line:
                    self.error(line_no, raw, "Line has no card name.")
                    continue

            parsed = self.card_line(line_no, raw, line)
            if parsed is None:
                continue
            name, count = parsed
            self.boards[target].add(name, count)
            if target is _Section.MAIN:
                main_has_cards = True

        side = self.boards[_Section.SIDE]
        # Arena lists the companion in its own section and again in the sideboard; count it once.
        for name, count in self.boards[_Section.COMPANION].counts.items():
            if name not in side.counts:
                side.add(name, count)
        return ParsedDeck(
            main=self.boards[_Section.MAIN].entries(),
            side=side.entries(),
            name=self.deck_name,
            commander=self.boards[_Section.COMMANDER].entries(),
        )


def parse_decklist(text: str, index: CardIndex, max_lines: int = 1000) -> ParseResult:
    """Parse a pasted decklist against ``index``. Never raises on any string."""
    lines = _split_lines(text or "")
    while lines and not lines[-1].strip():
        lines.pop()
    if len(lines) > max_lines:
        cut = max(max_lines, 0)
        return ParseResult(
            deck=None,
            errors=[LineError(cut + 1, lines[cut] if cut < len(lines) else "", f"The list is too long: {len(lines)} lines, at most {max_lines} are allowed.", [])],
        )
    parser = _Parser(index)
    deck = parser.parse(lines)
    return ParseResult(deck=deck, errors=parser.errors)


def _line_ranges(numbers: list[int], most: int = 6) -> str:
    """'11–40, 42, 45–500' for those line numbers; after ``most`` ranges, '…'."""
    ranges: list[list[int]] = []
    for n in sorted(set(numbers)):
        if ranges and n == ranges[-1][1] + 1:
            ranges[-1][1] = n
        else:
            ranges.append([n, n])
    text = [f"{a}–{b}" if b > a else str(a) for a, b in ranges[:most]]
    return ", ".join(text) + (", …" if len(ranges) > most else "")


def shown_errors(errors: list[dict], limit: int = SHOWN_ERRORS) -> dict:
    """What a page shows of a list of errors (dicts with ``line``): the first ``limit``, how many more there are,
    and on which lines ('on lines 11–500'), so that a pasted page of garbage keeps its form in view."""
    rest = errors[limit:]
    lines = [e["line"] for e in rest if e.get("line")]
    where = ""
    if lines:
        where = f"on line {lines[0]}" if len(set(lines)) == 1 else f"on lines {_line_ranges(lines)}"
    return {"errors": errors[:limit], "more": len(rest), "more_where": where, "total": len(errors)}
