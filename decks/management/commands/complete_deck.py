"""Complete one deck from the command line with the active models; prints the decklist."""
from __future__ import annotations

from pathlib import Path

from django.core.management.base import BaseCommand, CommandError

from decks.completion.service import (DEFAULT_MODEL, MODELS, CompletionRequestError, get_completer, parse_request,
                                      source_decks)
from decks.core.decklist import Entry, ParsedDeck
from decks.core.export import to_arena, to_mtgo
from decks.completion.models.common import CompletionError
from ml.registry import NoActiveModel


class Command(BaseCommand):
    help = "Complete a partial decklist into a legal 60 + 15 deck (prints Arena or MTGO text)."

    def add_arguments(self, parser):
        source = parser.add_mutually_exclusive_group(required=True)
        source.add_argument("--text", help="a decklist file with the known cards (MTGO, Arena or plain text)")
        source.add_argument("--cards", nargs="+", help='known cards as lines, e.g. "4 Lightning Bolt" "2 Goblin Guide"')
        parser.add_argument("--format", required=True, help="standard, pioneer, modern, legacy, vintage, pauper, premodern")
        parser.add_argument("--model", choices=list(MODELS), default=DEFAULT_MODEL,
                            help="masked (default: nearest tournament decks + masked diffusion) or manamorphosis")
        parser.add_argument("--seed", type=int, default=0)
        parser.add_argument("--sampler", choices=["fast", "full"], default="fast", help="manamorphosis only")
        parser.add_argument("--no-side", action="store_true", help="keep only the sideboard cards given")
        parser.add_argument("--style", choices=["arena", "mtgo"], default="arena")

    def handle(self, *args, **opts):
        if opts["text"]:
            path = Path(opts["text"])
            if not path.exists():
                raise CommandError(f"{path} does not exist.")
            text = path.read_text(encoding="utf-8", errors="replace")
        else:
            text = "\n".join(opts["cards"])
        try:
            req = parse_request(text=text, fmt=opts["format"], generate_side=not opts["no_side"],
                                sampler=opts["sampler"], seed=opts["seed"], model=opts["model"])
            completer = get_completer(req.model)
            if req.model == "masked":
                completion = completer.complete(req.main, req.side, req.format, seed=req.seed,
                                                generate_side=req.generate_side)
            else:
                completion = completer.complete(req.main, req.side, req.format, seed=req.seed, sampler=req.sampler,
                                                generate_side=req.generate_side)
        except CompletionRequestError as exc:
            raise CommandError("Cannot complete this list:\n" + "\n".join(
                (f"  line {e['line']}: " if e.get("line") else "  ") + e["message"]
                + (f" (did you mean {', '.join(e['suggestions'])}?)" if e.get("suggestions") else "")
                for e in exc.errors))
        except (CompletionError, NoActiveModel) as exc:
            raise CommandError(str(exc))
        deck = ParsedDeck([Entry(n, c) for n, c in completion.main], [Entry(n, c) for n, c in completion.side])
        self.stdout.write((to_arena if opts["style"] == "arena" else to_mtgo)(deck))
        self.stderr.write(f"completed in {completion.seconds:.2f}s ({completion.iterations} refinement rounds); "
                          f"generated {sum(c for _, c in completion.generated_main)} main and "
                          f"{sum(c for _, c in completion.generated_side)} sideboard cards")
        for warning in getattr(completion, "warnings", None) or ():
            self.stderr.write(f"warning: {warning}")
        if req.model == "masked":
            for source in source_decks(completer, completion):
                self.stderr.write(f"drew on: {source['event']} ({source['date'] or 'no date'}), deck {source['deck']}, "
                                  f"{100 * source['weight']:.0f}% of the vote")
