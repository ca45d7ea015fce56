"""The project reaches the apps through their AppConfigs: setup_site runs the steps the apps registered
(plumbing.setup), in their order, and the websocket routing is the routes each app names."""
from __future__ import annotations

from io import StringIO

import pytest
from django.core.management import call_command

from mtgsite import routing
from plumbing import setup


def test_the_apps_register_their_setup_steps_in_order():
    assert [s.name for s in setup.steps()] == [
        "cards", "sets", "engine cards: start", "decks", "models", "completion decks", "engine cards", "summary"]


def test_setup_site_runs_every_step_in_order_with_one_state(monkeypatch):
    ran = []

    def recorder(name):
        def run(s: setup.Setup):
            ran.append((name, s.force))
            s.state.setdefault("seen", []).append(name)
        return run

    fake = [setup.Step(s.order, s.name, recorder(s.name)) for s in setup.steps()]
    monkeypatch.setattr(setup, "_steps", fake)
    call_command("setup_site", "--force", stdout=StringIO(), skip_checks=True)
    assert ran == [(s.name, True) for s in setup.steps()]


def test_a_step_registered_twice_runs_once(monkeypatch):
    monkeypatch.setattr(setup, "_steps", [])
    setup.step(20, "b", print)
    setup.step(10, "a", print)
    setup.step(30, "b", repr)
    assert [(s.order, s.name, s.run) for s in setup.steps()] == [(10, "a", print), (30, "b", repr)]


@pytest.mark.parametrize("prefix", ["ws/decks/", "ws/jobs/", "ws/pods/", "ws/games/"])
def test_the_routing_collects_each_apps_websocket_routes(prefix):
    assert any(str(route.pattern).startswith(prefix) for route in routing.websocket_urlpatterns)
    assert len(routing.collect()) == len(routing.websocket_urlpatterns) == 4
