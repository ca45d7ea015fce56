"""Draft API: draftable sets, simulate a pod, read a pod, rank a pack (suggestions), export."""
from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from drafts import services
from drafts.access import visible_seats
from drafts.core.cards import DraftError
from drafts.models import Draft, DraftPick
from drafts.views import export_download
from plumbing import limits
from plumbing.api import ApiErrorsSerializer, SiteApi, Text, Whole, errors_response, validated

MAX_PACK = 20
MAX_POOL = 60


class SetSerializer(serializers.Serializer):
    code = serializers.CharField()
    name = serializers.CharField()
    cards = serializers.IntegerField()
    booster = serializers.ChoiceField(choices=["play", "classic", "cube"])
    part_of = serializers.CharField(allow_blank=True, help_text="a bonus sheet: the set whose boosters it is drafted in")


class SetListView(SiteApi, APIView):
    @extend_schema(responses={200: SetSerializer(many=True)}, description="Sets whose boosters can be drafted: newest first, each bonus sheet after its set, then the cubes.")
    def get(self, request):
        return Response(services.draftable_sets())


SEATS = "seats must be an integer from 2 to 8."
SEED = "seed must be an integer from 0 to 2^31-1."


class SimulateSerializer(serializers.Serializer):
    set = Text(allow_blank=True)
    bots = serializers.ListField(child=Text(), help_text="one bot name per seat (2 to 8)", required=False,
                                 allow_null=True, error_messages={"not_a_list": "bots must be a list of bot names."})
    bot = Text(required=False, allow_blank=True, allow_null=True, help_text="one bot for every seat (with seats)")
    seats = Whole(required=False, default=8, min_value=2, max_value=8,
                  error_messages={"invalid": SEATS, "min_value": SEATS, "max_value": SEATS})
    seed = Whole(required=False, allow_null=True, min_value=0, max_value=2**31 - 1,
                 error_messages={"invalid": SEED, "min_value": SEED, "max_value": SEED})


def draft_body(request, draft: Draft, with_picks: bool = True) -> dict:
    seats = []
    picks = {}
    visible = set(visible_seats(request, draft).values_list("pk", flat=True))
    if with_picks:
        for p in DraftPick.objects.filter(seat__draft=draft, seat__in=visible).order_by("seat__seat", "pack_number", "pick_number"):
            picks.setdefault(p.seat_id, []).append({
                "pack_number": p.pack_number, "pick_number": p.pick_number, "pick": p.pick, "pack": p.pack,
                "pool": p.pool, "scores": p.scores})
    for s in draft.seat_set.select_related("deck"):
        seats.append({"seat": s.seat, "drafter": s.drafter, "draft_id": s.log_id,
                      "colors": s.colors if s.pk in visible else None,  # a bot's colours too, until its rounds are played
                      "deck": request.build_absolute_uri(reverse("api-deck-detail", args=[s.deck_id]))
                      if s.deck_id and s.pk in visible else None,  # a deck shows its pool: private like the picks
                      **({"picks": picks.get(s.pk, [])} if with_picks else {})})
    return {"id": str(draft.pk), "set": draft.set_code, "kind": draft.kind, "status": draft.status, "seed": draft.seed,
            "seats": seats, "page": request.build_absolute_uri(reverse("draft-detail", args=[draft.pk])),
            "export": request.build_absolute_uri(reverse("api-draft-export", args=[draft.pk]))}


class SimulateView(limits.Limited, SiteApi, APIView):
    limit = "simulate"

    @extend_schema(request=SimulateSerializer, responses={201: dict, 400: ApiErrorsSerializer, 429: ApiErrorsSerializer},
                   examples=[OpenApiExample("Mixed pod", request_only=True,
                                            value={"set": "BLB", "bots": ["neural", "archetype", "draftsim", "draftsim"],
                                                   "seed": 7})],
                   description="Simulate a whole pod of bots and store it (every pick, each seat's built deck).")
    def post(self, request):
        data, error = validated(request, SimulateSerializer)
        if error:
            return error
        bots = data.get("bots")
        if bots is None:
            bots = [data.get("bot") or "draftsim"] * data["seats"]
        try:
            draft = services.simulate_draft(data["set"], bots, seed=data.get("seed"),
                                            owner=request.user if request.user.is_authenticated else None)
        except DraftError as exc:
            return errors_response({"message": str(exc)})
        return Response(draft_body(request, draft), status=status.HTTP_201_CREATED,
                        headers={"Location": reverse("api-draft-detail", args=[draft.pk])})


class DraftDetailView(SiteApi, APIView):
    @extend_schema(responses={200: dict, 404: ApiErrorsSerializer},
                   description="A stored draft: seats, every pick (pack, pool, pick, scores) of the seats you may read.")
    def get(self, request, draft_id):
        return Response(draft_body(request, get_object_or_404(Draft, pk=draft_id)))


class DraftExportView(SiteApi, APIView):
    @extend_schema(responses={(200, "text/csv"): str, (404, "application/json"): ApiErrorsSerializer,
                              (404, "text/plain"): str},
                   description="The draft in the 17Lands public CSV layout: the seats you may read (404, as text, "
                               "when there are none). With `?rows=games`: the games of the seats' rounds (Play your pod) as "
                               "17Lands-like game rows.")
    def get(self, request, draft_id):
        draft = get_object_or_404(Draft, pk=draft_id)
        return export_download(request, visible_seats(request, draft),
                               f"draft_data.{draft.set_code}.{str(draft.pk)[:8]}.csv")


class SuggestSerializer(serializers.Serializer):
    set = Text()
    bot = Text(default="neural")
    pack = serializers.ListField(child=Text(), max_length=MAX_PACK)
    pool = serializers.ListField(child=Text(), required=False, max_length=MAX_POOL)
    pack_number = Whole(required=False, min_value=0, max_value=2)
    pick_number = Whole(required=False, min_value=0, max_value=14)


class SuggestView(SiteApi, APIView):
    @extend_schema(request=SuggestSerializer, responses={200: dict, 400: ApiErrorsSerializer},
                   description="Rank a pack for a drafter with a bot (best first, with scores). Nothing is stored.")
    def post(self, request):
        v, error = validated(request, SuggestSerializer)
        if error:
            return error
        try:
            body = services.suggest(v["set"], v["bot"], v["pack"], v.get("pool", []), v.get("pack_number", 0),
                                    v.get("pick_number", 0))
        except DraftError as exc:
            return errors_response({"message": str(exc)})
        return Response(body)
