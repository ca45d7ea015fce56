"""Pages of playing against the AI: the new-game form with your games (/games/) and a game (/games/<id>/).

The live part runs over ws/games/<id>/ (gameplay.consumers); the page is rendered with the same
view the socket sends (built from the person's observation only).
"""
from __future__ import annotations

import re

from django import forms
from django.contrib import messages
from django.http import Http404
from django.shortcuts import redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from plumbing import limits
from plumbing.guests import guest_key
from gameplay.play import PlayError, choice, session
from gameplay.models import PlayedGame

FIRST_CHOICES = [("random", "Random"), ("you", "You play first"), ("ai", "The AI plays first")]


class NewGameForm(forms.Form):
    deck = forms.ChoiceField(label="Your deck")
    deck_number = forms.IntegerField(label="…or a saved deck's number (from /decks/<number>/)", required=False,
                                     min_value=1)
    ai_deck = forms.ChoiceField(label="The AI's deck")
    ai_deck_number = forms.IntegerField(label="…or a saved deck's number for the AI", required=False, min_value=1)
    opponent = forms.ChoiceField(label="Opponent", initial="engine:Medium")
    first = forms.ChoiceField(label="Who plays first", choices=FIRST_CHOICES, initial="random")

    def __init__(self, *args, user=None, **kwargs):
        super().__init__(*args, **kwargs)
        decks = choice.deck_choices(user)
        self.fields["deck"].choices = decks
        self.fields["ai_deck"].choices = decks
        self.fields["opponent"].choices = choice.opponent_choices()
        samples = [spec for spec, _ in decks if spec.startswith("sample:")]
        if samples:
            self.fields["deck"].initial = samples[0]
            self.fields["ai_deck"].initial = samples[1] if len(samples) > 1 else samples[0]

    def specs(self) -> tuple[str, str]:
        d = self.cleaned_data
        mine = f"deck:{d['deck_number']}" if d.get("deck_number") else d["deck"]
        theirs = f"deck:{d['ai_deck_number']}" if d.get("ai_deck_number") else d["ai_deck"]
        return mine, theirs


def my_games(request):
    if request.user.is_authenticated:
        return PlayedGame.objects.filter(owner=request.user)
    key = guest_key(request)
    return PlayedGame.objects.filter(owner__isnull=True, session_key=key) if key else PlayedGame.objects.none()


@require_http_methods(["GET", "POST"])
@limits.limited("game_create")
def games(request):
    """Start a game against the AI; list your games."""
    problems, error = [], None
    if request.method == "POST":
        form = NewGameForm(request.POST, user=request.user)
        if not limits.refused(request) and form.is_valid():
            mine, theirs = form.specs()
            try:
                row, _ = session.create_game(mine, theirs, form.cleaned_data["opponent"], first=form.cleaned_data["first"],
                                             user=request.user, session_key=guest_key(request, create=True))
            except choice.DeckProblem as exc:
                problems = exc.problems
                form.add_error(None, "These decks cannot be played: the rules engine does not know or does not "
                                     "fully support some cards (listed below).")
            except PlayError as exc:
                error = str(exc)
                form.add_error(None, error)
            else:
                return redirect("game", game_id=row.pk)
    else:
        # "Play this deck" on a deck page links here with ?deck=<number>.
        wanted = request.GET.get("deck", "")
        number = re.fullmatch(r"[0-9]{1,18}", wanted)
        form = NewGameForm(user=request.user, initial={"deck_number": int(wanted)} if number else None)
    rows = my_games(request).only("id", "human_deck_name", "ai_deck_name", "opponent", "status", "result", "turn",
                                  "created")[:20]
    return render(request, "gameplay/games.html", {"form": form, "problems": problems, "games": rows},
                  status=400 if (problems or error or form.errors) and request.method == "POST" else 200)


@require_GET
def game_page(request, game_id):
    row = PlayedGame.objects.filter(pk=game_id).first()
    if row is None or not session.owns(row, request.user, guest_key(request)):
        raise Http404("no such game (or it is not yours)")
    try:
        view = session.view_of(row)
    except PlayError as exc:
        view = None
        error = str(exc)
    else:
        error = None
    return render(request, "gameplay/game.html", {
        "game": row, "initial": view, "error": error, "ws_path": f"/ws/games/{row.pk}/",
        "levels": choice.advice_levels(), "algorithms": choice.search_algorithms(),
    })


@require_POST
def concede_page(request, game_id):
    """Concede a game from its page or from the games list (a game left unfinished), then show it: its final board
    and the link to its review. Not yours or unknown: 404; a finished game is shown as it is; nothing is written
    on a refusal."""
    row = PlayedGame.objects.filter(pk=game_id).first()
    if row is None or not session.owns(row, request.user, guest_key(request)):
        raise Http404("no such game (or it is not yours)")
    try:
        outcome = session.concede(row.pk, row.human_seat)
    except PlayError as exc:  # over already (409), or the engine failed: the game is shown as it is, with why
        messages.error(request, f"The game could not be conceded: {exc}")
    else:
        session.publish_sync(outcome)
    return redirect("game", game_id=row.pk)
