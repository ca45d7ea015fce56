"""Game API: advice for any engine state, and games against the AI (session-bound, like the page).

``POST /api/games/advice`` is stateless: post a state from ``Game.state()`` (the whole engine JSON;
the caller already holds it, hidden cards included) and a seat; get the recommendation, computed
synchronously with a capped budget. The game endpoints call the same service as the websocket
(gameplay.play), so an action made here is validated, locked and published exactly like one made
on the page. Errors share the site's shape: ``{"errors": [{"message": ..., ...}]}``.
"""
from __future__ import annotations

from django.conf import settings
from django.urls import reverse
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from plumbing.api import ApiErrorsSerializer, Number, SiteApi, Text, Whole, errors_response, validated
from plumbing import limits
from plumbing.guests import guest_key
from gameplay.core.engine.decks import sample_decks
from gameplay import tasks
from gameplay.play import PlayError, advice, choice, session
from gameplay.models import PlayedGame


def _error(exc: PlayError):
    if isinstance(exc, choice.DeckProblem):
        return errors_response(*[{"message": f"{p['deck']}: the rules engine cannot play this deck", **p}
                                 for p in exc.problems], code=400)
    code = exc.code if exc.code in (400, 403, 404, 409, 500, 503) else 400
    return errors_response({"message": str(exc), **{k: v for k, v in exc.details.items() if k != "panic"}}, code=code)


class BudgetSerializer(serializers.Serializer):
    seconds = Number(required=False, allow_null=True,
                     help_text="wall-clock seconds (capped by the server); null: no time limit given")
    simulations = Whole(required=False, allow_null=True, min_value=1, help_text="null: no simulation limit given")


SEAT = "seat must be 0 or 1"
BUDGET = "budget is {{\"seconds\": n}} and/or {{\"simulations\": n}}"  # braces doubled: DRF formats it


class AdviceRequestSerializer(serializers.Serializer):
    """The body of POST /api/games/advice; what the engine alone can tell (a state it cannot load, a seat without a
    decision, an unknown level) is the advisor's 400."""

    state = serializers.JSONField(help_text="the engine's JSON state, as Game.state() returns it")
    seat = Whole(min_value=0, max_value=1, help_text="whose decision to advise",
                 error_messages={"invalid": SEAT, "min_value": SEAT, "max_value": SEAT, "required": SEAT, "null": SEAT})
    algorithm = serializers.ChoiceField(choices=["flat", "mcts", "minimax"], required=False, allow_null=True,
                                        help_text="default: the level's (mcts)",
                                        error_messages={"invalid_choice": "unknown algorithm {input}: flat, mcts or "
                                                                          "minimax"})
    level = Text(required=False, allow_null=True, help_text="vote (the default: the engine's VeryHard search on "
                                  "honest copies, the action most chose), vote+search (MCTS where the copies split, "
                                  "on the same copies), or search:<fast|default|learned|strong|flat|minimax> (one "
                                  "search; the bare names too). Without a level, a budget or an algorithm asks for "
                                  "one search at the search:default settings")
    budget = BudgetSerializer(required=False, allow_null=True, help_text="instead of a level's budget",
                              error_messages={"invalid": BUDGET})
    seed = Whole(required=False, default=0)


class AlternativeSerializer(serializers.Serializer):
    label = serializers.CharField()
    key = serializers.CharField()
    visits = serializers.IntegerField(allow_null=True, help_text="the search's simulations of it (null: not searched)")
    value = serializers.FloatField(allow_null=True, help_text="the search's value of it (null: not searched)")
    votes = serializers.IntegerField(required=False, help_text="a vote level: the copies that chose it")
    share = serializers.FloatField(required=False, help_text="a vote level: its share of the vote, 0..1")
    playable = serializers.BooleanField()


class VoteSerializer(serializers.Serializer):
    level = serializers.CharField()
    engine_level = serializers.CharField(help_text="the engine AI asked on each copy")
    copies = serializers.IntegerField(help_text="copies whose choice counted")
    max_copies = serializers.IntegerField()
    copies_dealt = serializers.IntegerField(help_text="copies loaded and asked (the search's, where it ran)")
    split = serializers.BooleanField(help_text="the copies chose more than one action")
    searched = serializers.BooleanField(help_text="the search ran (vote+search, where the copies split)")
    search_level = serializers.CharField(allow_null=True)
    fallback = serializers.CharField(allow_null=True, help_text="'decided on the real game: no copy could be "
                                                                "loaded' (counted, never silent), else null")
    refused = serializers.IntegerField(help_text="copies the engine would not load")
    discarded = serializers.IntegerField(help_text="choices naming a card the seat cannot see")
    cut_off = serializers.IntegerField(help_text="engine calls that hit its 1.5 s wall-clock cap")
    tie_break = serializers.BooleanField(help_text="the leaders tied; the engine's evaluation chose")
    out_of_time = serializers.BooleanField(help_text="copies left unasked for the level's wall budget")
    seconds = serializers.FloatField()
    position_by = serializers.CharField(help_text="what estimated the position on the copies: 'value model' or "
                                                  "'engine evaluation'")


class AdviceActionSerializer(serializers.Serializer):
    key = serializers.CharField(help_text="send it back as the action's key")
    type = serializers.CharField()
    label = serializers.CharField()


class RecommendationSerializer(serializers.Serializer):
    action = AdviceActionSerializer()
    line = serializers.ListField(child=serializers.CharField(), help_text="the expected line, this action first")
    win_estimate = serializers.FloatField(help_text="0..1 for the seat: the search's value of the recommended action "
                                                    "(a vote level where no search ran: the engine's evaluation of the "
                                                    "position over the copies, squashed)")
    position_estimate = serializers.FloatField(
        allow_null=True, help_text="0..1 for the seat: the learned value model's P(win) of the position, averaged over "
                                   "copies with the hidden cards re-dealt (null when no model is installed)")
    position_source = serializers.CharField(
        allow_null=True, help_text="what the position estimate is made of, as the page names it (e.g. 'engine "
                                   "evaluation, calibrated'; bench/game_calibration.py chooses it); null without a model")
    alternatives = AlternativeSerializer(many=True)
    simulations = serializers.IntegerField()
    elapsed = serializers.FloatField()
    algorithm = serializers.CharField()
    forced = serializers.BooleanField(help_text="the only legal (distinct) action: nothing was searched")
    workers = serializers.IntegerField(help_text="searches whose root statistics were summed (root parallelism)")
    vote = VoteSerializer(required=False, help_text="a vote level: how the copies voted")
    playable = serializers.BooleanField()
    seat = serializers.IntegerField()
    level = serializers.CharField()
    budget = BudgetSerializer()
    turn = serializers.IntegerField()
    legal_actions = serializers.ListField(child=serializers.DictField())


class AdviceView(limits.Limited, SiteApi, APIView):
    limit = "advice"

    @extend_schema(
        request=AdviceRequestSerializer,
        responses={200: RecommendationSerializer, 400: ApiErrorsSerializer, 429: ApiErrorsSerializer},
        examples=[OpenApiExample("One second of MCTS", request_only=True, value={
            "state": {"state": {"...": "the engine's JSON from Game.state()"}}, "seat": 0, "algorithm": "mcts",
            "budget": {"seconds": 1.0}}),
            OpenApiExample("A level", request_only=True, value={"state": {"state": {}}, "seat": 1, "level": "vote"})],
        description="The best action for `seat` in a posted engine state, the expected line, the win estimate "
                    "and the alternatives considered (share of the vote; visits, values where a search ran). The "
                    "default level, vote, asks the engine's VeryHard AI on honest copies of what the seat can see "
                    "(`vote`: copies used, split, searched, the counted fallback). Synchronous: the budget is capped "
                    "(GAME_API_ADVICE_MAX_SECONDS, 5 s by default). A state the engine cannot load, a seat "
                    "without a decision, an unknown level or algorithm: 400 with the reason.")
    def post(self, request):
        data, error = validated(request, AdviceRequestSerializer)
        if error:
            return error
        budget = data.get("budget") or {}
        try:
            out = advice.advise_state(data["state"], data.get("seat"), level=data.get("level"),
                                      algorithm=data.get("algorithm"), seconds=budget.get("seconds"),
                                      simulations=budget.get("simulations"), seed=data["seed"],
                                      spread_for=tasks.advice_spread)
        except PlayError as exc:
            return _error(exc)
        return Response(out)


class GameCreateSerializer(serializers.Serializer):
    deck = serializers.JSONField(help_text="'sample:<name>', 'deck:<id>' or {\"name\", \"main\": [[card, count], ...]}")
    opponent_deck = serializers.JSONField(help_text="the AI's deck, same forms")
    opponent = Text(default="engine:Medium",
                    help_text="engine:VeryEasy..VeryHard, random, or search:fast|default|strong|learned")
    seat = Whole(default=0, min_value=0, max_value=1)
    first = serializers.ChoiceField(choices=["you", "ai", "random"], default="random")
    seed = Whole(required=False, allow_null=True)


class GameActionSerializer(serializers.Serializer):
    key = Text(required=False, help_text="an offered action's key (or 'action')")
    action = serializers.DictField(required=False, help_text='{"type", "data"}: the action itself (instead of key)')
    revision = Whole(required=False, allow_null=True, help_text="the view's revision (another one: 409, stale)",
                     error_messages={"invalid": "revision must be an integer"})
    client_action_id = Text(required=False, allow_null=True, help_text="1 to 64 characters; resending it is "
                            "answered, not applied twice", error_messages={"invalid": "client_action_id is 1 to 64 "
                                                                                      "characters"})
    pass_until = serializers.JSONField(required=False, allow_null=True, help_text="with a pass: end_of_turn or my_turn")

    def validate(self, attrs):
        if "key" not in attrs and "action" not in attrs:
            raise serializers.ValidationError({"key": "send 'key' (an offered action's key) or 'action'"})
        return attrs


def _body(request, row: PlayedGame, view: dict | None = None) -> dict:
    return {"id": str(row.pk), "page": request.build_absolute_uri(reverse("game", args=[row.pk])),
            "websocket": f"/ws/games/{row.pk}/", "view": view if view is not None else session.view_of(row)}


def _owned(request, game_id) -> PlayedGame:
    row = PlayedGame.objects.filter(pk=game_id).first()
    if row is None or not session.owns(row, request.user, guest_key(request)):
        raise PlayError("no such game (or it is not yours)", 404)
    return row


class SampleDecksView(SiteApi, APIView):
    @extend_schema(responses={200: dict}, description="The sample decks (every card supported by the engine) "
                                                      "and the opponents: use them as 'sample:<name>' and 'opponent'.")
    def get(self, request):
        return Response({"decks": [{"deck": f"sample:{k}", "name": choice.sample_label(k),
                                    "main": v["main"], "format": v.get("format")} for k, v in sample_decks(settings.MTG_DATA_DIR).items()],
                         "opponents": [{"opponent": s, "name": n} for s, n in choice.opponent_choices()],
                         "levels": list(choice.search_levels()), "advice_levels": list(choice.advice_levels()),
                         "algorithms": list(choice.search_algorithms())})


class GameCreateView(limits.Limited, SiteApi, APIView):
    limit = "game_create"

    @extend_schema(
        request=GameCreateSerializer, responses={201: dict, 400: ApiErrorsSerializer, 429: ApiErrorsSerializer},
        examples=[OpenApiExample("Sample decks", request_only=True, value={
            "deck": "sample:mono_red_aggro", "opponent_deck": "sample:mono_white_weenie", "opponent": "engine:Medium"})],
        description="Start a game against the AI (bound to your account, or to your session as a guest). The AI "
                    "acts until your first decision. Decks with unknown or unsupported cards: 400 listing them.")
    def post(self, request):
        data, error = validated(request, GameCreateSerializer)
        if error:
            return error
        try:
            row, outcome = session.create_game(data["deck"], data["opponent_deck"], data["opponent"],
                                               human_seat=data["seat"], first=data["first"],
                                               user=request.user, session_key=guest_key(request, create=True),
                                               seed=data.get("seed"))
        except PlayError as exc:
            return _error(exc)
        return Response(_body(request, row, outcome.view), status=status.HTTP_201_CREATED,
                        headers={"Location": reverse("api-game", args=[row.pk])})


class GameView(SiteApi, APIView):
    @extend_schema(responses={200: dict, 404: ApiErrorsSerializer},
                   description="Your view of the game: your hand, the public board, the legal actions (each with the "
                               "key to send back), the log and the revision. The opponent's hand and the libraries "
                               "are never included.")
    def get(self, request, game_id):
        try:
            return Response(_body(request, _owned(request, game_id)))
        except PlayError as exc:
            return _error(exc)


class GameConcedeView(SiteApi, APIView):
    @extend_schema(
        request=None, responses={200: dict, 404: ApiErrorsSerializer, 409: ApiErrorsSerializer, 500: ApiErrorsSerializer},
        description="Concede your game: it ends at once, the AI wins, and it can be reviewed. The view that comes "
                    "back (and every socket of the game) shows the board as it stood when you conceded. Not your "
                    "game or unknown: 404; already finished: 409; nothing is written on a refusal.")
    def post(self, request, game_id):
        try:
            row = _owned(request, game_id)
            outcome = session.concede(row.pk, row.human_seat)
        except PlayError as exc:
            return _error(exc)
        session.publish_sync(outcome)
        return Response(_body(request, row, outcome.view))


class GameActionView(SiteApi, APIView):
    @extend_schema(
        request=GameActionSerializer,
        responses={200: dict, 400: ApiErrorsSerializer, 404: ApiErrorsSerializer, 409: ApiErrorsSerializer,
                   500: ApiErrorsSerializer},
        examples=[OpenApiExample("Pass", request_only=True, value={
            "key": "{\"data\":null,\"type\":\"PassPriority\"}", "revision": 3, "client_action_id": "a1"})],
        description='Take one of the offered actions: {"key": the action\'s key, or "action": {"type", "data"}, '
                    '"revision": the view\'s revision, "client_action_id": optional, "pass_until": optional with a pass, '
                    '"end_of_turn" or "my_turn"}. The AI then plays until your next decision (with pass_until, '
                    "your priority is passed for you until then, unless the AI puts something on the stack or "
                    "you have to decide something else). A stale revision or an action that is not legal now: 409, nothing written; "
                    "resending the same client_action_id is answered, not applied twice; an engine crash: 500, "
                    "the game is kept as it was.")
    def post(self, request, game_id):
        data, error = validated(request, GameActionSerializer)
        if error:
            return error
        action = data.get("key", data.get("action"))
        try:
            row = _owned(request, game_id)
            outcome = session.human_action(row.pk, row.human_seat, action, data.get("revision"),
                                           data.get("client_action_id"), pass_until=data.get("pass_until"),
                                           on_applied=lambda view: session.publish_sync(session.Outcome(str(row.pk), view)))
        except PlayError as exc:
            return _error(exc)
        session.publish_sync(outcome)
        return Response({"acted": outcome.ack, **_body(request, row, outcome.view)})

