"""REST API (DRF) for cards and decks. Reads are public; anyone may import a deck. A deck a person saves is
unlisted (in no list, readable by its id) until its owner makes it public (PATCH ``{"public": true}``).

Errors have the site's shape (``plumbing.api``): ``{"errors": [{"message": "...", ...}]}``; decklist line errors
add ``line``, ``text`` and ``suggestions``; parameter errors add ``field``.
"""
from __future__ import annotations


from django.db.models import Prefetch
from django.http import Http404
from django.urls import reverse
from drf_spectacular.utils import (OpenApiExample, OpenApiParameter, extend_schema, extend_schema_field,
                                   extend_schema_view)
from rest_framework import mixins, serializers, status, viewsets
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.settings import api_settings
from rest_framework.exceptions import ParseError, UnsupportedMediaType
from rest_framework.parsers import JSONParser
from rest_framework.response import Response

from decks import guards
from decks.core.rules import FORMATS, normalize_format
from decks.forms import MAX_DECK_NAME, MAX_DECK_TEXT, format_problem, import_deck, saved_by, text_problem
from decks.models import Card, Deck, Legality, Printing
from decks.search import COLOR_CHOICES, SORTS, search_cards
from decks.services import parsed_from_deck
from decks.views import EXPORT_STYLES
from decks.embeddings.service import similar_cards
from plumbing import limits
from plumbing.api import ApiErrorsSerializer, Flag, SiteApi, Text, errors_response, invalid
from plumbing.guests import guest_key

class _NoFormatOverride:
    """api_settings, except that ``?format=`` does not pick a renderer."""

    URL_FORMAT_OVERRIDE = None

    def __getattr__(self, name):
        return getattr(api_settings, name)


class FormatIsAFilter(DefaultContentNegotiation):
    """Content negotiation that leaves ``?format=`` to the views: here it names a Magic format."""

    settings = _NoFormatOverride()


# --- serializers -------------------------------------------------------------


class LegalitySerializer(serializers.ModelSerializer):
    class Meta:
        model = Legality
        fields = ["format", "status", "source"]


class PrintingSerializer(serializers.ModelSerializer):
    set = serializers.CharField(source="card_set.code")
    set_name = serializers.CharField(source="card_set.name")

    class Meta:
        model = Printing
        fields = ["set", "set_name", "rarity", "collector_number", "is_booster", "arena_id"]


class CardSerializer(serializers.ModelSerializer):
    class Meta:
        model = Card
        fields = ["id", "name", "mana_cost", "mana_value", "colors", "color_identity", "type_line",
                  "power", "toughness", "loyalty", "defense", "deck_count"]


class CardFaceSerializer(serializers.Serializer):
    name = serializers.CharField()
    mana_cost = serializers.CharField()
    type_line = serializers.CharField()
    oracle_text = serializers.CharField()
    power = serializers.CharField()
    toughness = serializers.CharField()
    loyalty = serializers.CharField()


class CardDetailSerializer(CardSerializer):
    legalities = LegalitySerializer(many=True, read_only=True)
    printings = PrintingSerializer(many=True, read_only=True)
    faces = CardFaceSerializer(many=True, read_only=True)
    keywords = serializers.ListField(child=serializers.CharField(), read_only=True)
    similar = serializers.SerializerMethodField(help_text="nearest cards by rules-text embedding (cosine)")

    class Meta(CardSerializer.Meta):
        fields = CardSerializer.Meta.fields + [
            "front_name", "supertypes", "types", "subtypes", "oracle_text", "layout", "keywords", "faces",
            "copy_limit", "source", "legalities", "printings", "similar"]

    @extend_schema_field({"type": "array", "items": {"type": "object", "properties": {
        "name": {"type": "string"}, "score": {"type": "number"}}}})
    def get_similar(self, card):
        return [{"name": n, "score": round(s, 4)} for n, s in similar_cards(card.name, k=10)]


class DeckSerializer(serializers.ModelSerializer):
    class Meta:
        model = Deck
        fields = ["id", "name", "format", "source", "public", "main_count", "side_count", "occurrences",
                  "first_seen", "last_seen", "created"]


class DeckEntrySerializer(serializers.Serializer):
    card_id = serializers.IntegerField()
    name = serializers.CharField()
    count = serializers.IntegerField()


class DeckBoardsSerializer(serializers.Serializer):
    main = DeckEntrySerializer(many=True)
    side = DeckEntrySerializer(many=True)


class DeckDetailSerializer(DeckSerializer):
    cards = serializers.SerializerMethodField()
    analysis = serializers.JSONField(read_only=True, help_text="legal_in, problems per format, curve, pips; "
                                                               "null until the analysis task has run")

    class Meta(DeckSerializer.Meta):
        fields = DeckSerializer.Meta.fields + ["cards", "unresolved", "analysis", "analyzed_at"]

    @extend_schema_field(DeckBoardsSerializer)
    def get_cards(self, deck):
        boards = {"main": [], "side": []}
        for dc in sorted(deck.cards.all(), key=lambda dc: (dc.card.name, dc.board)):
            boards[dc.board].append({"card_id": dc.card_id, "name": dc.card.name, "count": dc.count})
        return boards


class DeckImportSerializer(serializers.Serializer):
    """The request body of POST /api/decks/; the lines themselves are the importer's (one error per bad line)."""

    text = Text(required=False, allow_null=True, allow_blank=True,
                help_text=f"The decklist: MTGO, Arena or plain text (at most {MAX_DECK_TEXT} characters).",
                error_messages={"invalid": "text must be a string (the decklist)."})
    name = Text(max_length=MAX_DECK_NAME, required=False, allow_blank=True, allow_null=True,
                error_messages={"invalid": "name must be a string.",
                                "max_length": "name is too long; at most {max_length} characters."})
    format = Text(required=False, allow_blank=True, allow_null=True,
                  help_text=f"one of {', '.join(FORMATS)} (blank: none)", error_messages={"invalid": "format must be a string."})

    def validate_format(self, value):
        if problem := format_problem(value or ""):
            raise serializers.ValidationError(problem)
        return value or ""

    def validate(self, attrs):
        if problem := text_problem(attrs.get("text")):
            raise serializers.ValidationError({"text": problem})
        return {**attrs, "name": attrs.get("name") or "", "format": attrs.get("format") or ""}


VISIBILITY = "Send {\"public\": true} or {\"public\": false}; nothing else of a deck can be changed."


class DeckVisibilitySerializer(serializers.Serializer):
    """The request body of PATCH /api/decks/<id>/: ``public`` and nothing else."""

    public = Flag(help_text="true: listed for everyone; false: unlisted (only by its link)",
                  error_messages={k: VISIBILITY.replace("{", "{{").replace("}", "}}") for k in ("invalid", "required", "null")})

    def validate(self, attrs):
        if set(self.initial_data) != {"public"}:
            raise serializers.ValidationError({"public": VISIBILITY})
        return attrs


class ExportSerializer(serializers.Serializer):
    style = serializers.ChoiceField(choices=list(EXPORT_STYLES))
    text = serializers.CharField()


# --- cards ---------------------------------------------------------------------

CARD_PARAMETERS = [
    OpenApiParameter("q", str, description="name contains (accent- and case-insensitive)"),
    OpenApiParameter("type", str, description="a type, subtype or supertype word, e.g. Creature, Goblin, Legendary"),
    OpenApiParameter("color", str, many=True, enum=[c for c, _ in COLOR_CHOICES], explode=True,
                     description="colours the card must all have (repeat or 'WU'); C = colorless"),
    OpenApiParameter("text", str, description="oracle text contains"),
    OpenApiParameter("format", str, description=f"legal or restricted in this format ({', '.join(FORMATS)})"),
    OpenApiParameter("sort", str, enum=list(SORTS), description="relevance (default with q: exact, prefix, then popular), name (default otherwise), mv (mana value) or popularity"),
]


@extend_schema_view(retrieve=extend_schema(description="One card with its faces, legalities and printings.",
                                           responses={200: CardDetailSerializer, 404: ApiErrorsSerializer}))
class CardViewSet(SiteApi, viewsets.ReadOnlyModelViewSet):
    """The card catalogue, searchable with the same filters as the /cards/ page."""

    queryset = Card.objects.all()
    content_negotiation_class = FormatIsAFilter

    def get_serializer_class(self):
        return CardDetailSerializer if self.action == "retrieve" else CardSerializer

    def get_queryset(self):
        if self.action == "retrieve":
            return Card.objects.prefetch_related(
                "legalities", Prefetch("printings", queryset=Printing.objects.select_related("card_set")))
        return Card.objects.all()

    @extend_schema(parameters=CARD_PARAMETERS, responses={200: CardSerializer(many=True), 400: ApiErrorsSerializer,
                                                          404: ApiErrorsSerializer})
    def list(self, request, *args, **kwargs):
        _query, cards, notes = search_cards(request.query_params)
        if notes:
            return errors_response(*({"message": n} for n in notes))
        page = self.paginate_queryset(cards)
        return self.get_paginated_response(CardSerializer(page, many=True).data)


# --- decks ---------------------------------------------------------------------

FORMAT_PARAMETER = OpenApiParameter("format", str, enum=FORMATS, description="only decks of this format")
STYLE_PARAMETER = OpenApiParameter("style", str, enum=list(EXPORT_STYLES), default="arena",
                                   description="arena (MTG Arena import) or mtgo (.txt)")


@extend_schema_view(retrieve=extend_schema(
    description="One deck (listed or not: whoever has its id may read it): its cards by board (name, count, "
                "card id) and the stored analysis.",
    responses={200: DeckDetailSerializer, 404: ApiErrorsSerializer}))
class DeckViewSet(limits.Limited, SiteApi, mixins.ListModelMixin, mixins.RetrieveModelMixin, viewsets.GenericViewSet):
    """Decks: the tournament corpus and the lists people made public (their other decks are unlisted)."""

    queryset = Deck.objects.all()
    limit = "deck_import"  # POST (create) only
    content_negotiation_class = FormatIsAFilter
    parser_classes = [JSONParser]  # POST takes JSON only, so that a form or text body gets a clear 400

    def get_serializer_class(self):
        if self.action == "list":
            return DeckSerializer
        if self.action == "export":
            return ExportSerializer
        return DeckDetailSerializer

    def get_queryset(self):
        if self.action == "list":
            return Deck.objects.listed().order_by("-id")
        return Deck.objects.prefetch_related("cards__card")

    def get_object(self):
        deck = super().get_object()
        if not guards.may_read(deck, self.request):  # a product keeps it private: the answer of an unknown id
            raise Http404("No deck with that id.")
        return deck

    @extend_schema(parameters=[FORMAT_PARAMETER], responses={200: DeckSerializer(many=True), 400: ApiErrorsSerializer,
                                                             404: ApiErrorsSerializer})
    def list(self, request, *args, **kwargs):
        decks = self.get_queryset()
        raw = (request.query_params.get("format") or "").strip()
        if raw:
            fmt = normalize_format(raw)
            if not fmt:
                return errors_response({"field": "format", "message": format_problem(raw)})
            decks = decks.filter(format=fmt)
        page = self.paginate_queryset(decks)
        return self.get_paginated_response(DeckSerializer(page, many=True).data)

    @extend_schema(
        request=DeckImportSerializer,
        responses={201: DeckDetailSerializer, 400: ApiErrorsSerializer, 429: ApiErrorsSerializer},
        examples=[OpenApiExample("Burn", request_only=True, value={
            "text": "20 Lightning Bolt\n20 Lava Spike\n20 Mountain\n\n3 Skullcrack", "name": "Burn", "format": "modern"})],
    )
    def create(self, request, *args, **kwargs):
        """Import a decklist: 201 with the deck, or 400 with one error per bad line (nothing saved)."""
        try:
            data = request.data
        except (ParseError, UnsupportedMediaType) as exc:
            return errors_response({"message": "Send a JSON object such as "
                                               "{\"text\": \"4 Lightning Bolt\", \"name\": \"Burn\", \"format\": \"modern\"} "
                                               f"with Content-Type: application/json ({exc.detail})."})
        if not isinstance(data, dict):
            return errors_response({"message": "The body must be a JSON object with a \"text\" field."})
        form = DeckImportSerializer(data=data)
        if not form.is_valid():
            return invalid(form)
        text, name, fmt = form.validated_data["text"], form.validated_data["name"], form.validated_data["format"]
        outcome = import_deck(text, name=name, fmt=fmt, **saved_by(request))
        if not outcome.ok:
            return errors_response(*({"line": e.line_no, "text": e.line, "message": e.message,
                                      "suggestions": list(e.suggestions)} for e in outcome.errors))
        deck = self.get_queryset().get(pk=outcome.deck.pk)
        body = DeckDetailSerializer(deck, context=self.get_serializer_context()).data
        return Response(body, status=status.HTTP_201_CREATED,
                        headers={"Location": reverse("api-deck-detail", args=[deck.pk])})

    @extend_schema(
        request=DeckVisibilitySerializer,
        responses={200: DeckDetailSerializer, 400: ApiErrorsSerializer, 403: ApiErrorsSerializer,
                   404: ApiErrorsSerializer},
        examples=[OpenApiExample("Make public", request_only=True, value={"public": True})],
    )
    def partial_update(self, request, *args, **kwargs):
        """Its owner (the signed-in person, or the guest session, that saved it) lists the deck for everyone
        (``{"public": true}``) or takes it back to unlisted (``false``); anyone else gets a 403."""
        deck = self.get_object()
        if not deck.is_owned_by(request.user, guest_key(request)):
            return errors_response({"message": "Only the person who saved this deck may change who sees it."},
                                   code=status.HTTP_403_FORBIDDEN)
        try:
            data = request.data
        except (ParseError, UnsupportedMediaType) as exc:
            return errors_response({"message": f"Send a JSON object such as {{\"public\": true}} ({exc.detail})."})
        if not isinstance(data, dict):
            return errors_response({"field": "public", "message": VISIBILITY})
        form = DeckVisibilitySerializer(data=data)
        if not form.is_valid():
            return invalid(form)
        if deck.public != form.validated_data["public"]:
            deck.public = form.validated_data["public"]
            deck.save(update_fields=["public"])
        return Response(DeckDetailSerializer(deck, context=self.get_serializer_context()).data)

    @extend_schema(parameters=[STYLE_PARAMETER], responses={200: ExportSerializer, 400: ApiErrorsSerializer,
                                                            404: ApiErrorsSerializer})
    def export(self, request, *args, **kwargs):
        """The deck as decklist text (reads back through the importer to the same deck)."""
        deck = self.get_object()
        style = (request.query_params.get("style") or "arena").strip().lower()
        if style not in EXPORT_STYLES:
            return errors_response({"field": "style", "message": f"Unknown style {style[:20]!r}; use arena or mtgo."})
        return Response({"style": style, "text": EXPORT_STYLES[style](parsed_from_deck(deck))})
