"""Bring a fresh database to a working site: import whatever real data is still missing.

The steps are the apps' own, registered from their ``AppConfig.ready`` (plumbing.setup): this command runs them
in order and imports no app."""
from django.core.management.base import BaseCommand

from plumbing import setup
from plumbing.progress import ticking

# the bar's estimate for Django's checks (the views, torch): measured by bench/first_run.py on the shared 2-core
# machine, with room for its load
CHECK_SECONDS = 8.0


class Command(BaseCommand):
    help = "Import the cards, sets and deck corpus from MTG_DATA_DIR when they are not in the database yet."

    def check(self, *args, **kwargs):
        """Django's system checks, before ``handle``: they load the URL configuration, whose views import torch
        (``make run``'s migrate skips them, so they run once, here, under a bar)."""
        with ticking("checks: Django's system checks (the views, torch)", expected=CHECK_SECONDS):
            return super().check(*args, **kwargs)

    def add_arguments(self, parser):
        parser.add_argument("--force", action="store_true", help="re-run every import (idempotent)")

    def handle(self, *args, force=False, **opts):
        state = setup.Setup(stdout=self.stdout, stderr=self.stderr, style=self.style, force=force)
        for step in setup.steps():
            step.run(state)
