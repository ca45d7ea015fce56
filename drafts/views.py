"""Draft pages: stored drafts, simulating a pod, a pod, a seat's history (with its plot), export."""
from __future__ import annotations

import io
import re

from django import forms
from django.db.models import Count
from django.http import Http404, HttpResponse, HttpResponseBadRequest
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from decks.core.cards import COLOR_NAMES
from decks.core.catalogue import DataError
from decks.search import paginate, query_without_page
from drafts import rounds, services
from drafts.access import may_see_seat, visible_seats
from drafts.core.cards import DraftError
from common.figures import figure_bytes
from drafts.core.plots import draft_history_figure, loss_curves_figure, weights_heatmap_figure
from drafts.logstore import export_logs
from drafts.models import Draft, DraftPick, DraftSeat
from ml.models import ModelVersion
from plumbing import limits

SEAT_MIXES = {
    "draftsim": "DraftsimBot in every seat",
    "archetype": "ArchetypeBot in every seat",
    "neural": "Neural bot in every seat",
    "mixed": "A mix: neural, archetype and draftsim",
}
PAGE_SIZE = 30


def seat_bots(mix: str, seats: int) -> list[str]:
    if mix == "mixed":
        return [("neural", "archetype", "draftsim")[i % 3] for i in range(seats)]
    return [mix] * seats


class SimulateForm(forms.Form):
    set_code = forms.ChoiceField(label="Set")
    bots = forms.ChoiceField(label="Bots", choices=list(SEAT_MIXES.items()), initial="mixed")
    seats = forms.IntegerField(label="Seats", min_value=2, max_value=8, initial=8)
    seed = forms.IntegerField(label="Seed", min_value=0, max_value=2**31 - 1, required=False,
                              help_text="Same set, bots and seed = the same draft.")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["set_code"].choices = services.set_choices()


@require_http_methods(["GET", "POST"])
@limits.limited("simulate")
def draft_list(request):
    error = None
    if request.method == "POST":
        form = SimulateForm(request.POST)
        if not limits.refused(request) and form.is_valid():
            data = form.cleaned_data
            try:
                draft = services.simulate_draft(data["set_code"], seat_bots(data["bots"], data["seats"]),
                                                seed=data["seed"], owner=request.user if request.user.is_authenticated else None)
            except DraftError as exc:
                error = str(exc)
            else:
                return redirect("draft-detail", draft_id=draft.pk)
    else:
        form = SimulateForm(initial={"set_code": "BLB"})
    drafts = Draft.objects.all()
    set_code = (request.GET.get("set") or "").upper().replace("\x00", "")  # PostgreSQL refuses NUL
    kind = request.GET.get("kind") or ""
    if set_code:
        drafts = drafts.filter(set_code=set_code)
    if kind in dict(Draft.KINDS):
        drafts = drafts.filter(kind=kind)
    page, page_note = paginate(request, drafts, per_page=PAGE_SIZE)
    return render(request, "drafts/draft_list.html", {
        "form": form, "error": error, "page": page, "notes": [page_note] if page_note else [],
        "querystring": query_without_page(request), "set_code": set_code, "kind": kind, "kinds": Draft.KINDS,
    })


@require_GET
def draft_detail(request, draft_id):
    draft = get_object_or_404(Draft, pk=draft_id)
    seats = list(draft.seat_set.select_related("deck", "bot_version").annotate(n_picks=Count("picks")).order_by("seat"))
    first_picks = {p.seat_id: p.pick for p in DraftPick.objects.filter(seat__draft=draft, pack_number=0, pick_number=0)}
    rows = []
    for s in seats:
        visible = may_see_seat(request, s)
        rows.append({"seat": s, "first_pick": first_picks.get(s.pk, "") if visible else "", "visible": visible,
                     "picks": s.n_picks})
    return render(request, "drafts/draft_detail.html", {"draft": draft, "rows": rows})


def export_download(request, seats, filename: str) -> HttpResponse:
    """The export of these seats: their picks (17Lands draft layout), or with ``?rows=games`` the games of their
    rounds (17Lands-like game rows, ``drafts.rounds.game_rows``) under the same seats, so the same consent."""
    wanted = request.GET.get("rows") or "picks"
    if wanted == "picks":
        return csv_download(seats, filename)
    if wanted != "games":
        return HttpResponse("rows is 'picks' (the default) or 'games'", status=400, content_type="text/plain")
    text = rounds.games_csv(seats)
    if text is None:
        return HttpResponse("Nothing to export: no finished games of these drafts.", status=404, content_type="text/plain")
    response = HttpResponse(text, content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="{filename.replace("draft_data", "game_data", 1)}"'
    return response


def csv_download(seats, filename: str) -> HttpResponse:
    """Seats' picks as a 17Lands CSV download; a plain 404 when there is nothing to export."""
    buffer = io.StringIO()
    try:
        export_logs(seats, buffer)
    except DataError as exc:
        return HttpResponse(f"Nothing to export: {exc}.", status=404, content_type="text/plain")
    response = HttpResponse(buffer.getvalue(), content_type="text/csv")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    return response


def _seat(request, draft_id, seat_number) -> DraftSeat:
    seat = get_object_or_404(DraftSeat.objects.select_related("draft", "deck", "bot_version"),
                             draft_id=draft_id, seat=seat_number)
    if not may_see_seat(request, seat):  # an online pod's seats are private to their drafters
        raise Http404("this seat's picks are private to its drafter")
    return seat


def color_groups(names: list[str], s) -> list[dict]:
    """A pool grouped by colour (mono colours, multicolour, colourless), each sorted by mana value."""
    groups: dict[str, list] = {}
    for name in names:
        card = s.card(name)
        key = card.colors if len(card.colors) == 1 else ("M" if card.colors else "C")
        groups.setdefault(key, []).append(card)
    order = list("WUBRG") + ["M", "C"]
    label = {**COLOR_NAMES, "M": "Multicolour", "C": "Colourless"}
    return [{"key": k, "label": label[k], "cards": sorted(groups[k], key=lambda c: (c.mana_value, c.name))}
            for k in order if k in groups]


@require_GET
def seat_detail(request, draft_id, seat_number: int):
    seat = _seat(request, draft_id, seat_number)
    picks = list(seat.picks.all())
    try:
        s = services.set_list(seat.draft.set_code)
    except DraftError:
        s = None
    rows = []
    for p in picks:
        top = (p.scores or [])[:3]
        rows.append({"pick": p, "label": f"P{p.pack_number + 1}p{p.pick_number + 1}", "top": top,
                     "agreed": bool(top) and top[0][0] == p.pick,
                     "card": s.card(p.pick) if s else None})
    pool = [p.pick for p in picks]
    return render(request, "drafts/seat_detail.html", {
        "seat": seat, "draft": seat.draft, "rows": rows, "groups": color_groups(pool, s) if s else [],
        "seats": range(seat.draft.seats),
    })


@require_GET
def seat_history_plot(request, draft_id, seat_number: int, fmt: str):
    seat = _seat(request, draft_id, seat_number)
    picks = list(seat.picks.all())
    if not picks:
        raise Http404("no picks yet")
    try:
        s = services.set_list(seat.draft.set_code)
        ratings, _ = services.draftsim_ratings(s)
    except DraftError as exc:
        raise Http404(str(exc))
    fig = draft_history_figure(picks, s, ratings)
    body = figure_bytes(fig, fmt)
    return HttpResponse(body, content_type="image/svg+xml" if fmt == "svg" else "image/png")


@require_GET
def draft_export(request, draft_id):
    draft = get_object_or_404(Draft, pk=draft_id)
    seats = visible_seats(request, draft)
    seat = request.GET.get("seat")
    if seat not in (None, ""):
        if not re.fullmatch(r"[0-9]{1,2}", seat) or not seats.filter(seat=int(seat)).exists():
            return HttpResponse(f"no seat {seat!r} in this draft", status=400, content_type="text/plain")
        seats = seats.filter(seat=int(seat))
    suffix = f"-seat{int(seat) + 1}" if seat not in (None, "") else ""
    return export_download(request, seats.select_related("draft"),
                           f"draft_data.{draft.set_code}.{str(draft.pk)[:8]}{suffix}.csv")


@require_GET
def bots_page(request):
    versions = ModelVersion.objects.filter(kind="draft_bot").order_by("scope", "-version")
    return render(request, "drafts/bots.html", {"versions": versions, "sets": services.draftable_sets()})


@require_GET
def archetype_heatmap(request, set_code: str, fmt: str):
    try:
        s = services.set_list(set_code)
        bot, _ = services.get_bot("archetype", s)
    except DraftError as exc:
        raise Http404(str(exc))
    top = request.GET.get("top") or "60"
    if not re.fullmatch(r"[0-9]{1,4}", top):
        return HttpResponseBadRequest("top is a number of cards, e.g. ?top=60", content_type="text/plain")
    fig = weights_heatmap_figure(bot.weights, bot.cards, bot.archetypes, top=int(top))
    return HttpResponse(figure_bytes(fig, fmt), content_type="image/svg+xml" if fmt == "svg" else "image/png")


@require_GET
def version_loss_plot(request, version_id: int):
    version = get_object_or_404(ModelVersion, pk=version_id, kind="draft_bot")
    history = (version.metrics or {}).get("history")
    if not history:
        raise Http404("this version logged no training history")
    fig = loss_curves_figure(history, f"{version.scope} v{version.version}")
    return HttpResponse(figure_bytes(fig, "svg"), content_type="image/svg+xml")
