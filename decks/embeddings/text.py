"""Card -> Doc2Vec tokens, the way Manamorphosis' ``get_text`` builds them (pure: no Django).

A card (a dict with the Card model's fields) becomes, face by face (front face first, then each of
``card["faces"]``):

* mana cost symbols as ``|SYM|`` tokens: ``{2}{W}{U/P}`` -> ``|2| |W| |U/P|``;
* power/toughness as ``$p$ #t#`` (``$3$ #2#``, ``$*$ #1+*#``);
* loyalty as ``!L!`` (``!3!``) and battle defense as ``%D%`` (``%5%``). Manamorphosis has no loyalty or
  defense token; we add them because they are printed characteristics like P/T;
* every supertype and card type as ``|Type|`` (``|Legendary| |Creature|``);
* subtypes as plain lowercase words (``elf druid``);
* the oracle text: reminder text (parenthesised) removed (a basic land keeps its mana ability, as in
  Manamorphosis), the card's own names and self-references ("this creature", "this spell", ...) replaced by
  ``@``, mana symbols as ``|SYM|`` tokens (``{T}`` -> ``|T|``), lowercased, punctuation split off or
  dropped, English stop words (NLTK's list, shipped in ``nltk_data/``) removed.

Token case: the marker tokens keep the case they are printed in (``|W|``, ``|T|``, ``|Creature|``) - they
are generated, never compared with words - and every word is lowercase.

Punctuation: ``,`` ``.`` ``;`` ``!`` ``?`` ``(`` ``)`` are dropped, apostrophes are deleted inside words
(``opponent's`` -> ``opponents``, ``@'s`` -> ``@``) before stop words are removed (as in Manamorphosis, so
``don't`` becomes ``dont`` and survives), while ``:`` (cost separator), ``"`` (granted ability), ``•`` (mode),
``-`` (the em dash of ability words), loyalty costs ``[+2]`` / ``[-1]`` / ``[0]`` and P/T changes ``+1/+1``,
``-2/-0``, ``+x/+0``, ``2/2`` are kept as one token each.

Cards whose token lists are identical (functional reprints, e.g. Llanowar Elves / Elvish Mystic) get
near-identical Doc2Vec vectors; the classifier cannot tell them apart and need not.
"""
from __future__ import annotations

import os
import re
from functools import lru_cache
from pathlib import Path

NLTK_DATA_DIR = Path(__file__).resolve().parent / "nltk_data"

# Words after "this" that make the phrase mean the card itself (oracle text since 2024 says "this creature").
SELF_REFERENCE_NOUNS = (
    "creature", "enchantment", "artifact", "land", "spell", "card", "planeswalker", "permanent", "equipment",
    "aura", "vehicle", "saga", "battle", "siege", "class", "case", "room", "mount", "spacecraft", "planet",
    "background", "shrine", "fortification", "attraction", "contraption", "dungeon", "token", "object",
)
_SELF_REFERENCE = re.compile(r"\bthis (?:%s)\b" % "|".join(SELF_REFERENCE_NOUNS), re.IGNORECASE)
_REMINDER = re.compile(r"\([^()]*\)")
_SYMBOL = re.compile(r"\{([^{}]+)\}")
_DASHES = str.maketrans({"—": " - ", "–": " - ", "−": "-", "’": "'", "‘": "'", "“": '"', "”": '"', "\n": " "})
# One token each, tried in this order; anything else (punctuation) is dropped.
_TOKEN = re.compile(
    r"""
    \|[^|\s]+\|                              # a mana / tap symbol we inserted: |T|, |2/W|
    | \[[+\-]?[0-9x]+\]                      # loyalty cost [+2] [-1] [0] [-x]
    | [+\-]?[0-9x*]+/[+\-]?[0-9x*]+(?![\w/]) # P/T (change): +1/+1, -2/-0, +x/+0, 2/2, */*
    | @                                      # the card itself
    | [":•\-](?=\s|$)                        # quote, cost colon, mode bullet, ability-word dash
    | "                                      # a quote glued to a word
    | [^\W_](?:[\w'+*\-/]*[^\W_])?           # a word: letters/digits, inner - / ' + * kept (non-human, and/or)
    """,
    re.VERBOSE,
)
_SUPERTYPES = frozenset({"Basic", "Legendary", "Snow", "World", "Ongoing", "Host", "Elite"})


@lru_cache(maxsize=1)
def stopwords() -> frozenset[str]:
    """NLTK's English stop words, read from the copy shipped in ``decks/embeddings/nltk_data``."""
    folder = str(NLTK_DATA_DIR)
    if folder not in os.environ.get("NLTK_DATA", "").split(os.pathsep):
        os.environ["NLTK_DATA"] = os.pathsep.join(p for p in (folder, os.environ.get("NLTK_DATA")) if p)
    import nltk  # noqa: PLC0415 after NLTK_DATA is set (nltk reads it on first import); nltk is heavy

    if folder not in nltk.data.path:
        nltk.data.path.insert(0, folder)  # nltk was imported earlier, before NLTK_DATA pointed here
    from nltk.corpus import stopwords as corpus  # noqa: PLC0415 nltk: kept off Django start-up

    return frozenset(corpus.words("english"))


def _symbols(text: str) -> str:
    """``{2}{W}`` -> `` |2| |W| `` (symbols upper-cased; ``{w}`` and ``{W}`` are the same symbol)."""
    return _SYMBOL.sub(lambda m: f" |{m.group(1).strip().upper()}| ", text)


def _split_type_line(type_line: str) -> tuple[list[str], list[str], list[str]]:
    """``"Legendary Creature — Elf Druid"`` -> (["Legendary"], ["Creature"], ["Elf", "Druid"])."""
    front = (type_line or "").split(" // ")[0]
    left, right = front, ""
    for dash in (" — ", " - ", "—"):
        if dash in front:
            left, right = front.split(dash, 1)
            break
    words = left.split()
    return [w for w in words if w in _SUPERTYPES], [w for w in words if w not in _SUPERTYPES], right.split()


def _names(card: dict, faces: list[dict]) -> list[str]:
    """Every name the card's text may call itself by, longest first."""
    names = {card.get("name") or ""}
    full = card.get("name") or ""
    names.update(part.strip() for part in full.split(" // "))
    legendary = "Legendary" in (card.get("supertypes") or "").split() or "Legendary" in (card.get("type_line") or "")
    for face in faces:
        names.add(face.get("name") or "")
    for name in list(names):
        face_legendary = legendary or any(
            f.get("name") == name and "Legendary" in (f.get("type_line") or "") for f in faces)
        if face_legendary and "," in name:
            names.add(name.split(",")[0].strip())
    return sorted((n for n in names if n), key=len, reverse=True)


def _replace_names(text: str, names: list[str]) -> str:
    if not names:
        return text
    pattern = re.compile(r"(?<!\w)(?:%s)(?!\w)" % "|".join(re.escape(n) for n in names))
    return pattern.sub("@", text)


def _text_tokens(text: str, names: list[str], basic_land: bool, stop: frozenset[str]) -> list[str]:
    if not text:
        return []
    text = text.translate(_DASHES)
    if basic_land:  # a basic land's only text is its reminder mana ability: keep it (as Manamorphosis does)
        text = text.replace("(", " ").replace(")", " ")
    else:
        previous = None
        while previous != text:  # nested parentheses: innermost first
            previous, text = text, _REMINDER.sub(" ", text)
    text = _replace_names(text, names)
    text = _SELF_REFERENCE.sub("@", text)
    text = text.replace("&", " and ").replace(";", " ").replace(":", " : ")
    text = _symbols(text.lower())
    text = re.sub(r'"', ' " ', text)
    text = re.sub(r"@'s\b|@s\b", "@", text)
    text = text.replace("'", "")
    tokens = []
    for token in _TOKEN.findall(text):
        if token.startswith("|"):
            tokens.append(token)
        elif token not in stop:
            tokens.append(token)
    return tokens


def _face_tokens(face: dict, names: list[str], stop: frozenset[str], supertypes=None, types=None, subtypes=None) -> list[str]:
    tokens: list[str] = []
    tokens += _symbols(face.get("mana_cost") or "").split()
    power, toughness = (face.get("power") or "").strip(), (face.get("toughness") or "").strip()
    if power or toughness:
        tokens += [f"${power}$", f"#{toughness}#"]
    if (face.get("loyalty") or "").strip():
        tokens.append(f"!{face['loyalty'].strip()}!")
    if (face.get("defense") or "").strip():
        tokens.append(f"%{face['defense'].strip()}%")
    if types is None:
        supertypes, types, subtypes = _split_type_line(face.get("type_line") or "")
    tokens += [f"|{t}|" for t in list(supertypes) + list(types)]
    tokens += [w.lower() for w in subtypes]
    basic_land = "Basic" in supertypes and "Land" in types
    tokens += _text_tokens(face.get("oracle_text") or "", names, basic_land, stop)
    return tokens


def card_tokens(card: dict) -> list[str]:
    """Doc2Vec tokens of one card (all faces), e.g. Lightning Bolt ->
    ``['|R|', '|Instant|', '@', 'deals', '3', 'damage', 'target']``."""
    stop = stopwords()
    faces = [f for f in (card.get("faces") or []) if isinstance(f, dict)]
    names = _names(card, faces)
    if card.get("types") or card.get("supertypes"):
        supertypes = (card.get("supertypes") or "").split()
        types = (card.get("types") or "").split()
        subtypes = (card.get("subtypes") or "").split()
    else:
        supertypes, types, subtypes = _split_type_line(card.get("type_line") or "")
    tokens = _face_tokens(card, names, stop, supertypes, types, subtypes)
    for face in faces:
        tokens += _face_tokens(face, names, stop)
    return tokens
