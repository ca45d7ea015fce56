"""Pages of online drafting: the lobby, a pod (lobby, drafting, done), deck building, my drafts,
sign-up with the data-sharing choice. The live part runs over ws/pods/<id>/ (drafts.pods.consumers)."""
from __future__ import annotations

import json

from django import forms
from django.contrib import messages
from django.contrib.auth import login
from django.contrib.auth.forms import UserCreationForm
from django.contrib.admin.views.decorators import staff_member_required
from django.db import transaction
from django.http import Http404, HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.urls import reverse
from django.utils.http import url_has_allowed_host_and_scheme
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from decks.core.decklist import Entry, ParsedDeck
from decks.core.export import to_arena, to_mtgo
from decks.forms import saved_by
from decks.services import parsed_from_deck, save_parsed_deck
from drafts.access import current_consent, guest_key, remember_consent, seat_owner
from drafts.core.cards import DraftError
from drafts.core.deckbuild import BASIC_FOR_COLOR, build_deck, check_build
from drafts.core.protocol import card_facts
from drafts.models import Draft, DraftSeat
from drafts import rounds
from drafts.pods import service, tasks
from drafts.services import draftsim_ratings, set_choices, set_list
from drafts.views import export_download
from plumbing import limits

CONSENT_CHOICES = [("yes", "Yes: include my drafts (picks, packs, timing) in the training data"),
                   ("no", "No: keep my drafts out of the training data")]


def consent_field() -> forms.ChoiceField:
    """The data-sharing question, asked the same way at sign-up, when opening and when joining a pod."""
    return forms.ChoiceField(label="Share my drafts to train the bots?", choices=CONSENT_CHOICES,
                             widget=forms.RadioSelect)


class ConsentMixin:
    """Asks the data-sharing question only while the person has not answered it."""

    def __init__(self, *args, ask_consent=True, **kwargs):
        super().__init__(*args, **kwargs)
        if ask_consent:
            self.fields["consent"] = consent_field()


def _consent_value(raw) -> bool | None:
    return {"yes": True, "no": False}.get(raw)


class PodForm(ConsentMixin, forms.Form):
    set_code = forms.ChoiceField(label="Set or cube")
    seats = forms.IntegerField(label="Seats", min_value=2, max_value=8, initial=8)
    bot = forms.ChoiceField(label="Bots in empty seats", initial="draftsim",
                            choices=[("draftsim", "DraftsimBot"), ("archetype", "ArchetypeBot"), ("neural", "Neural bot")])
    pick_timer = forms.TypedChoiceField(label="Pick timer", coerce=int, choices=Draft.TIMERS, initial=0)
    display_name = forms.CharField(label="Your name at the table", max_length=40)

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["set_code"].choices = set_choices()


class JoinForm(ConsentMixin, forms.Form):
    display_name = forms.CharField(label="Your name at the table", max_length=40)


def _default_name(request) -> str:
    return request.user.get_username()[:40] if request.user.is_authenticated else request.session.get("guest_name", "")


@require_http_methods(["GET", "POST"])
@limits.limited("pod_create")
def play(request):
    """Create a pod, or join one of the open ones."""
    ask = current_consent(request) is None
    error = None
    if request.method == "POST":
        form = PodForm(request.POST, ask_consent=ask)
        if not limits.refused(request) and form.is_valid():
            d = form.cleaned_data
            consent = _consent_value(d.get("consent")) if ask else current_consent(request)
            try:
                draft, _ = service.create_pod(d["set_code"], d["seats"], d["bot"], d["pick_timer"], d["display_name"],
                                             user=request.user, session_key=guest_key(request, create=True),
                                             consent=consent)
            except DraftError as exc:
                error = str(exc)
            else:
                remember_consent(request, consent)
                request.session["guest_name"] = d["display_name"]
                return redirect("pod", draft_id=draft.pk)
    else:
        form = PodForm(initial={"set_code": "BLB", "display_name": _default_name(request)}, ask_consent=ask)
    open_pods = Draft.objects.filter(kind="online", status="open").order_by("-created")[:20]
    mine = _my_seats(request).filter(draft__status__in=["open", "drafting"]).select_related("draft")[:20]
    return render(request, "drafts/play.html", {"form": form, "error": error, "open_pods": open_pods, "mine": mine})


def _my_seats(request):
    if request.user.is_authenticated:
        return DraftSeat.objects.filter(user=request.user, drafter="human")
    key = guest_key(request)
    return DraftSeat.objects.filter(user__isnull=True, session_key=key, drafter="human") if key else DraftSeat.objects.none()


def _online(draft_id) -> Draft:
    return get_object_or_404(Draft, pk=draft_id, kind="online")


@require_GET
def pod_page(request, draft_id):
    draft = _online(draft_id)
    seat = service.seat_of(draft, request.user, guest_key(request))
    ask = current_consent(request) is None
    form = JoinForm(initial={"display_name": _default_name(request)}, ask_consent=ask)
    status, view = service.snapshot(draft.pk, seat.seat if seat else None)
    return render(request, "drafts/pod.html", {
        "draft": draft, "seat": seat, "form": form, "status": status, "play": rounds.summary(draft, seat),
        "initial": {"status": status, "view": view},
        "ws_path": f"/ws/pods/{draft.pk}/", "is_host": seat is not None and seat.seat == draft.host_seat,
    })


@require_POST
def pod_join(request, draft_id):
    ask = current_consent(request) is None
    form = JoinForm(request.POST, ask_consent=ask)
    if not form.is_valid():
        messages.error(request, "Enter a display name" + (" and choose whether to share your drafts." if ask else "."))
        return redirect("pod", draft_id=draft_id)
    consent = _consent_value(form.cleaned_data.get("consent")) if ask else current_consent(request)
    try:
        _, outcome = service.join_pod(draft_id, form.cleaned_data["display_name"], user=request.user,
                                     session_key=guest_key(request, create=True), consent=consent)
    except service.PodError as exc:
        if exc.code == 404:
            raise Http404(str(exc))
        messages.error(request, str(exc))
        return redirect("pod", draft_id=draft_id)
    remember_consent(request, consent)
    request.session["guest_name"] = form.cleaned_data["display_name"]
    tasks.publish_outcome(outcome)
    return redirect("pod", draft_id=draft_id)


@require_POST
def pod_leave(request, draft_id):
    try:
        tasks.publish_outcome(service.leave_pod(draft_id, request.user, guest_key(request)))
    except service.PodError as exc:
        messages.error(request, str(exc))
        return redirect("pod", draft_id=draft_id)
    return redirect("play")


@require_POST
def pod_start(request, draft_id):
    """Start from a plain form post (the page normally starts over the socket)."""
    try:
        tasks.publish_outcome(service.start_pod(draft_id, request.user, guest_key(request)))
    except service.PodError as exc:
        if exc.code == 404:
            raise Http404(str(exc))
        messages.error(request, str(exc))
    return redirect("pod", draft_id=draft_id)


# --- deck building ------------------------------------------------------------------------------------

def _owned_seat(request, draft_id, seat_number) -> DraftSeat:
    seat = get_object_or_404(DraftSeat.objects.select_related("draft", "deck"), draft_id=draft_id, seat=seat_number)
    if not seat_owner(request, seat):
        raise Http404("this is not your seat")
    return seat


def _pool_and_set(seat: DraftSeat):
    s = set_list(seat.draft.set_code)
    return [p.pick for p in seat.picks.all()], s


def _split_lands(main, side) -> dict:
    lands = {b: 0 for b in BASIC_FOR_COLOR.values()}
    for name, count in main:
        if name in lands:
            lands[name] += count
    return {"main": [[n, c] for n, c in main if n not in lands], "side": [[n, c] for n, c in side if n not in lands],
            "lands": lands}


def _builder_state(seat: DraftSeat, pool, s) -> dict:
    """The builder's data: card facts of the pool, the auto-build and the deck to start from (the
    saved one when there is one)."""
    ratings, _ = draftsim_ratings(s)
    built = build_deck(pool, s, ratings=ratings)
    auto = {**_split_lands(built.main, built.side), "notes": built.notes}
    current = auto
    if seat.deck_id:
        parsed = parsed_from_deck(seat.deck)
        current = _split_lands([(e.name, e.count) for e in parsed.main], [(e.name, e.count) for e in parsed.side])
    unplayable, playable = rounds.builder_engine(pool, s, ratings)  # Play your pod: the swap the builder offers
    return {"cards": {name: card_facts(s, name) for name in dict.fromkeys(pool)}, "auto": auto, "current": current,
            "unplayable": unplayable, "playable": playable}


@require_http_methods(["GET", "POST"])
def deck_builder(request, draft_id, seat_number: int):
    seat = _owned_seat(request, draft_id, seat_number)
    if seat.draft.status != "complete":
        return redirect("pod", draft_id=draft_id) if seat.draft.kind == "online" else redirect("draft-detail", draft_id)
    try:
        pool, s = _pool_and_set(seat)
    except DraftError as exc:
        raise Http404(str(exc))
    if request.method == "POST":
        return _save_build(request, seat, pool, s)
    state = _builder_state(seat, pool, s)
    return render(request, "drafts/deck_builder.html", {
        "seat": seat, "draft": seat.draft, "state": state,
        "save_url": reverse("deck-builder", args=[draft_id, seat_number]),
    })


def _parse_build(request):
    try:
        body = json.loads(request.body or b"")
    except ValueError:
        raise ValueError("send a JSON object: {\"main\": [[name, count], ...], \"side\": [...], \"lands\": {...}}")
    if not isinstance(body, dict):
        raise ValueError("the body must be a JSON object")

    def pairs(key):
        value = body.get(key, [])
        if not isinstance(value, list) or not all(isinstance(p, list) and len(p) == 2 and isinstance(p[0], str)
                                                  for p in value):
            raise ValueError(f"'{key}' must be a list of [name, count] pairs")
        return [(p[0], p[1]) for p in value]

    lands = body.get("lands", {})
    if not isinstance(lands, dict):
        raise ValueError("'lands' must map basic land names to counts")
    main = pairs("main") + [(n, c) for n, c in lands.items() if c]
    return main, pairs("side"), str(body.get("format") or "")


def _save_build(request, seat, pool, s):
    try:
        main, side, fmt = _parse_build(request)
        warnings = check_build(pool, main, side)
    except ValueError as exc:
        return JsonResponse({"error": str(exc)}, status=400)
    parsed = ParsedDeck(main=[Entry(n, c) for n, c in main if c], side=[Entry(n, c) for n, c in side if c],
                        name=f"{seat.draft.set_code} draft deck ({seat.display_name or 'seat ' + str(seat.seat + 1)})")
    if fmt in ("arena", "mtgo"):  # export only: nothing is stored
        text = to_arena(parsed) if fmt == "arena" else to_mtgo(parsed)
        return JsonResponse({"text": text, "warnings": warnings})
    with transaction.atomic():
        old = seat.deck
        deck = save_parsed_deck(parsed, fmt="", source="draft", **saved_by(request))
        seat.deck = deck
        seat.save(update_fields=["deck"])
        if old is not None and old.source == "draft":
            old.delete()
    return JsonResponse({"deck": deck.pk, "deck_url": reverse("deck-detail", args=[deck.pk]), "warnings": warnings})


# --- my drafts, consent, data --------------------------------------------------------------------------

@require_GET
def my_drafts(request):
    seats = _my_seats(request).select_related("draft", "deck").order_by("-draft__created")
    return render(request, "drafts/my_drafts.html", {"seats": seats, "consent": current_consent(request),
                                                     "choices": CONSENT_CHOICES})


@require_GET
def my_drafts_export(request):
    seats = _my_seats(request).filter(draft__status="complete").select_related("draft")
    codes = sorted(set(seats.values_list("draft__set_code", flat=True)))
    code = request.GET.get("set") or (codes[0] if codes else "")
    if not codes:
        return HttpResponse("You have no finished drafts yet.", status=404, content_type="text/plain")
    if code not in codes:
        return HttpResponse(f"no drafts of {code!r}; you have {', '.join(codes)}", status=400, content_type="text/plain")
    return export_download(request, seats.filter(draft__set_code=code), f"draft_data_public.{code}.my_drafts.csv")


@require_POST
def my_draft_delete(request, seat_id: int):
    """Delete my picks of one draft, and the games of my rounds. Others' seats stay (the pod is theirs too); an online pod with
    no other person left is deleted whole."""
    seat = get_object_or_404(_my_seats(request), pk=seat_id)
    draft = seat.draft
    if draft.status == "drafting":
        messages.error(request, "Finish (or wait out) the draft before deleting it.")
        return redirect("my-drafts")
    with transaction.atomic():
        rounds.forget([seat])  # the games of its rounds go with the picks
        others = draft.seat_set.filter(drafter="human").exclude(pk=seat.pk).exists()
        if others:
            seat.picks.all().delete()
            if seat.deck is not None:
                seat.deck.delete()
                seat.deck = None
            seat.user, seat.session_key, seat.display_name, seat.consent = None, "", "(deleted)", False
            seat.drafter = "deleted"
            seat.save()
        else:
            draft.delete()
    messages.success(request, "Your draft was deleted.")
    return redirect("my-drafts")


def _back(request, default: str):
    """Redirect to the form's ``next`` when it is a page of this site, else to ``default`` (never elsewhere)."""
    target = request.POST.get("next") or ""
    if url_has_allowed_host_and_scheme(target, allowed_hosts={request.get_host()}, require_https=request.is_secure()):
        return redirect(target)
    return redirect(default)


@require_POST
def consent_view(request):
    value = _consent_value(request.POST.get("consent"))
    if value is None:
        messages.error(request, "Choose yes or no.")
    else:
        remember_consent(request, value)
        messages.success(request, "Saved: your drafts " + ("will" if value else "will not") + " be used to train the bots.")
    return _back(request, "my-drafts")


@staff_member_required
@require_GET
def consented_export(request):
    """The consented data set: the picks of people who opted in, one set (or all), 17Lands layout."""
    code = (request.GET.get("set") or "").upper().replace("\x00", "")  # PostgreSQL refuses NUL
    return export_download(request, service.consented_seats(code).select_related("draft"),
                           f"draft_data_consented.{code or 'ALL'}.csv")


class SignupForm(UserCreationForm):
    consent = consent_field()


@require_http_methods(["GET", "POST"])
@limits.limited("signup")
def signup(request):
    if request.method == "POST":
        form = SignupForm(request.POST)
        if not limits.refused(request) and form.is_valid():
            user = form.save()
            service.set_consent(user, form.cleaned_data["consent"] == "yes")
            login(request, user, backend="django.contrib.auth.backends.ModelBackend")
            return _back(request, "play")
    else:
        form = SignupForm()
    return render(request, "registration/signup.html", {"form": form, "next": request.GET.get("next", "")})
