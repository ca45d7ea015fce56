"""Deck completion pages: the request form and the job page (progress, then the completed deck)."""
from __future__ import annotations

from django import forms
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from decks.analysis import deck_groups
from decks.completion import CompletionRequestError, MAX_TEXT, create_job, job_payload, parse_request, user_counts
from decks.core.rules import FORMATS
from decks.models import CompletionJob

SIDEBOARD_CHOICES = [("generate", "Generate a sideboard (keeps any sideboard cards you give)"),
                     ("keep", "Keep only my sideboard cards")]


class CompletionForm(forms.Form):
    text = forms.CharField(
        label="Your cards", required=False, max_length=MAX_TEXT,
        widget=forms.Textarea(attrs={"rows": 14, "spellcheck": "false", "autocomplete": "off",
                                     "placeholder": "4 Lightning Bolt\n4 Goblin Guide\n\nSideboard\n2 Skullcrack"}),
        help_text="From one card to a full main deck; MTGO, Arena or plain text. A Sideboard section is optional.")
    format = forms.ChoiceField(label="Format", choices=[(f, f.title()) for f in FORMATS], initial="modern")
    sideboard = forms.ChoiceField(label="Sideboard", choices=SIDEBOARD_CHOICES, initial="generate",
                                  widget=forms.RadioSelect)
    sampler = forms.ChoiceField(label="Sampler", choices=CompletionJob.SAMPLERS, initial="fast",
                                help_text="fast: 50-step DDIM (about a second); full: 1000-step DDPM (slower).")
    seed = forms.IntegerField(label="Seed", min_value=0, max_value=2**31 - 1, initial=0, required=False,
                              help_text="Same cards + same seed = same deck.")


@require_http_methods(["GET", "POST"])
def completion_form(request):
    errors = []
    if request.method == "POST":
        form = CompletionForm(request.POST)
        if form.is_valid():
            data = form.cleaned_data
            try:
                req = parse_request(text=data["text"], fmt=data["format"], generate_side=data["sideboard"] == "generate",
                                    sampler=data["sampler"], seed=data["seed"] or 0)
            except CompletionRequestError as exc:
                errors = exc.errors
            else:
                job = create_job(req, owner=request.user)
                return redirect("completion-job", job_id=job.pk)
    else:
        form = CompletionForm()
    return render(request, "decks/completion_form.html", {"form": form, "errors": errors})


@require_GET
def completion_job(request, job_id):
    job = get_object_or_404(CompletionJob, pk=job_id)
    context = {"job": job, "payload": job_payload(job)}
    if job.status == "done" and job.deck is not None:
        groups = deck_groups(job.deck)
        mine = user_counts(job)
        for board in ("main", "side"):
            for group in groups["boards"][board]:
                for entry in group["cards"]:
                    entry["mine"] = mine.get((board, entry["card"].name), 0)
        context.update({
            "deck": job.deck, "main_groups": groups["boards"]["main"], "side_groups": groups["boards"]["side"],
            "curve": groups["curve"], "curve_total": sum(r["count"] for r in groups["curve"]), "pips": groups["pips"],
            "generated_main": sum(c for _, c in job.result.get("generated_main", [])),
            "generated_side": sum(c for _, c in job.result.get("generated_side", [])),
        })
    return render(request, "decks/completion_job.html", context)
