"""Who is asking, and what they may read: guest sessions, the data-sharing choice, seat privacy.

Shared by the pages, the API and the exports, so every door to an online pod applies the same
rules: an online pod's seats are private to their drafter (and staff); once the pod is complete and its
people have played their rounds against the bots (drafts.rounds), a bot's seat is public. Simulated and imported drafts are public.
"""
from __future__ import annotations

from drafts.models import Draft, DraftSeat
from drafts.pods.service import consent_of, set_consent
from drafts.rounds import bots_revealed
from plumbing.guests import guest_key  # noqa: F401 - re-exported for the draft pages


def current_consent(request) -> bool | None:
    """The data-sharing choice on file: the account's, or the guest session's (None: not asked yet)."""
    if request.user.is_authenticated:
        return consent_of(request.user)
    return request.session.get("draft_consent")


def remember_consent(request, value: bool | None) -> None:
    """Keep the choice (on the account, or in the guest's session) and apply it to their seats."""
    if value is None:
        return
    if request.user.is_authenticated:
        set_consent(request.user, value)
        return
    request.session["draft_consent"] = value
    if request.session.session_key:
        DraftSeat.objects.filter(user__isnull=True, session_key=request.session.session_key).update(consent=value)


def seat_owner(request, seat: DraftSeat) -> bool:
    if seat.user_id is not None:
        return request.user.is_authenticated and request.user.pk == seat.user_id
    return bool(seat.session_key) and seat.session_key == guest_key(request)


def may_see_seat(request, seat: DraftSeat) -> bool:
    draft = seat.draft
    if draft.kind != "online" or request.user.is_staff or seat_owner(request, seat):
        return True
    # a bot's picks (and so its deck) stay hidden until the pod's people have played their rounds against them
    return draft.status == "complete" and seat.drafter != "human" and bots_revealed(draft)


def visible_seats(request, draft: Draft):
    """The seats of a draft whose picks this request may read (all of them outside online pods)."""
    seats = draft.seat_set.select_related("draft")
    if draft.kind != "online" or request.user.is_staff:
        return seats
    return seats.filter(pk__in=[s.pk for s in seats if may_see_seat(request, s)])


def may_read_deck(deck, request) -> bool:
    """decks.guards: a seat's auto-built deck shows its pool, so it is as private as the seat's picks (the deck
    page and the API answer 404 to everyone else, whatever its id)."""
    if deck.source != "draft":
        return True
    seat = DraftSeat.objects.select_related("draft").filter(deck_id=deck.pk).first()
    return seat is None or may_see_seat(request, seat)
