"""Server-rendered pages: home, card search and card page, deck import, list, my decks, page and export.

A deck a person saves is unlisted (``Deck.public`` false) until its owner makes it public: every list here shows
``Deck.objects.listed()`` only; the deck's page and export are reached by its link."""
from __future__ import annotations

from django.contrib import messages
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.utils.text import slugify
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from decks import guards, panels
from decks.analysis import deck_groups
from decks.core.cards import mana_symbols
from decks.core.decklist import shown_errors
from decks.core.export import to_arena, to_mtgo
from decks.core.rules import FORMATS, normalize_format
from decks.forms import DeckImportForm, import_deck, saved_by
from decks.models import Card, CardSet, Deck, DeckCard
from decks.search import COLOR_CHOICES, SORT_CHOICES, paginate, query_without_page, search_cards
from decks.services import parsed_from_deck
from decks.embeddings.service import similar_cards
from plumbing import limits
from plumbing.guests import guest_key

EXPORT_STYLES = {"arena": to_arena, "mtgo": to_mtgo}
DECK_SORTS = {"popularity": lambda decks: decks.order_by("-occurrences", "-id"), "newest": lambda decks: decks.newest()}
DECK_PAGE_SIZE = 30
MAX_APPEARANCES = 20
MAX_CARD_DECKS = 10


@require_GET
def home(request):
    return render(request, "decks/home.html", {
        "counts": {"cards": Card.objects.count(), "sets": CardSet.objects.count(),
                   "decks": Deck.objects.listed().count()},
        "recent_decks": Deck.objects.listed().newest()[:5],
        "formats": FORMATS,
    })


@require_GET
def card_list(request):
    query, cards, notes = search_cards(request.GET)
    page, page_note = paginate(request, cards)
    return render(request, "decks/card_list.html", {
        "query": query,
        "page": page,
        "notes": notes + ([page_note] if page_note else []),
        "querystring": query_without_page(request),
        "color_choices": COLOR_CHOICES,
        "sort_choices": SORT_CHOICES,
        "formats": FORMATS,
        "searched": bool(request.GET),
    })


def decks_playing(card: Card, limit: int = MAX_CARD_DECKS):
    """The listed decks playing ``card``, most often seen first."""
    ids = DeckCard.objects.filter(card=card).values("deck_id")
    return Deck.objects.listed().filter(id__in=ids).order_by("-occurrences", "-last_seen", "-id")[:limit]


@require_GET
def card_detail(request, card_id: int):
    card = get_object_or_404(Card, pk=card_id)
    legalities = [
        {"format": leg.format, "status": leg.status, "label": leg.status.replace("_", " "),
         "source": "MTGJSON" if leg.source == "mtgjson" else "observed in decks"}
        for leg in sorted(card.legalities.all(),
                          key=lambda leg: (FORMATS.index(leg.format) if leg.format in FORMATS else len(FORMATS),
                                           leg.format))
    ]
    faces = [{**face, "symbols": mana_symbols(face.get("mana_cost"))} for face in card.faces or [] if isinstance(face, dict)]
    printings = card.printings.select_related("card_set").order_by("-card_set__release_date", "card_set__code")
    similar = similar_cards(card.name, k=10)
    ids = dict(Card.objects.filter(name__in=[n for n, _ in similar]).values_list("name", "id"))
    return render(request, "decks/card_detail.html", {
        "similar": [{"id": ids[n], "name": n, "score": s} for n, s in similar if n in ids],
        "card": card,
        "legalities": legalities,
        "faces": faces,
        "printings": printings,
        "decks": decks_playing(card),
        "panels": panels.render([card]),
        "deck_total": DeckCard.objects.filter(card=card, deck__public=True).values("deck_id").distinct().count(),
    })


@require_http_methods(["GET", "POST"])
@limits.limited("deck_import")
def deck_import(request):
    errors = []
    if request.method == "POST":
        form = DeckImportForm(request.POST)
        if not limits.refused(request) and form.is_valid():
            data = form.cleaned_data
            outcome = import_deck(data["text"], name=data["name"], fmt=data["format"], **saved_by(request))
            if outcome.ok:
                deck = outcome.deck
                messages.success(request, f"Imported {deck.main_count} main-deck and {deck.side_count} sideboard cards.")
                if outcome.analysis_pending:
                    messages.info(request, "Deck saved; the legality analysis is pending and will appear here when ready.")
                return redirect("deck-detail", deck_id=deck.pk)
            errors = outcome.errors
    else:
        form = DeckImportForm()
    line_errors = [{"line": e.line_no, "text": e.line, "message": e.message, "suggestions": e.suggestions} for e in errors]
    summary = f"{len(errors)} line{'s' if len(errors) != 1 else ''} could not be read."
    return render(request, "decks/deck_import.html", {"form": form, "line_errors": shown_errors(line_errors),
                                                      "errors_summary": summary})


@require_GET
def deck_list(request):
    return deck_page(request, Deck.objects.listed(), mine=False)


@require_GET
def my_decks(request):
    """The decks this person saved (signed in: their account's; a guest: their session's), listed or not."""
    return deck_page(request, Deck.objects.owned_by(request.user, guest_key(request)), mine=True)


def deck_page(request, decks, mine: bool):
    notes = []
    fmt_param = (request.GET.get("format") or "").strip()
    fmt = ""
    if fmt_param:
        fmt = normalize_format(fmt_param) or ""
        if fmt:
            decks = decks.filter(format=fmt)
        else:
            notes.append(f"Unknown format {fmt_param[:40]!r}; showing decks of every format.")
    sort = (request.GET.get("sort") or "newest").strip()
    if sort not in DECK_SORTS:
        notes.append(f"Unknown sort {sort[:40]!r}; newest decks first.")
        sort = "newest"
    page, page_note = paginate(request, DECK_SORTS[sort](decks), DECK_PAGE_SIZE)
    if page_note:
        notes.append(page_note)
    return render(request, "decks/deck_list.html", {
        "page": page, "notes": notes, "format": fmt, "sort": sort, "formats": FORMATS,
        "querystring": query_without_page(request), "mine": mine,
    })


def legality_view(analysis: dict | None, fmt: str) -> dict | None:
    """The stored analysis reshaped for the template (None while it is pending)."""
    if not analysis:
        return None
    formats = analysis.get("formats") or {}
    return {
        "legal_in": analysis.get("legal_in") or [],
        "format": fmt,
        "format_problems": formats.get(fmt, []) if fmt else [],
        "others": [{"format": f, "problems": p} for f, p in formats.items() if p and f != fmt],
    }


def readable_deck(request, deck_id: int) -> Deck:
    """The deck, or 404 when it does not exist or a product keeps it private from this request (decks.guards)."""
    deck = get_object_or_404(Deck, pk=deck_id)
    if not guards.may_read(deck, request):
        raise Http404("No deck with that id.")
    return deck


@require_GET
def deck_detail(request, deck_id: int):
    deck = readable_deck(request, deck_id)
    groups = deck_groups(deck)
    appearances = deck.appearances.order_by("-date", "-id")[:MAX_APPEARANCES]
    return render(request, "decks/deck_detail.html", {
        "deck": deck,
        "main_groups": groups["boards"]["main"],
        "side_groups": groups["boards"]["side"],
        "curve": groups["curve"],
        "curve_total": sum(r["count"] for r in groups["curve"]),
        "pips": groups["pips"],
        "legality": legality_view(deck.analysis, deck.format),
        "panels": panels.render(Card.objects.filter(deck_entries__deck=deck, deck_entries__board="main").distinct()),
        "appearances": appearances,
        "appearance_total": deck.appearances.count() if deck.source == "corpus" else 0,
        "mine": deck.is_owned_by(request.user, guest_key(request)),
    })


VISIBILITY = {"public": True, "unlisted": False}


@require_POST
def deck_visibility(request, deck_id: int):
    """The owner's switch: ``visibility=public`` lists the deck for everyone, ``visibility=unlisted`` takes it back
    to its link and the owner's list. Anyone else gets a 403 (the deck itself is readable by its link)."""
    deck = get_object_or_404(Deck, pk=deck_id)
    if not deck.is_owned_by(request.user, guest_key(request)):
        raise PermissionDenied("Only the person who saved this deck may change who sees it.")
    choice = (request.POST.get("visibility") or "").strip()
    if choice not in VISIBILITY:
        return HttpResponseBadRequest("visibility must be 'public' or 'unlisted'.\n", content_type="text/plain; charset=utf-8")
    if deck.public != VISIBILITY[choice]:
        deck.public = VISIBILITY[choice]
        deck.save(update_fields=["public"])
    messages.success(request, "The deck is public: listed in Decks for everyone." if deck.public
                     else "The deck is unlisted: only people with its link (and you, in My decks) see it.")
    return redirect("deck-detail", deck_id=deck.pk)


@require_GET
def deck_export(request, deck_id: int):
    deck = readable_deck(request, deck_id)
    style = (request.GET.get("style") or "arena").strip().lower()
    if style not in EXPORT_STYLES:
        return HttpResponseBadRequest(f"Unknown export style {style[:20]!r}; use style=arena or style=mtgo.\n",
                                      content_type="text/plain; charset=utf-8")
    text = EXPORT_STYLES[style](parsed_from_deck(deck))
    response = HttpResponse(text, content_type="text/plain; charset=utf-8")
    filename = slugify(deck.title) or f"deck-{deck.pk}"
    response["Content-Disposition"] = f'attachment; filename="{filename}-{style}.txt"'
    return response
