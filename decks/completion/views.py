"""Deck completion pages: the request form and the job page (progress, then the completed deck)."""
from __future__ import annotations

from django import forms
from django.shortcuts import get_object_or_404, redirect, render
from django.views.decorators.http import require_GET, require_http_methods

from decks.analysis import deck_groups
from decks.completion.service import (DEFAULT_MODEL, LIMIT_WORK, MAX_COLLECTION_TEXT, MAX_TEXT, MODELS,
                                      CompletionRequestError, create_job, job_payload, parse_request, user_counts)
from decks.core.decklist import shown_errors
from decks.core.rules import FORMATS
from decks.models import CompletionJob
from decks.tasks import enqueue_completion
from plumbing import limits
from plumbing.guests import guest_key

SIDEBOARD_CHOICES = [("generate", "Generate a sideboard (keeps any sideboard cards you give)"),
                     ("keep", "Keep only my sideboard cards")]


class CompletionForm(forms.Form):
    text = forms.CharField(
        label="Your cards", required=False, max_length=MAX_TEXT,
        widget=forms.Textarea(attrs={"rows": 14, "spellcheck": "false", "autocomplete": "off",
                                     "placeholder": "4 Lightning Bolt\n4 Goblin Guide\n\nSideboard\n2 Skullcrack"}),
        help_text="From one card to a full main deck; MTGO, Arena or plain text. A Sideboard section is optional.")
    format = forms.ChoiceField(label="Format", choices=[(f, f.title()) for f in FORMATS], initial="modern")
    model = forms.ChoiceField(label="Model", choices=list(MODELS.items()), initial=DEFAULT_MODEL, required=False,
                              help_text="The masked model shows how sure it was of each card and the tournament "
                                        "decks it drew on.")
    sideboard = forms.ChoiceField(label="Sideboard", choices=SIDEBOARD_CHOICES, initial="generate",
                                  widget=forms.RadioSelect)
    sampler = forms.ChoiceField(label="Sampler", choices=CompletionJob.SAMPLERS, initial="fast",
                                help_text="Manamorphosis only. fast: 50-step DDIM (about a second); full: "
                                        "1000-step DDPM (slower).")
    seed = forms.IntegerField(label="Seed", min_value=0, max_value=2**31 - 1, initial=0, required=False,
                              help_text="Same cards + same seed = same deck.")
    collection = forms.CharField(
        label="Complete from my collection (optional)", required=False, max_length=MAX_COLLECTION_TEXT,
        widget=forms.Textarea(attrs={"rows": 6, "spellcheck": "false", "autocomplete": "off",
                                     "placeholder": "4 Lightning Bolt\n2 Goblin Guide\n..."}),
        help_text="Paste an Arena or MTGO collection export or 'N Name' lines: only these cards are added, within "
                  "the copies you own (basic lands in any number).")
    collection_file = forms.FileField(label="…or upload it", required=False,
                                      help_text="A .txt or .csv export, UTF-8.")


@require_http_methods(["GET", "POST"])
@limits.limited("completion", LIMIT_WORK)
def completion_form(request):
    errors = []
    if request.method == "POST":
        form = CompletionForm(request.POST, request.FILES)
        if not limits.refused(request) and form.is_valid():
            data = form.cleaned_data
            collection = data["collection"] or None
            upload = data.get("collection_file")
            try:
                if upload is not None:
                    if upload.size > MAX_COLLECTION_TEXT * 4:
                        raise CompletionRequestError([{"line": None, "text": "", "suggestions": [], "message":
                                                       f"The collection file is {upload.size} bytes; the limit is "
                                                       f"{MAX_COLLECTION_TEXT * 4}."}])
                    collection = upload.read()
                req = parse_request(text=data["text"], fmt=data["format"], generate_side=data["sideboard"] == "generate",
                                    sampler=data["sampler"], seed=data["seed"] or 0,
                                    model=data["model"] or DEFAULT_MODEL, collection=collection)
            except CompletionRequestError as exc:
                errors = exc.errors
            else:
                # the key the limits counted this request under (its jobs count against it), then a guest's session so
                # that the deck is in their "My decks": a first visit's session must not change the key its jobs count under
                client = limits.client_of(request).key
                job = create_job(req, owner=request.user, client=client, guest=guest_key(request, create=True))
                enqueue_completion(job)
                return redirect("completion-job", job_id=job.pk)
    else:
        form = CompletionForm()
    return render(request, "decks/completion_form.html", {"form": form, "errors": shown_errors(errors) if errors else None})


@require_GET
def completion_job(request, job_id):
    job = get_object_or_404(CompletionJob, pk=job_id)
    context = {"job": job, "payload": job_payload(job)}
    if job.status == "done" and job.deck is not None:
        groups = deck_groups(job.deck)
        mine = user_counts(job)
        confidence = job.result.get("confidence") or {}
        not_owned = {name: n for name, n in job.result.get("not_owned") or []}
        for board in ("main", "side"):
            for group in groups["boards"][board]:
                for entry in group["cards"]:
                    entry["mine"] = mine.get((board, entry["card"].name), 0)
                    entry["not_owned"] = not_owned.get(entry["card"].name, 0) if board == "main" else 0
                    sure = confidence.get(f"{board}:{entry['card'].name}")
                    if sure is not None and entry["mine"] < entry["count"]:
                        entry["confidence"] = sure
                        entry["confidence_pct"] = round(100 * float(sure))
        context.update({
            "deck": job.deck, "main_groups": groups["boards"]["main"], "side_groups": groups["boards"]["side"],
            "curve": groups["curve"], "curve_total": sum(r["count"] for r in groups["curve"]), "pips": groups["pips"],
            "generated_main": sum(c for _, c in job.result.get("generated_main", [])),
            "generated_side": sum(c for _, c in job.result.get("generated_side", [])),
            "sources": job.result.get("sources") or [], "warnings": job.result.get("warnings") or [],
            "from_collection": job.collection is not None, "missing": job.result.get("missing") or [],
            "missing_table": job.result.get("missing_table") or [], "notes": job.result.get("notes") or [],
            "not_owned_total": sum(not_owned.values()), "archetypes": archetype_tabs(job.result.get("archetypes")),
        })
    return render(request, "decks/completion_job.html", context)


def archetype_tabs(archetypes) -> list[dict]:
    """The archetype completions of a result as the page's tabs: a label from the cards the group's deck adds
    that the others do not (its two most played), its share in percent, its sideboard's size."""
    archetypes = list(archetypes or [])
    tabs = []
    for i, a in enumerate(archetypes):
        others = {name for j, b in enumerate(archetypes) if j != i for name, _ in b.get("main", [])}
        own = sorted(((n, name) for name, n in a.get("generated_main", []) if name not in others), reverse=True)
        label = " / ".join(name for _, name in own[:2]) or f"Archetype {i + 1}"
        tabs.append({**a, "label": label, "share_pct": round(100 * float(a.get("share", 0))),
                     "side_total": sum(n for _, n in a.get("side", []))})
    return tabs
