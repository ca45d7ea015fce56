"""Online pod API (session-authenticated; guests get a session): create, read, join, start, pick.

The same service functions as the websocket (drafts.pods.service), so a pick made here is validated,
locked and published exactly like one made over the socket.
"""
from __future__ import annotations

from django.urls import reverse
from drf_spectacular.utils import OpenApiExample, extend_schema
from rest_framework import serializers, status
from rest_framework.response import Response
from rest_framework.views import APIView

from plumbing.api import ApiErrorsSerializer, Flag, SiteApi, Text, Whole, errors_response, validated
from drafts.access import current_consent, guest_key, remember_consent
from drafts.core.cards import DraftError
from drafts.core.protocol import CLIENT_PICK_ID
from drafts.models import Draft
from drafts.pods import service, tasks
from plumbing import limits


def _error(exc: DraftError):
    code = getattr(exc, "code", 400)
    return errors_response({"message": str(exc)}, code=code if code in (400, 403, 404, 409) else 400)


def _consent(request, data):
    """The body's consent (true/false), else the choice already on file (None: not asked yet)."""
    value = data.get("consent")
    if value is not None and not isinstance(value, bool):
        raise service.PodError("consent must be true or false")
    return current_consent(request) if value is None else value


def _body(request, draft_id):
    draft = Draft.objects.filter(pk=draft_id, kind="online").first()
    if draft is None:
        raise service.PodError("no such draft pod", 404)
    seat = service.seat_of(draft, request.user, guest_key(request))
    status_, view = service.snapshot(draft.pk, seat.seat if seat else None)
    return {"id": str(draft.pk), "page": request.build_absolute_uri(reverse("pod", args=[draft.pk])),
            "websocket": f"/ws/pods/{draft.pk}/", "status": status_, "you": view}


NUMBERS = "seats and pick_timer are numbers"
PICK = "send card (a name), pack_number and pick_number (0-based integers) and client_pick_id (1-64 letters, digits or _.:-)"


class PodCreateSerializer(serializers.Serializer):
    set = Text(allow_blank=True)
    seats = Whole(default=8, error_messages={"invalid": NUMBERS})
    bot = Text(default="draftsim", allow_blank=True, allow_null=True)
    pick_timer = Whole(default=0, help_text="0 (off), 30, 45, 60, 90 or 120 seconds", error_messages={"invalid": NUMBERS})
    display_name = Text(allow_blank=True)
    consent = Flag(required=False, allow_null=True, help_text="share my drafts to train the bots",
                   error_messages={"invalid": "consent must be true or false"})


class PodJoinSerializer(serializers.Serializer):
    display_name = Text(default="", allow_blank=True, allow_null=True)
    consent = Flag(required=False, allow_null=True, help_text="share my drafts to train the bots (default: the "
                   "choice already on file)", error_messages={"invalid": "consent must be true or false"})


class PodPickSerializer(serializers.Serializer):
    card = Text(error_messages={"invalid": PICK, "blank": PICK, "required": PICK, "null": PICK})
    pack_number = Whole(help_text="0-based", error_messages={"invalid": PICK, "required": PICK, "null": PICK})
    pick_number = Whole(help_text="0-based", error_messages={"invalid": PICK, "required": PICK, "null": PICK})
    client_pick_id = serializers.RegexField(
        CLIENT_PICK_ID, help_text="1-64 letters, digits or _.:-; resending it is answered, not applied twice",
        error_messages={"invalid": PICK, "blank": PICK, "required": PICK, "null": PICK})

    def to_internal_value(self, data):
        if isinstance(data, dict) and not isinstance(data.get("client_pick_id"), (str, type(None))):
            raise serializers.ValidationError({"client_pick_id": [PICK]})  # a number is not turned into an id
        return super().to_internal_value(data)


class PodCreateView(limits.Limited, SiteApi, APIView):
    limit = "pod_create"

    @extend_schema(request=PodCreateSerializer, responses={201: dict, 400: ApiErrorsSerializer, 429: ApiErrorsSerializer},
                   examples=[OpenApiExample("Pod", request_only=True, value={
                       "set": "BLB", "seats": 8, "bot": "draftsim", "pick_timer": 60, "display_name": "Ana",
                       "consent": True})],
                   description="Open a pod in the lobby with you (the host) in seat 0; share its page to fill seats.")
    def post(self, request):
        data, error = validated(request, PodCreateSerializer)
        if error:
            return error
        try:
            consent = _consent(request, data)
            draft, _ = service.create_pod(data["set"], data["seats"], data.get("bot") or "draftsim", data["pick_timer"],
                                         data["display_name"], user=request.user,
                                         session_key=guest_key(request, create=True), consent=consent)
        except DraftError as exc:
            return _error(exc)
        remember_consent(request, consent)
        return Response(_body(request, draft.pk), status=status.HTTP_201_CREATED,
                        headers={"Location": reverse("api-pod", args=[draft.pk])})


class PodView(SiteApi, APIView):
    @extend_schema(responses={200: dict, 404: ApiErrorsSerializer},
                   description="The pod's public status and, if you hold a seat, your own pack and pool.")
    def get(self, request, draft_id):
        try:
            return Response(_body(request, draft_id))
        except DraftError as exc:
            return _error(exc)


class PodJoinView(SiteApi, APIView):
    @extend_schema(request=PodJoinSerializer, responses={200: dict, 400: ApiErrorsSerializer, 404: ApiErrorsSerializer,
                                                         409: ApiErrorsSerializer},
                   description='Take a free seat: {"display_name": str, "consent": bool}.')
    def post(self, request, draft_id):
        data, error = validated(request, PodJoinSerializer)
        if error:
            return error
        try:
            consent = _consent(request, data)
            _, outcome = service.join_pod(draft_id, data.get("display_name") or "", user=request.user,
                                         session_key=guest_key(request, create=True), consent=consent)
        except DraftError as exc:
            return _error(exc)
        remember_consent(request, consent)
        tasks.publish_outcome(outcome)
        return Response(_body(request, draft_id))


class PodStartView(SiteApi, APIView):
    @extend_schema(request=None, responses={200: dict, 403: ApiErrorsSerializer, 404: ApiErrorsSerializer,
                                            409: ApiErrorsSerializer},
                   description="The host starts the draft; bots take the empty seats.")
    def post(self, request, draft_id):
        try:
            tasks.publish_outcome(service.start_pod(draft_id, request.user, guest_key(request)))
            return Response(_body(request, draft_id))
        except DraftError as exc:
            return _error(exc)


class PodPickView(SiteApi, APIView):
    @extend_schema(request=PodPickSerializer, responses={200: dict, 400: ApiErrorsSerializer, 403: ApiErrorsSerializer,
                                                         404: ApiErrorsSerializer, 409: ApiErrorsSerializer},
                   description='Pick from your pack: {"card", "pack_number", "pick_number", "client_pick_id"} '
                               "(0-based numbers; resending the same client_pick_id is answered, not applied twice).")
    def post(self, request, draft_id):
        data, error = validated(request, PodPickSerializer)
        if error:
            return error
        card, cid, numbers = data["card"], data["client_pick_id"], [data["pack_number"], data["pick_number"]]
        try:
            draft = Draft.objects.filter(pk=draft_id, kind="online").first()
            seat = None if draft is None else service.seat_of(draft, request.user, guest_key(request))
            if seat is None:
                raise service.PodError("you have no seat in this pod", 404 if draft is None else 403)
            outcome = service.make_pick(draft_id, seat.seat, card, numbers[0], numbers[1], cid)
        except DraftError as exc:
            return _error(exc)
        tasks.publish_outcome(outcome)
        return Response({"picked": outcome.ack, **_body(request, draft_id)})
