"""The gauntlet's admin pages (staff only): the runs, a form to start one, a live run page.

Anonymous visitors are sent to the login page; signed-in people who are not staff get a 403.
"""
from __future__ import annotations


from django import forms
from django.conf import settings
from django.contrib import messages
from django.http import HttpResponse, JsonResponse
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods, require_POST

from decks.models import Deck
from gameplay.core.matches import roundrobin as core
from gameplay.core.engine.decks import sample_decks
from gameplay.gauntlet import service, tasks
from gameplay.gauntlet.models import GauntletRun
from plumbing.staff import staff_only

SAVED_CHOICES = 40


def _saved_choices():
    decks = Deck.objects.exclude(source="corpus").order_by("-id")[:SAVED_CHOICES]
    return [(str(d.pk), f"{d.title} · {d.main_count} cards · #{d.pk}") for d in decks]


class GauntletForm(forms.Form):
    sample = forms.MultipleChoiceField(label="Sample decks", required=False, widget=forms.CheckboxSelectMultiple)
    saved = forms.MultipleChoiceField(label="Saved decks", required=False, widget=forms.CheckboxSelectMultiple)
    deck_ids = forms.CharField(label="Other saved deck ids", required=False, max_length=500,
                               help_text="comma separated, e.g. 12, 40")
    decklists = forms.CharField(label="Decklists", required=False, max_length=60_000,
                                widget=forms.Textarea(attrs={"rows": 5, "spellcheck": "false"}),
                                help_text="MTGO / Arena text; separate decks with a line of ---")
    games_per_pair = forms.IntegerField(label="Games per pair", min_value=1, max_value=core.MAX_GAMES_PER_PAIR,
                                        initial=4, help_text="even: every seed is played with seats swapped")
    player = forms.CharField(label="Player (both seats)", max_length=60, initial="engine:Medium",
                             widget=forms.TextInput(attrs={"list": "player-choices"}))
    max_decisions = forms.IntegerField(label="Decision cap per game", min_value=1, max_value=100_000, initial=5000,
                                       help_text="a longer game is cut and scored a draw")
    seed = forms.IntegerField(label="Seed", required=False, min_value=0, max_value=2 ** 31 - 1,
                              help_text="empty: a random one")

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["sample"].choices = [(n, n.replace("_", " ")) for n in sorted(sample_decks(settings.MTG_DATA_DIR))]
        self.fields["saved"].choices = _saved_choices()

    def decks(self) -> list[dict]:
        """The chosen decks (raises GauntletError with every problem found)."""
        data = self.cleaned_data
        out = [service.sample_deck(n) for n in data["sample"]]
        ids = list(data["saved"]) + [i.strip() for i in (data["deck_ids"] or "").split(",") if i.strip()]
        out += [service.saved_deck(i) for i in dict.fromkeys(ids)]
        if (data["decklists"] or "").strip():
            out += service.decks_from_text(data["decklists"], default_name="pasted deck")
        return out


@staff_only
@require_http_methods(["GET", "POST"])
def gauntlet_list(request):
    problems, bad_decks = [], {}
    if request.method == "POST":
        form = GauntletForm(request.POST)
        if form.is_valid():
            try:
                run = tasks.start_run(form.decks(), form.cleaned_data["games_per_pair"],
                                               form.cleaned_data["player"], seed=form.cleaned_data["seed"],
                                               max_decisions=form.cleaned_data["max_decisions"], user=request.user)
            except service.GauntletError as exc:
                problems, bad_decks = exc.problems, exc.decks
            else:
                messages.success(request, f"Gauntlet #{run.pk} started: {run.total} games.")
                return redirect("gauntlet-detail", run_id=run.pk)
    else:
        form = GauntletForm(initial={"sample": sorted(sample_decks(settings.MTG_DATA_DIR))})
    runs = GauntletRun.objects.select_related("created_by")[:50]
    status = 400 if request.method == "POST" else 200
    return render(request, "gameplay/gauntlet_list.html", {
        "form": form, "runs": runs, "problems": problems, "bad_decks": bad_decks,
        "players": service.player_choices(), "eager": settings.CELERY_TASK_ALWAYS_EAGER,
    }, status=status)


@staff_only
@require_GET
def gauntlet_detail(request, run_id: int):
    run = get_object_or_404(GauntletRun, pk=run_id)
    results = service.results_of(run) if run.done else None
    return render(request, "gameplay/gauntlet_detail.html", {
        "run": run, "results": results, "cards": (results or {}).get("cards", [])[:40],
        "summary": (results or {}).get("summary"),
        "errors": run.games.filter(status="error").order_by("index")[:20] if run.errors else [],
    })


@staff_only
@require_GET
def gauntlet_progress(request, run_id: int):
    run = get_object_or_404(GauntletRun, pk=run_id)
    return JsonResponse(service.run_payload(run))


@staff_only
@require_GET
def gauntlet_heatmap(request, run_id: int, fmt: str = "svg"):
    run = get_object_or_404(GauntletRun, pk=run_id)
    body = service.heatmap_bytes(run, fmt)
    response = HttpResponse(body, content_type="image/svg+xml" if fmt == "svg" else "image/png")
    response["Cache-Control"] = "no-cache" if not run.finished_or_stopped else "private, max-age=3600"
    return response


@staff_only
@require_GET
def gauntlet_export(request, run_id: int):
    run = get_object_or_404(GauntletRun, pk=run_id)
    response = JsonResponse(service.export(run), json_dumps_params={"indent": 1})
    response["Content-Disposition"] = f'attachment; filename="gauntlet-{run.pk}.json"'
    return response


@staff_only
@require_POST
def gauntlet_cancel(request, run_id: int):
    run = get_object_or_404(GauntletRun, pk=run_id)
    if service.cancel_run(run):
        messages.success(request, "Cancelled: the games not yet started are skipped.")
    else:
        messages.error(request, "This gauntlet is not running.")
    return redirect("gauntlet-detail", run_id=run.pk)


@staff_only
@require_POST
def gauntlet_resume(request, run_id: int):
    run = get_object_or_404(GauntletRun, pk=run_id)
    if tasks.resume_run(run):
        messages.success(request, "The unfinished games were queued again.")
    else:
        messages.error(request, "This gauntlet is not running.")
    return redirect("gauntlet-detail", run_id=run.pk)
