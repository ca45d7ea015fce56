"""The review page ``/games/<id>/review/`` and ``/api/games/<id>/review``: the game's owner only (anyone else, and an
unknown game: 404); a game still being played: 409. POST starts the review (a Celery job); GET shows it, with the
win estimate per turn as an inline SVG drawn here and the mistakes with the advisor's better line."""
from __future__ import annotations

from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_http_methods
from drf_spectacular.utils import extend_schema
from rest_framework import status
from rest_framework.response import Response
from rest_framework.views import APIView

from plumbing.api import ApiErrorsSerializer, SiteApi, errors_response
from gameplay.models import PlayedGame
from gameplay.play import PlayError, session
from gameplay.review import service, tasks
from gameplay.review.models import GameReview
from plumbing.guests import guest_key


def _owned(request, game_id) -> PlayedGame:
    row = PlayedGame.objects.filter(pk=game_id).first()
    if row is None or not session.owns(row, request.user, guest_key(request)):
        raise PlayError("no such game (or it is not yours)", 404)
    return row


def _start(row: PlayedGame) -> GameReview:
    review, fresh = service.start_review(row)
    if fresh:
        tasks.enqueue_review(review)
    return review


def estimate_svg(turns: list[dict], width: int = 640, height: int = 220) -> str:
    """The win estimate per turn as an inline SVG line chart (0..1, a dashed line at 0.5)."""
    left, right, top, bottom = 40, 12, 12, 28
    w, h = width - left - right, height - top - bottom
    points = [(t["turn"], t["estimate"]) for t in turns if t.get("estimate") is not None]
    last = max([p[0] for p in points] + [2])

    def x(turn):
        return left + w * (turn - 1) / max(1, last - 1)

    def y(value):
        return top + h * (1 - value)

    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" class="review-plot" viewBox="0 0 {width} {height}" '
             f'role="img" aria-label="Your win estimate at the start of each of your turns">',
             f'<rect x="{left}" y="{top}" width="{w}" height="{h}" fill="none" stroke="#ccc"/>',
             f'<line x1="{left}" x2="{left + w}" y1="{y(0.5):.1f}" y2="{y(0.5):.1f}" stroke="#999" stroke-dasharray="4 3"/>']
    for value in (0, 0.5, 1):
        parts.append(f'<text x="{left - 6}" y="{y(value) + 4:.1f}" text-anchor="end" font-size="11">{value:.0%}</text>')
    for turn in sorted({p[0] for p in points}):
        parts.append(f'<text x="{x(turn):.1f}" y="{height - 10}" text-anchor="middle" font-size="11">{turn}</text>')
    if points:
        path = " ".join(f"{'M' if i == 0 else 'L'}{x(t):.1f},{y(v):.1f}" for i, (t, v) in enumerate(points))
        parts.append(f'<path d="{path}" fill="none" stroke="#1b9e77" stroke-width="2"/>')
        parts += [f'<circle cx="{x(t):.1f}" cy="{y(v):.1f}" r="3" fill="#1b9e77"><title>turn {t}: {v:.0%}</title></circle>'
                  for t, v in points]
    parts.append("</svg>")
    return "".join(parts)


@require_http_methods(["GET", "POST"])
def review_page(request, game_id):
    try:
        row = _owned(request, game_id)
    except PlayError:
        raise Http404("no such game (or it is not yours)") from None
    problem = None
    try:
        service.reviewable(row)
    except PlayError as exc:
        problem = exc
    if request.method == "POST" and problem is None:
        _start(row)
        return redirect("game-review", game_id=row.pk)
    review = GameReview.objects.filter(game=row).first()
    result = review.result if review and review.status == "done" else None
    context = {"game": row, "problem": problem, "review": review, "data": service.payload(review),
               "plot": estimate_svg(result["turns"]) if result else None,
               "mistakes": [d for d in (result or {}).get("decisions", []) if d.get("mistake")]}
    return render(request, "gameplay/review.html", context, status=problem.code if problem else 200)


class GameReviewView(SiteApi, APIView):
    @extend_schema(responses={200: dict, 404: ApiErrorsSerializer, 409: ApiErrorsSerializer},
                   description="The review of your finished game: status (none, queued, running, done, failed), "
                               "progress, and when done the win estimate per turn and each reviewed decision (the move "
                               "played and the advisor's choice with their values, mistake or not, the better line). "
                               "Only what your seat could see. A game still being played: 409.")
    def get(self, request, game_id):
        try:
            row = _owned(request, game_id)
            service.reviewable(row)
        except PlayError as exc:
            return errors_response({"message": str(exc)}, code=exc.code)
        return Response(service.payload(GameReview.objects.filter(game=row).first()))

    @extend_schema(request=None, responses={202: dict, 200: dict, 404: ApiErrorsSerializer, 409: ApiErrorsSerializer},
                   description="Start the review of your finished game (a Celery job): 202, or 200 with the review "
                               "already there (a failed one is started again).")
    def post(self, request, game_id):
        try:
            row = _owned(request, game_id)
            before = GameReview.objects.filter(game=row).values_list("status", flat=True).first()
            review = _start(row)
        except PlayError as exc:
            return errors_response({"message": str(exc)}, code=exc.code)
        review.refresh_from_db()
        fresh = before in (None, "failed")
        return Response(service.payload(review), status=status.HTTP_202_ACCEPTED if fresh else status.HTTP_200_OK)
