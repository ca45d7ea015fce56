"""Deck import: the page's form and the steps it shares with POST /api/decks/."""
from __future__ import annotations

from dataclasses import dataclass, field

from django import forms

from decks.core.decklist import LineError, ParsedDeck, parse_decklist
from decks.core.rules import FORMATS, normalize_format
from decks.models import Deck
from decks.services import card_index, save_parsed_deck
from decks.tasks import enqueue_analysis
from plumbing.guests import guest_key


MAX_DECK_TEXT = 20_000
MAX_DECK_NAME = 200
FORMAT_CHOICES = [("", "— any / not sure —")] + [(f, f.title()) for f in FORMATS]


def text_problem(text: str | None) -> str | None:
    """Why a pasted decklist cannot be parsed at all (None when it can)."""
    if text is None or not str(text).strip():
        return "Paste a decklist: one card per line, e.g. \"4 Lightning Bolt\"."
    if len(text) > MAX_DECK_TEXT:
        return f"The decklist is too long ({len(text):,} characters); at most {MAX_DECK_TEXT:,} are allowed."
    return None


def format_problem(value: str | None) -> str | None:
    if value and not normalize_format(value):
        return f"Unknown format {str(value)[:40]!r}; choose one of {', '.join(FORMATS)} or leave it blank."
    return None


@dataclass
class ImportOutcome:
    deck: Deck | None = None
    errors: list[LineError] = field(default_factory=list)
    analysis_pending: bool = False

    @property
    def ok(self) -> bool:
        return self.deck is not None


def parse_text(text: str) -> tuple[ParsedDeck | None, list[LineError]]:
    """Parse against the catalogue; a list with no cards at all is an error too."""
    result = parse_decklist(text, card_index())
    if not result.ok:
        return None, result.errors
    deck = result.deck
    if deck is None or not (deck.main or deck.side or deck.commander):
        return None, [LineError(1, text.strip().splitlines()[0] if text.strip() else "",
                                "No cards found: write one card per line, e.g. \"4 Lightning Bolt\".", [])]
    return deck, []


def saved_by(request) -> dict:
    """Whose a deck this request saves is: ``{"owner": the signed-in user}``, else ``{"guest": the guest's session}``
    (made now, so that the guest finds the deck in their own list)."""
    if request.user.is_authenticated:
        return {"owner": request.user}
    return {"guest": guest_key(request, create=True)}


def import_deck(text: str, name: str = "", fmt: str = "", owner=None, guest: str | None = None) -> ImportOutcome:
    """Parse, then save (one transaction) and queue the analysis; nothing is saved on any error. The deck is the
    signed-in ``owner``'s, else the guest session ``guest``'s, and unlisted until they make it public."""
    parsed, errors = parse_text(text)
    if parsed is None:
        return ImportOutcome(errors=errors)
    fmt = normalize_format(fmt) if fmt else ""
    deck = save_parsed_deck(parsed, fmt=fmt or "", name=(name or "").strip()[:MAX_DECK_NAME], owner=owner,
                            guest=guest)
    return ImportOutcome(deck=deck, analysis_pending=enqueue_analysis(deck))


class DeckImportForm(forms.Form):
    text = forms.CharField(
        label="Decklist",
        required=False,  # checked in clean_text with a friendlier message
        strip=False,
        widget=forms.Textarea(attrs={
            "rows": 18, "spellcheck": "false", "autocapitalize": "off", "autocomplete": "off",
            "placeholder": "4 Lightning Bolt\n4x Goblin Guide\n20 Mountain\n\nSideboard\n3 Skullcrack",
        }),
        help_text="MTGO .txt, MTG Arena export or plain \"4 Card name\" lines. A blank line or "
                  "\"Sideboard\" starts the sideboard; // comments are ignored.",
    )
    name = forms.CharField(label="Deck name", max_length=MAX_DECK_NAME, required=False,
                           widget=forms.TextInput(attrs={"placeholder": "Burn"}))
    format = forms.ChoiceField(label="Format", choices=FORMAT_CHOICES, required=False)

    def clean_text(self):
        text = self.cleaned_data.get("text") or ""
        problem = text_problem(text)
        if problem:
            raise forms.ValidationError(problem)
        return text
