"""A gauntlet game and an advice search whose Celery worker is killed with ``kill -9`` mid-work (services stack,
a private Redis: tests/faults.py). The game: a fresh worker's sweep finds it without a heartbeat and plays it
again, and the run finishes with every game counted once. The advice: the broker hands its unacknowledged
message to the fresh worker, which searches again and answers, once."""
from __future__ import annotations

import asyncio
import json
import time

import pytest
import websockets
from django.core.cache import cache

from gameplay.gauntlet import service
from gameplay.gauntlet.models import GauntletGame, GauntletRun
from gameplay.gauntlet.tasks import start_run
from gameplay.models import PlayedGame
from gameplay.tasks import _advice_key, enqueue_advice
from tests.faults import daphne, kill_worker, record, wait_until, worker
from tests.gameplay.play_fixtures import game_env, play_to_a_choice  # noqa: F401
from tests.ws import guest_session

pytestmark = [pytest.mark.faults, pytest.mark.services, pytest.mark.django_db(transaction=True), pytest.mark.timeout(300)]


def test_a_gauntlet_game_whose_worker_is_killed_is_played_again_and_counted_once(game_env, private_services,  # noqa: F811
                                                                                 served, tmp_path):
    w = worker(tmp_path)
    served(w)
    run = start_run([service.sample_deck("mono_red_aggro"), service.sample_deck("mono_white_weenie")], 2,
                    "engine:Medium", seed=5)
    game = wait_until(lambda: GauntletGame.objects.filter(run=run, status="running").first(), 120, "a game playing")
    time.sleep(0.5)  # into the game
    assert GauntletGame.objects.get(pk=game.pk).status == "running", "the game ended before the kill: make it longer"
    what, killed_at = kill_worker(w), time.monotonic()

    served(worker(tmp_path, "worker2"))
    row = wait_until(lambda: GauntletRun.objects.filter(pk=run.pk, status__in=("done", "failed")).first(), 180,
                     "the run finishing after the restart")
    recovered = round(time.monotonic() - killed_at, 1)
    games = {g.index: g for g in row.games.all()}
    record(f"gauntlet game: {what} killed mid-game", queued=row.total,
           succeeded_after_retry=int(games[game.index].status == "done" and games[game.index].attempts > 1),
           failed_with_reason=sum(g.status == "error" for g in games.values()),
           stuck=GauntletGame.objects.filter(status="running").count(), counted=row.done, total=row.total,
           attempts={i: g.attempts for i, g in games.items()}, recovered_s=recovered)
    assert (row.status, row.done, row.errors, row.total) == ("done", 2, 0, 2)
    assert games[game.index].attempts == 2 and all(g.status == "done" for g in games.values())
    assert row.results["summary"]["games"]["scored"] == 2  # each game counted once
    assert not GauntletGame.objects.filter(status="running").exists()


def test_an_advice_search_whose_worker_is_killed_is_searched_again_and_answers_once(game_env, private_services,  # noqa: F811
                                                                                    served, tmp_path):
    w = worker(tmp_path)
    served(w)
    owner = guest_session()
    row, view = play_to_a_choice(owner)
    ticket = enqueue_advice(row.pk, view["revision"], algorithm="mcts", seconds=4, simulations=10_000)
    wait_until(lambda: cache.get(_advice_key(ticket)) == 1, 60, "the search starting")
    time.sleep(1.0)  # into the search
    assert PlayedGame.objects.get(pk=row.pk).advice is None
    what, killed_at = kill_worker(w), time.monotonic()

    served(worker(tmp_path, "worker2"))
    wait_until(lambda: cache.get(_advice_key(ticket)) in (2, "answered"), 60, "the message handed out again")
    runs = cache.get(_advice_key(ticket))
    stored = wait_until(lambda: PlayedGame.objects.get(pk=row.pk).advice, 60, "the advice after the restart")
    recovered = round(time.monotonic() - killed_at, 1)
    answered = wait_until(lambda: cache.get(_advice_key(ticket)) == "answered", 10, "the request answered")
    record(f"advice search: {what} killed mid-search", queued=1, succeeded_after_retry=int(bool(stored.get("done"))),
           failed_with_reason=0, stuck=int(not answered), searches=runs, recovered_s=recovered)
    assert runs == 2  # searched again once
    assert stored["done"] and stored["revision"] == view["revision"]
    assert stored["recommendation"]["action"]["key"] in {a["key"] for a in view["actions"]}


class Player:
    """The game page's socket (static/js/live.js): acts on each decision with an id, reconnects with backoff when
    the socket closes and resends the action it has no answer to. Counts the times it heard nothing for STALL
    seconds while it waited for the game (then it asks for a sync, so a stall shows in the counts)."""

    STALL = 5.0

    def __init__(self, base: str, game_id, session_key: str):
        self.url = base.replace("http://", "ws://") + f"/ws/games/{game_id}/"
        self.headers = {"Cookie": f"sessionid={session_key}"}
        self.pending, self.sent, self.acked = None, [], []
        self.reconnects = self.stalls = self.resent = 0
        self.over = False

    async def run(self, actions: int) -> None:
        """Until ``actions`` actions are acknowledged in all (or the game ends)."""
        retry = 0
        while not self.over and len(self.acked) < actions:
            try:
                async with websockets.connect(self.url, origin="http://127.0.0.1", additional_headers=self.headers,
                                              open_timeout=10) as ws:
                    retry = 0
                    if self.pending:
                        self.resent += 1
                        await ws.send(json.dumps(self.pending))
                    if await self._listen(ws, actions):
                        return
            except (OSError, websockets.exceptions.WebSocketException, asyncio.TimeoutError):
                pass
            self.reconnects += 1
            assert self.reconnects < 60, "the game never came back"
            await asyncio.sleep(min(5.0, 0.25 * 2 ** retry))
            retry += 1

    async def _listen(self, ws, actions: int) -> bool:
        while True:
            try:
                msg = json.loads(await asyncio.wait_for(ws.recv(), timeout=self.STALL))
            except asyncio.TimeoutError:
                self.stalls += 1
                assert self.stalls <= 6, f"the game says nothing (action {self.pending} unanswered)"
                await ws.send(json.dumps({"v": 1, "action": "sync"}))
                continue
            if msg["type"] == "acted" and self.pending and msg["client_action_id"] == self.pending["client_action_id"]:
                self.acked.append(self.pending["client_action_id"])
                self.pending = None
                if len(self.acked) >= actions:
                    return True
            elif msg["type"] == "error" and self.pending and msg.get("client_action_id") == self.pending[
                    "client_action_id"]:
                self.pending = None  # refused (stale): nothing was applied; the next view decides again
            elif msg["type"] == "game":
                if msg["status"] != "playing":
                    self.over = True
                    return True
                if msg["your_decision"] and self.pending is None:
                    self.pending = {"v": 1, "action": "act", "key": msg["actions"][-1]["key"],
                                    "revision": msg["revision"], "client_action_id": f"a{len(self.sent)}"}
                    self.sent.append(self.pending["client_action_id"])
                    await ws.send(json.dumps(self.pending))


def test_redis_killed_and_back_empty_mid_game_loses_and_duplicates_no_action(game_env, private_services,  # noqa: F811
                                                                             served, tmp_path):
    redis = private_services
    web = served(daphne(tmp_path))
    owner = guest_session()
    row, _ = play_to_a_choice(owner)
    player = Player(f"http://127.0.0.1:{web.port}", row.pk, owner)

    async def scenario():
        playing = asyncio.ensure_future(player.run(actions=20))
        while len(player.acked) < 8 and not playing.done():
            await asyncio.sleep(0.02)
        redis.restart(down_for=1.0)  # mid-game, the socket open (the client waits for the server meanwhile)
        await playing

    asyncio.run(scenario())
    game = PlayedGame.objects.get(pk=row.pk)
    ids = [entry["id"] for entry in game.log if entry.get("id")]
    lost = sum(1 for cid in player.acked if cid not in ids)
    duplicated = len(ids) - len(set(ids))
    record("game: Redis killed and restarted empty mid-game", actions_acked=len(player.acked),
           lost_actions=lost, duplicated_actions=duplicated, unknown_actions=len(set(ids) - set(player.sent)),
           reconnects=player.reconnects, stalls=player.stalls, resent_actions=player.resent)
    assert len(player.acked) == 20 or player.over
    assert lost == 0 and duplicated == 0 and set(ids) <= set(player.sent)
    assert player.stalls == 0, "a socket the server no longer sent to"
