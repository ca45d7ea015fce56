"""Simulate pods of bots and store every pick (and each seat's auto-built deck)."""
import time

from django.core.management.base import BaseCommand

from plumbing.progress import progress
from drafts.management.common import DraftErrorsAsCommandErrors
from drafts.services import BOT_NAMES, simulate_draft


class Command(BaseCommand):
    help = "Simulate N pods with the chosen bots; the logs are stored like any draft."

    def add_arguments(self, parser):
        parser.add_argument("--set", dest="set_code", required=True)
        parser.add_argument("--pods", type=int, default=1)
        parser.add_argument("--bots", default="draftsim",
                            help=f"one bot for every seat, or one per seat, comma separated ({', '.join(BOT_NAMES)})")
        parser.add_argument("--seats", type=int, default=8)
        parser.add_argument("--seed", type=int, default=None, help="seed of the first pod (pod i uses seed+i)")
        parser.add_argument("--no-decks", action="store_true", help="skip deck building")

    def handle(self, *args, set_code, pods, bots, seats, seed, no_decks, **opts):
        names = [b.strip() for b in bots.split(",") if b.strip()]
        if len(names) == 1:
            names = names * seats
        started = time.perf_counter()
        drafts = []
        with DraftErrorsAsCommandErrors():
            for i in progress(range(pods), desc="pods", unit="pod"):
                drafts.append(simulate_draft(set_code, names, seed=None if seed is None else seed + i,
                                             build_decks=not no_decks))
        elapsed = time.perf_counter() - started
        for d in drafts[:10]:
            self.stdout.write(f"draft {d.id} ({d.set_code}, seed {d.seed})")
        self.stdout.write(self.style.SUCCESS(f"{len(drafts)} pods of {len(names)} seats simulated and stored "
                                             f"in {elapsed:.1f}s ({elapsed / max(len(drafts), 1):.2f}s per pod)"))
