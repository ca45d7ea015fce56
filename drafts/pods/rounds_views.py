"""Play your pod from the pod page: start the next round (a plain form post), then play it on /games/."""
from __future__ import annotations

from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect
from django.views.decorators.http import require_POST

from drafts import rounds
from drafts.access import guest_key
from plumbing import limits


@require_POST
@limits.limited("game_create")
def round_start(request, draft_id):
    """Start the person's next round at the level they chose and open its game; a refusal is shown on the pod
    page (an unknown pod: 404)."""
    if limits.refused(request):
        messages.error(request, "Too many games started: wait a little and try again.")
        return redirect("pod", draft_id=draft_id)
    try:
        row = rounds.start_round(draft_id, request.POST.get("level", ""), user=request.user,
                                 session_key=guest_key(request, create=True))
    except rounds.RoundError as exc:
        if exc.code == 404:
            raise Http404(str(exc))
        messages.error(request, str(exc))
        return redirect("pod", draft_id=draft_id)
    return redirect("game", game_id=row.game_id)
