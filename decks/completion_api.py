"""POST /api/decks/complete (queue a completion) and GET /api/decks/complete/<id> (poll it).

The job can also be followed over the websocket ``ws/jobs/<id>/`` (docs/websockets.md).
"""
from __future__ import annotations

from django.shortcuts import get_object_or_404
from django.urls import reverse
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.exceptions import ParseError, UnsupportedMediaType
from rest_framework.response import Response
from rest_framework.views import APIView

from decks.api import ApiErrorsSerializer, errors_response
from decks.completion import CompletionRequestError, create_job, job_payload, parse_request
from decks.core.rules import FORMATS
from decks.models import CompletionJob


class CompletionRequestSerializer(serializers.Serializer):
    """Request body (documentation; the view checks it by hand for clear messages)."""

    format = serializers.ChoiceField(choices=FORMATS)
    text = serializers.CharField(required=False, help_text="Known cards as decklist text (MTGO, Arena or plain).")
    main = serializers.ListField(child=serializers.ListField(), required=False,
                                 help_text="Known main cards as [[name, count], ...] (instead of text).")
    side = serializers.ListField(child=serializers.ListField(), required=False)
    generate_side = serializers.BooleanField(default=True)
    sampler = serializers.ChoiceField(choices=["fast", "full"], default="fast")
    seed = serializers.IntegerField(default=0, min_value=0)


class CompletionJobSerializer(serializers.Serializer):
    id = serializers.UUIDField()
    status = serializers.ChoiceField(choices=[s for s, _ in CompletionJob.STATUSES])
    progress = serializers.FloatField()
    message = serializers.CharField()
    format = serializers.CharField()
    error = serializers.CharField(allow_null=True)
    deck = serializers.IntegerField(allow_null=True, help_text="the completed deck (GET /api/decks/<id>/)")
    result = serializers.JSONField(allow_null=True, help_text="main/side [[name, count]], generated_main/generated_side, seconds")
    url = serializers.CharField()
    ws = serializers.CharField()


def _body(request, job) -> dict:
    payload = job_payload(job)
    payload["url"] = request.build_absolute_uri(reverse("api-completion-detail", args=[job.pk]))
    payload["ws"] = f"/ws/jobs/{job.pk}/"
    return payload


class CompletionListView(APIView):
    @extend_schema(
        request=CompletionRequestSerializer,
        responses={202: CompletionJobSerializer, 400: ApiErrorsSerializer},
        examples=[OpenApiExample("Burn core", request_only=True, value={
            "format": "modern", "text": "4 Lightning Bolt\n4 Goblin Guide\n4 Monastery Swiftspear", "seed": 1})],
        description="Queue a completion of the known cards into a legal 60 + 15 deck. 202 with a job to poll "
                    "(or follow over ws/jobs/<id>/); 400 with one error per problem, nothing queued.",
    )
    def post(self, request):
        try:
            data = request.data
        except (ParseError, UnsupportedMediaType) as exc:
            return errors_response({"message": f"Send a JSON object with Content-Type: application/json ({exc.detail})."})
        if not isinstance(data, dict):
            return errors_response({"message": "The body must be a JSON object with \"format\" and \"text\" or \"main\"."})
        text = data.get("text")
        if text is not None and not isinstance(text, str):
            return errors_response({"field": "text", "message": "text must be a string."})
        if text is None and data.get("main") is None:
            return errors_response({"message": "Give the known cards as \"text\" or as \"main\": [[name, count], ...]."})
        generate_side = data.get("generate_side", True)
        if not isinstance(generate_side, bool):
            return errors_response({"field": "generate_side", "message": "generate_side must be true or false."})
        try:
            req = parse_request(text=text, main=data.get("main"), side=data.get("side"), fmt=str(data.get("format") or ""),
                                generate_side=generate_side, sampler=str(data.get("sampler") or "fast"),
                                seed=data.get("seed", 0))
        except CompletionRequestError as exc:
            return errors_response(*exc.errors)
        job = create_job(req, owner=request.user)
        job.refresh_from_db()
        return Response(_body(request, job), status=status.HTTP_202_ACCEPTED,
                        headers={"Location": reverse("api-completion-detail", args=[job.pk])})


class CompletionDetailView(APIView):
    @extend_schema(responses={200: CompletionJobSerializer})
    def get(self, request, job_id):
        """A completion job: status, progress and, when done, the deck."""
        return Response(_body(request, get_object_or_404(CompletionJob, pk=job_id)))
