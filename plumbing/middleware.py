"""A request whose database connection is lost (PostgreSQL restarted, its session terminated) is answered
503 with ``Retry-After``, not 500: the site is briefly unavailable, and the next request opens a new connection
(docs/reliability.md#faults). What the request had not committed is rolled back with the connection; the site
writes what belongs together in one transaction (a deck and its cards, a pick and the pod's state)."""
from __future__ import annotations

import logging

from django.db import InterfaceError, OperationalError
from django.http import HttpResponse, JsonResponse
from django.template.loader import render_to_string

log = logging.getLogger(__name__)

RETRY_AFTER_SECONDS = 5
MESSAGE = "The site lost its database connection while answering this request. Try again in a moment."


class DatabaseUnavailableMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, (OperationalError, InterfaceError)):
            return None
        log.warning("database unavailable during %s %s: %s", request.method, request.path, exception)
        if request.path.startswith("/api/") or "application/json" in request.headers.get("Accept", ""):
            response = JsonResponse({"errors": [{"message": MESSAGE}]}, status=503)
        else:
            response = HttpResponse(render_to_string("500.html", {
                "status": 503, "title": "Try again", "heading": "Try again in a moment", "lead": MESSAGE}), status=503)
        response["Retry-After"] = str(RETRY_AFTER_SECONDS)
        return response
