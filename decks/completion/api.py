"""POST /api/decks/complete (queue a completion) and GET /api/decks/complete/<id> (poll it).

The job can also be followed over the websocket ``ws/jobs/<id>/`` (docs/websockets.md).
"""
from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from plumbing.api import ApiErrorsSerializer, Flag, SiteApi, Text, errors_response, validated
from decks.completion.service import (DEFAULT_MODEL, LIMIT_WORK, MODELS, CompletionRequestError, create_job,
                                      job_payload, parse_request)
from decks.core.rules import FORMATS
from decks.models import CompletionJob
from decks.tasks import enqueue_completion
from plumbing import limits
from plumbing.guests import guest_key


class CompletionRequestSerializer(serializers.Serializer):
    """The request body: its shape here, the cards and the format by ``parse_request`` (one error per bad line)."""

    format = Text(required=False, allow_blank=True, allow_null=True, help_text=f"one of {', '.join(FORMATS)}")
    text = Text(required=False, allow_null=True, allow_blank=True,
                help_text="Known cards as decklist text (MTGO, Arena or plain).",
                error_messages={"invalid": "text must be a string."})
    main = serializers.ListField(child=serializers.ListField(), required=False, allow_null=True,
                                 help_text="Known main cards as [[name, count], ...] (instead of text).",
                                 error_messages={"not_a_list": "main must be a list of [name, count] pairs."})
    side = serializers.ListField(child=serializers.ListField(), required=False, allow_null=True,
                                 error_messages={"not_a_list": "side must be a list of [name, count] pairs."})
    generate_side = Flag(default=True, error_messages={"invalid": "generate_side must be true or false.",
                                                       "null": "generate_side must be true or false."})
    model = serializers.ChoiceField(
        choices=list(MODELS), default=DEFAULT_MODEL, allow_null=True,
        error_messages={"invalid_choice": f"Unknown model '{{input}}'; choose one of {', '.join(MODELS)}."},
        help_text="masked (default): the nearest tournament decks + the masked diffusion model; the result has "
                  "per-card confidence, the decks it drew on and warnings. manamorphosis: the continuous diffusion.")
    sampler = serializers.ChoiceField(choices=["fast", "full"], default="fast", allow_null=True,
                                      help_text="manamorphosis only: 50-step DDIM (fast) or 1000-step DDPM (full)",
                                      error_messages={"invalid_choice": "Sampler must be 'fast' or 'full'."})
    seed = serializers.IntegerField(default=0, min_value=0, max_value=2**31 - 1, allow_null=True,
                                    error_messages={k: "Seed must be a whole number from 0 to 2147483647."
                                                    for k in ("invalid", "min_value", "max_value", "max_string_length")})
    collection = serializers.JSONField(
        required=False,
        help_text="masked only: complete from these cards alone, within their counts (basic lands in any number): "
                  "an Arena or MTGO collection export or 'N Name' lines as one string, or [[name, count], ...]. "
                  "A bad line or unknown card is a 400 naming the collection's line; nothing is queued.")

    def validate(self, attrs):
        if attrs.get("text") is None and attrs.get("main") is None:
            raise serializers.ValidationError("Give the known cards as \"text\" or as \"main\": [[name, count], ...].")
        return attrs


class CompletionSourceSerializer(serializers.Serializer):
    deck = serializers.IntegerField(help_text="a tournament deck (GET /api/decks/<id>/)")
    event = serializers.CharField()
    date = serializers.DateField(allow_null=True)
    weight = serializers.FloatField(help_text="its share of the neighbour vote, 0..1")
    similarity = serializers.FloatField(help_text="how much of the given cards it holds (IDF-weighted), 0..1")
    url = serializers.CharField(help_text="the deck's page")


class ArchetypeCompletionSerializer(serializers.Serializer):
    share = serializers.FloatField(help_text="the group's share of the nearest decks' weight, 0..1")
    decks = serializers.IntegerField(help_text="how many of the nearest decks are in the group")
    main = serializers.ListField(child=serializers.ListField(), help_text="[[name, count], ...]")
    side = serializers.ListField(child=serializers.ListField())
    generated_main = serializers.ListField(child=serializers.ListField())
    generated_side = serializers.ListField(child=serializers.ListField())
    confidence = serializers.DictField(child=serializers.FloatField())
    sources = CompletionSourceSerializer(many=True, help_text="example decks of the group, best first")


class CompletionResultSerializer(serializers.Serializer):
    main = serializers.ListField(child=serializers.ListField(), help_text="[[name, count], ...]")
    side = serializers.ListField(child=serializers.ListField())
    generated_main = serializers.ListField(child=serializers.ListField(), help_text="the cards the model added")
    generated_side = serializers.ListField(child=serializers.ListField())
    iterations = serializers.IntegerField()
    seconds = serializers.FloatField()
    confidence = serializers.DictField(child=serializers.FloatField(), required=False,
                                       help_text='masked: how sure the model was of each generated card, 0..1, '
                                                 'keyed "main:<name>" or "side:<name>"')
    sources = CompletionSourceSerializer(many=True, required=False,
                                         help_text="masked: the tournament decks it drew on most, best first")
    warnings = serializers.ListField(child=serializers.CharField(), required=False,
                                     help_text="masked: e.g. a given card not seen in the format (kept)")
    archetypes = ArchetypeCompletionSerializer(
        many=True, required=False,
        help_text="masked: when the given cards fit several archetypes (the nearest decks split into groups), the "
                  "best completion drawn from each group alone, largest share first (up to 3); empty when they are "
                  "one archetype. main/side above stay the default answer.")
    missing = serializers.ListField(child=serializers.ListField(), required=False,
                                    help_text="with a collection: [[name, copies], ...] the deck a tournament player "
                                              "would build holds that the collection lacks (owned copies subtracted)")
    missing_table = serializers.ListField(child=serializers.ListField(), required=False,
                                          help_text="with a collection: [[name, wanted, owned, missing], ...], most "
                                                    "missing first")
    not_owned = serializers.ListField(child=serializers.ListField(), required=False,
                                      help_text="with a collection: [[name, copies], ...] of the main deck the "
                                                "collection lacks: the open slots, filled with the cards you would need")
    notes = serializers.ListField(child=serializers.CharField(), required=False,
                                  help_text="with a collection: open slots, the land count against the nearest decks', "
                                            "a sideboard shorter than 15")
    lands = serializers.DictField(required=False, allow_null=True,
                                  help_text='with a collection: {"count", "low", "high"}: the deck\'s lands and the '
                                            "range of the nearest decks of its archetype")


class CompletionJobSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    status = serializers.ChoiceField(choices=[s for s, _ in CompletionJob.STATUSES])
    progress = serializers.FloatField()
    message = serializers.CharField()
    format = serializers.CharField()
    model = serializers.ChoiceField(choices=list(MODELS))
    error = serializers.CharField(allow_null=True)
    deck = serializers.IntegerField(allow_null=True, help_text="the completed deck (GET /api/decks/<id>/)")
    result = CompletionResultSerializer(allow_null=True, help_text="when done: the deck and what the model added")
    url = serializers.CharField()
    ws = serializers.CharField()


def _body(request, job) -> dict:
    payload = job_payload(job)
    payload["url"] = request.build_absolute_uri(reverse("api-completion-detail", args=[job.pk]))
    payload["ws"] = f"/ws/jobs/{job.pk}/"
    return payload


class CompletionListView(limits.Limited, SiteApi, APIView):
    limit = "completion"
    limit_work = LIMIT_WORK

    @extend_schema(
        request=CompletionRequestSerializer,
        responses={202: CompletionJobSerializer, 400: ApiErrorsSerializer, 429: ApiErrorsSerializer,
                   503: ApiErrorsSerializer},
        examples=[OpenApiExample("Burn core", request_only=True, value={
            "format": "modern", "text": "4 Lightning Bolt\n4 Goblin Guide\n4 Monastery Swiftspear", "seed": 1}),
                  OpenApiExample("From a collection", request_only=True, value={
            "format": "modern", "main": [["Lightning Bolt", 4]],
            "collection": "4 Lightning Bolt\n4 Goblin Guide\n2 Skullcrack\n4 Monastery Swiftspear"}),
                  OpenApiExample("With Manamorphosis", request_only=True, value={
            "format": "modern", "main": [["Lightning Bolt", 4]], "model": "manamorphosis", "sampler": "fast"})],
        description="Queue a completion of the known cards into a legal 60 + 15 deck. 202 with a job to poll "
                    "(or follow over ws/jobs/<id>/); 400 with one error per problem, nothing queued. `model` picks "
                    "the completer: masked (default) or manamorphosis. Limits per client (docs/operations.md#limits): 429 "
                    "over the rate or with too many unfinished jobs, 503 when the queue is full, each with "
                    "Retry-After; nothing queued.",
    )
    def post(self, request):
        data, error = validated(request, CompletionRequestSerializer)
        if error:
            return error
        try:
            req = parse_request(text=data.get("text"), main=data.get("main"), side=data.get("side"),
                                fmt=data.get("format") or "", generate_side=data["generate_side"],
                                sampler=data.get("sampler") or "fast", seed=data["seed"], model=data["model"],
                                collection=data.get("collection"))
        except CompletionRequestError as exc:
            return errors_response(*exc.errors)
        # the key the limits counted this request under (its jobs count against it), then a guest's session so
        # that the deck is in their "My decks": a first visit's session must not change the key its jobs count under
        client = limits.client_of(request).key
        job = create_job(req, owner=request.user, client=client, guest=guest_key(request, create=True))
        enqueue_completion(job)
        job.refresh_from_db()
        return Response(_body(request, job), status=status.HTTP_202_ACCEPTED,
                        headers={"Location": reverse("api-completion-detail", args=[job.pk])})


class CompletionDetailView(SiteApi, APIView):
    @extend_schema(responses={200: CompletionJobSerializer, 404: ApiErrorsSerializer})
    def get(self, request, job_id):
        """A completion job: status, progress and, when done, the deck."""
        return Response(_body(request, get_object_or_404(CompletionJob, pk=job_id)))
