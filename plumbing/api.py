"""The site's API conventions, shared by every app's API views (DRF).

Errors share one shape: ``{"errors": [{"message": "...", ...}]}`` (``errors_response``; ``ApiErrorsSerializer``
documents it). DRF's own errors (an unknown object or page, a method not allowed) are given that shape by
:class:`SiteApi`, which every API view of the site mixes in (it also refuses text holding a NUL character), and
an /api/ URL that matches no route by :func:`not_found` (the site's ``handler404``). ``json_body`` reads a
request's JSON object, or gives the error response to return.

One contract per endpoint: the serializer that documents a request body (``extend_schema(request=...)``) also
validates it (:func:`validated`), its errors in the one shape (:func:`invalid`). The fields below take a value of
their JSON type only (DRF's own would turn ``5`` into ``"5"`` or ``"true"`` into ``True``).
"""
from __future__ import annotations

import re

from django.conf import settings
from django.http import JsonResponse
from django.views import defaults
from rest_framework import serializers, status
from rest_framework.exceptions import ParseError, UnsupportedMediaType
from rest_framework.response import Response
from rest_framework.views import exception_handler


class ApiErrorSerializer(serializers.Serializer):
    message = serializers.CharField()
    field = serializers.CharField(required=False)
    line = serializers.IntegerField(required=False, allow_null=True,
                                    help_text="1-based line of the decklist (null: the cards came as a list)")
    text = serializers.CharField(required=False, help_text="the line as sent")
    suggestions = serializers.ListField(child=serializers.CharField(), required=False)


class ApiErrorsSerializer(serializers.Serializer):
    errors = ApiErrorSerializer(many=True)


class Text(serializers.CharField):
    """A JSON string (a number or a boolean is refused, not turned into one)."""

    def to_internal_value(self, data):
        if not isinstance(data, str):
            self.fail("invalid")
        return super().to_internal_value(data)


class Whole(serializers.IntegerField):
    """A JSON integer (not a boolean, a float or a string of digits)."""

    def to_internal_value(self, data):
        if not isinstance(data, int) or isinstance(data, bool):
            self.fail("invalid")
        return super().to_internal_value(data)


class Number(serializers.FloatField):
    """A JSON number (not a boolean or a string)."""

    def to_internal_value(self, data):
        if not isinstance(data, (int, float)) or isinstance(data, bool):
            self.fail("invalid")
        return super().to_internal_value(data)


class Flag(serializers.BooleanField):
    """A JSON true or false (not 1, "yes" or "true")."""

    def to_internal_value(self, data):
        if not isinstance(data, bool):
            self.fail("invalid")
        return data


def serializer_errors(errors, field: str = "") -> list[dict]:
    """A serializer's errors in the site's shape: one ``{"field", "message"}`` per field (a nested one as
    ``budget.seconds`` or ``pack.2``), ``{"message"}`` for the body as a whole."""
    if isinstance(errors, dict):
        out = []
        for key, value in errors.items():
            inner = "" if key in ("non_field_errors", "__all__") else str(key)
            out += serializer_errors(value, f"{field}.{inner}" if field and inner else field or inner)
        return out
    if isinstance(errors, list) and errors and not all(isinstance(e, str) for e in errors):
        return [e for i, item in enumerate(errors) for e in serializer_errors(item, f"{field}.{i}" if field else str(i))]
    message = " ".join(str(e) for e in (errors if isinstance(errors, list) else [errors]))
    if field and not message.startswith(field.split(".")[0]):
        message = f"{field}: {message}"  # DRF's own words name no field
    return [{"field": field, "message": message} if field else {"message": message}] if message else []


def invalid(form: serializers.Serializer) -> Response:
    """The 400 of a serializer that did not validate."""
    return errors_response(*serializer_errors(form.errors))


def validated(request, serializer: type[serializers.Serializer], **context):
    """(the body validated by ``serializer``, None), or (None, the 400 to return): the body must be a JSON
    object, and the serializer that documents it decides the rest."""
    data, error = json_body(request)
    if error is not None:
        return None, error
    form = serializer(data=data, context={"request": request, **context})
    if not form.is_valid():
        return None, invalid(form)
    return form.validated_data, None


def errors_response(*errors: dict, code: int = status.HTTP_400_BAD_REQUEST) -> Response:
    return Response({"errors": list(errors)}, status=code)


def site_exception_handler(exc, context):
    """DRF's exception handler, its ``{"detail": ...}`` bodies in the site's error shape."""
    response = exception_handler(exc, context)
    if response is not None and isinstance(response.data, dict) and set(response.data) == {"detail"}:
        response.data = {"errors": [{"message": str(response.data["detail"])}]}
    return response


# How a NUL character is written in each kind of body the API reads (besides the raw byte).
NUL_ESCAPES = {"application/json": b"\\u0000", "application/x-www-form-urlencoded": b"%00", "multipart/form-data": None}


def holds_nul(request) -> bool:
    """Whether the query or the body holds a NUL character: PostgreSQL can neither store nor compare text
    with one (SQLite can, so the embedded stack would not notice)."""
    if any("\x00" in k or any("\x00" in v for v in values) for k, values in request.query_params.lists()):
        return True
    kind = (request.content_type or "").split(";")[0].strip()
    raw = str(request.META.get("CONTENT_LENGTH") or "")
    size = int(raw) if re.fullmatch(r"[0-9]{1,12}", raw) else 0
    if kind not in NUL_ESCAPES or not size or size > settings.DATA_UPLOAD_MAX_MEMORY_SIZE:
        return False  # nothing to look at, or a body Django refuses by itself
    body = request._request.body
    return b"\x00" in body or (NUL_ESCAPES[kind] is not None and NUL_ESCAPES[kind] in body)


class SiteApi:
    """Mixed into every API view, the site's API conventions: DRF's own errors (no such object or page, a
    method not allowed, a CSRF refusal) read ``{"errors": [{"message": ...}]}`` like the views' own, and a
    request holding a NUL character is refused with a 400 before a view reads it."""

    def get_exception_handler(self):
        return site_exception_handler

    def initial(self, request, *args, **kwargs):
        super().initial(request, *args, **kwargs)
        if holds_nul(request):
            raise ParseError("Text may not hold NUL characters (\\u0000).")


def not_found(request, exception):
    """The site's 404 (``handler404``): JSON in the API's error shape under /api/, else Django's page."""
    if request.path.startswith("/api/"):
        return JsonResponse({"errors": [{"message": f"Nothing at {request.path[:200]}."}]}, status=404)
    return defaults.page_not_found(request, exception)


def json_body(request):
    """(the body's JSON object, None), or (None, the error response) when the body is not a JSON object."""
    try:
        data = request.data
    except (ParseError, UnsupportedMediaType) as exc:
        return None, errors_response({"message": f"Send a JSON object with Content-Type: application/json ({exc.detail})."})
    if not isinstance(data, dict):
        return None, errors_response({"message": "The body must be a JSON object."})
    return data, None
