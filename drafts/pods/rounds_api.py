"""Play your pod over the API: ``GET /api/pods/<id>/rounds`` (your rounds, record, next round, deck problems) and
``POST /api/pods/<id>/rounds`` ``{"level": "engine:Medium"}`` (start your next round: a game on /games/)."""
from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from drafts import rounds
from drafts.access import guest_key
from plumbing import limits
from plumbing.api import ApiErrorsSerializer, SiteApi, Text, errors_response, validated


class RoundStartSerializer(serializers.Serializer):
    level = Text(default=rounds.DEFAULT_LEVEL,
                 help_text=f"the engine AI's level for the bot's seat: {', '.join(rounds.LEVELS)}")

    def validate_level(self, value):
        if value not in rounds.LEVELS:
            raise serializers.ValidationError(f"unknown level {value!r}; choose one of {', '.join(rounds.LEVELS)}")
        return value


def _error(exc: rounds.RoundError):
    body = {"message": str(exc)}
    if exc.problems:
        body["problems"] = exc.problems
    return errors_response(body, code=exc.code if exc.code in (400, 403, 404, 409) else 500)


class PodRoundsView(limits.Limited, SiteApi, APIView):
    limit = "game_create"

    @extend_schema(responses={200: dict, 403: ApiErrorsSerializer, 404: ApiErrorsSerializer},
                   description="Your rounds of a finished pod: each with its opponent's seat, level, status, result, "
                               "turns and game (the opponent's colours once it is over), your record, whether a round "
                               "can start and the cards of your deck the rules engine cannot play (with swaps).")
    def get(self, request, draft_id):
        try:
            draft = rounds._draft(draft_id)
            seat = rounds._person(draft, request.user, guest_key(request))
        except rounds.RoundError as exc:
            return _error(exc)
        return Response(rounds.summary(draft, seat))

    @extend_schema(request=RoundStartSerializer,
                   responses={201: dict, 400: ApiErrorsSerializer, 403: ApiErrorsSerializer, 404: ApiErrorsSerializer,
                              409: ApiErrorsSerializer, 429: ApiErrorsSerializer},
                   examples=[OpenApiExample("Round", request_only=True, value={"level": "engine:Medium"})],
                   description="Start your next round against the bot the Swiss pairs you with, by record. Not your "
                               "pod: 403; unknown: 404; an unknown level or a deck with cards the engine cannot "
                               "play (named): 400; the draft not over, a round being played or every round played: "
                               "409. Nothing is written on a refusal.")
    def post(self, request, draft_id):
        data, error = validated(request, RoundStartSerializer)
        if error:
            return error
        try:
            row = rounds.start_round(draft_id, data["level"], user=request.user,
                                     session_key=guest_key(request, create=True))
        except rounds.RoundError as exc:
            return _error(exc)
        game = row.game
        return Response({"round": row.number, "game": str(game.pk),
                         "page": request.build_absolute_uri(reverse("game", args=[game.pk])),
                         "api": reverse("api-game", args=[game.pk]), "websocket": f"/ws/games/{game.pk}/"},
                        status=status.HTTP_201_CREATED)
