"""The abuse limits (plumbing.limits): the sliding window and its Retry-After, who the client is, in-flight caps,
and every limited API endpoint, page and socket answering 429 with Retry-After once its quota is spent.

The suite runs with the limits off (tests/isolation.py); the ``limits_on`` fixture (tests/limits.py) turns them
on with a clock of its own.
"""
from __future__ import annotations

import asyncio

import pytest
from django.test import Client as DjangoClient
from hypothesis import given
from hypothesis import strategies as st

from plumbing import limits
from plumbing.limits import Client, Rate, Refused, parse_rate, sliding_wait
from tests.limits import turn_on


@pytest.fixture
def limits_on(settings, monkeypatch):
    return turn_on(settings, monkeypatch)


# --- rates and the sliding window ---------------------------------------------------------------------------

@pytest.mark.parametrize("text,count,seconds,describe", [
    ("10/min", 10, 60, "10 per minute"), ("5/s", 5, 1, "5 per second"), ("3/10s", 3, 10, "3 per 10 seconds"),
    ("20/hour", 20, 3600, "20 per hour"), ("100/day", 100, 86400, "100 per day"), ("2/ 5 minutes", 2, 300,
                                                                                    "2 per 5 minutes")])
def test_rates_parse_and_read_back(text, count, seconds, describe):
    rate = parse_rate(text)
    assert (rate.count, rate.seconds, rate.describe()) == (count, seconds, describe)


@pytest.mark.parametrize("text", [None, "", "off", "OFF", "0"])
def test_off_is_no_limit(text):
    assert parse_rate(text) is None


@pytest.mark.parametrize("text", ["ten/min", "10/fortnight", "0/min", "10", "-1/min"])
def test_bad_rates_are_refused_with_the_syntax(text):
    with pytest.raises(ValueError, match="N/period"):
        parse_rate(text)


def test_sliding_window_examples():
    assert sliding_wait(0, 3, 3, 60, 10) == 0  # the third of three
    assert sliding_wait(0, 4, 3, 60, 10) == pytest.approx(50 + 20)  # next window, once a third of it has passed
    assert sliding_wait(6, 1, 3, 60, 0) == pytest.approx(40)  # the previous window's 6 must fade to 2
    assert sliding_wait(3, 1, 3, 60, 30) == 0  # 3 * 0.5 + 1 = 2.5


def _estimate_after(previous, admitted, period, elapsed, t):
    """The window's estimate for one more request ``t`` seconds later (nothing else admitted)."""
    at = elapsed + t
    if at < period:
        return previous * (1 - at / period) + admitted + 1
    into_next = at - period
    return (admitted * (1 - into_next / period) if into_next < period else 0) + 1


@given(previous=st.integers(0, 40), admitted=st.integers(0, 20), limit=st.integers(1, 20),
       period=st.sampled_from([1, 10, 60, 3600]), elapsed_share=st.floats(0, 0.999))
def test_retry_after_is_exactly_when_a_request_fits_again(previous, admitted, limit, period, elapsed_share):
    admitted = min(admitted, limit)  # a refused request is not counted: never more than the limit in a window
    elapsed = elapsed_share * period
    wait = sliding_wait(previous, admitted + 1, limit, period, elapsed)
    if wait == 0:
        assert _estimate_after(previous, admitted, period, elapsed, 0) <= limit + 1e-9
        return
    assert _estimate_after(previous, admitted, period, elapsed, wait) <= limit + 1e-6
    if wait > 1e-3:
        assert _estimate_after(previous, admitted, period, elapsed, wait - 1e-3) > limit


def test_hit_counts_admitted_requests_only(limits_on):
    _, clock = limits_on
    rate = Rate(3, 60, "3/min")
    start = clock()
    clock.now = (start // 60) * 60 + 10  # 10 s into a window
    assert [limits.hit("t", "a", rate) for _ in range(3)] == [0, 0, 0]
    waits = [limits.hit("t", "a", rate) for _ in range(5)]  # refused, and not counted: the wait does not grow
    assert all(w == pytest.approx(50 + 20) for w in waits)
    assert limits.hit("t", "b", rate) == 0  # another bucket
    clock.advance(69)
    assert limits.hit("t", "a", rate) > 0
    clock.advance(1.5)
    assert limits.hit("t", "a", rate) == 0


# --- who is asking ------------------------------------------------------------------------------------------

class _Request:
    def __init__(self, user=None, session_key=None, addr="203.0.113.5", forwarded=None):
        self.user = user
        self.session = type("S", (), {"session_key": session_key})()
        self.META = {"REMOTE_ADDR": addr, **({"HTTP_X_FORWARDED_FOR": forwarded} if forwarded else {})}


class _User:
    is_authenticated = True
    pk = 7


def test_the_client_is_the_account_else_the_guest_session_else_the_address(settings):
    settings.MTG_LIMITS = {}
    assert limits.client_of(_Request(_User(), "s1")) == Client("user:7")
    assert limits.client_of(_Request(None, "s1")) == Client("guest:s1", "ip:203.0.113.5")
    assert limits.client_of(_Request()) == Client("ip:203.0.113.5")
    assert limits.client_of(_Request(addr="2001:db8:1:2:3:4:5:6")) == Client("ip:2001:db8:1:2::/64")
    assert limits.client_of(_Request(addr="::ffff:198.51.100.1")) == Client("ip:198.51.100.1")
    assert limits.client_of(_Request(addr="")).key == "ip:unknown"


def test_x_forwarded_for_is_read_only_with_forwarded_hops(settings):
    request = _Request(addr="10.0.0.1", forwarded="198.51.100.9, 192.0.2.4")
    settings.MTG_LIMITS = {}
    assert limits.client_of(request).key == "ip:10.0.0.1"  # a client may send any X-Forwarded-For
    settings.MTG_LIMITS = {"forwarded_hops": "1"}
    assert limits.client_of(request).key == "ip:192.0.2.4"  # what our one proxy saw
    settings.MTG_LIMITS = {"forwarded_hops": "2"}
    assert limits.client_of(request).key == "ip:198.51.100.9"


def test_a_socket_client_comes_from_its_scope(settings):
    settings.MTG_LIMITS = {}
    scope = {"user": None, "session": type("S", (), {"session_key": "k"})(), "client": ["192.0.2.8", 5000]}
    assert limits.client_of_socket(scope) == Client("guest:k", "ip:192.0.2.8")
    assert limits.client_of_socket({"client": None}) == Client("ip:unknown")


# --- checks, caps, refusals ----------------------------------------------------------------------------------

def test_check_refuses_with_what_limit_and_when(limits_on):
    set_limits, _ = limits_on
    set_limits(advice="2/min")
    client = Client("ip:192.0.2.1")
    limits.check("advice", client)
    limits.check("advice", client)
    with pytest.raises(Refused) as refused:
        limits.check("advice", client)
    body = refused.value.body()
    assert body["limit"] == "advice" and body["rate"] == "2/min" and body["retry_after"] >= 1
    assert refused.value.status == 429
    assert "at most 2 per minute" in body["message"] and f"{body['retry_after']} s" in body["message"]


def test_limits_off_count_nothing(limits_on):
    set_limits, _ = limits_on
    set_limits(advice="1/min", enabled="0")
    for _ in range(5):
        limits.check("advice", Client("ip:192.0.2.1"))
    set_limits(enabled="1")
    limits.check("advice", Client("ip:192.0.2.1"))  # nothing was counted while off


def test_in_flight_cap_holds_while_the_work_runs(limits_on):
    set_limits, _ = limits_on
    set_limits(advice="100/min", advice_concurrent="1")
    client = Client("user:1")
    with limits.admitted("advice", client):
        with pytest.raises(Refused) as refused:
            with limits.admitted("advice", client):
                pass
        assert refused.value.limit == "advice_concurrent" and refused.value.retry_after == 5
        with limits.admitted("advice", Client("user:2")):  # someone else
            pass
    with limits.admitted("advice", client):  # given back
        pass
    with pytest.raises(ZeroDivisionError), limits.admitted("advice", client):
        1 / 0
    with limits.admitted("advice", client):  # given back after a failure too
        pass


def test_with_the_cache_down_requests_are_admitted_not_failed(limits_on, monkeypatch, caplog):
    set_limits, _ = limits_on
    set_limits(advice="1/min", advice_concurrent="1")

    class Down:
        def __getattr__(self, name):
            def fail(*args, **kwargs):
                raise ConnectionError("redis is down")
            return fail

    monkeypatch.setattr(limits, "cache", Down())
    for _ in range(3):
        with limits.admitted("advice", Client("user:1")):
            pass
    assert "the cache is unavailable" in caplog.text


def test_guests_of_one_address_share_a_bucket(limits_on):
    set_limits, _ = limits_on
    set_limits(completion="1/min", guest_ip_factor="2")
    for session in ("s1", "s2"):
        limits.check("completion", Client(f"guest:{session}", "ip:192.0.2.50"))
    with pytest.raises(Refused) as refused:
        limits.check("completion", Client("guest:s3", "ip:192.0.2.50"))
    assert "network's guests" in refused.value.message
    limits.check("completion", Client("guest:s4", "ip:192.0.2.51"))  # another address
    limits.check("completion", Client("user:9"))  # an account is its own client


def test_a_guest_refused_by_its_own_rate_gives_the_shared_count_back(limits_on):
    set_limits, _ = limits_on
    set_limits(completion="1/min", guest_ip_factor="2")
    guest = Client("guest:s1", "ip:192.0.2.60")
    limits.check("completion", guest)
    for _ in range(5):
        with pytest.raises(Refused):
            limits.check("completion", guest)
    limits.check("completion", Client("guest:s2", "ip:192.0.2.60"))  # the address's bucket still has room


# --- every limited endpoint ----------------------------------------------------------------------------------

API = [("/api/decks/complete", "completion"), ("/api/games/advice", "advice"), ("/api/drafts/simulate", "simulate"),
       ("/api/pods", "pod_create"), ("/api/games", "game_create"), ("/api/decks/", "deck_import")]


def _spend(name: str, http, set_limits) -> None:
    """Spend the whole quota (1/min) of the test client ``http``: its guest session once it has one, else its
    address."""
    set_limits(**{name: "1/min"})
    session = http.cookies.get("sessionid")
    limits.check(name, Client(f"guest:{session.value}") if session else Client("ip:127.0.0.1"))


@pytest.mark.parametrize("path,name", API)
def test_every_limited_api_endpoint_answers_429_with_retry_after(client, db, limits_on, path, name):
    set_limits, _ = limits_on
    first = client.post(path, {}, content_type="application/json")
    assert first.status_code == 400  # limits on, quota left: the request reaches the view (an empty body)
    _spend(name, client, set_limits)
    response = client.post(path, {}, content_type="application/json")
    assert response.status_code == 429, response.content
    error = response.json()["errors"][0]
    assert error["limit"] == name and error["rate"] == "1/min"
    assert int(response["Retry-After"]) == error["retry_after"] >= 1
    assert "Try again in" in error["message"]
    other = DjangoClient().post(path, {}, content_type="application/json", REMOTE_ADDR="192.0.2.99")
    assert other.status_code == 400  # another client is not held back


def test_reads_are_not_limited(client, db, limits_on):
    set_limits, _ = limits_on
    _spend("deck_import", client, set_limits)
    assert client.get("/api/decks/").status_code == 200
    assert client.post("/api/decks/", {}, content_type="application/json").status_code == 429


def test_an_api_in_flight_cap_is_given_back_after_each_response(client, db, limits_on):
    set_limits, _ = limits_on
    set_limits(advice="100/min", advice_concurrent="1")
    for _ in range(3):  # each answered 400 (an empty body): the hold of the one before was released
        assert client.post("/api/games/advice", {}, content_type="application/json").status_code == 400


PAGES = [("/decks/complete/", "completion", {"text": "4 Lightning Bolt\n4 Kept Input Card", "format": "modern"},
          "4 Kept Input Card"),
         ("/decks/import/", "deck_import", {"text": "4 Kept Input Card", "name": "Kept deck name"}, "Kept deck name"),
         ("/drafts/", "simulate", {"set_code": "BLB", "bots": "mixed", "seats": "8", "seed": "4242"}, "4242"),
         ("/drafts/play/", "pod_create", {"set_code": "BLB", "seats": "8", "display_name": "Kept Name"}, "Kept Name"),
         ("/games/", "game_create", {"deck_number": "4242"}, "4242"),
         ("/accounts/signup/", "signup", {"username": "kept-username"}, "kept-username")]


@pytest.mark.parametrize("path,name,data,kept", PAGES)
def test_every_limited_page_answers_429_keeping_the_input(client, db, limits_on, path, name, data, kept):
    set_limits, _ = limits_on
    _spend(name, client, set_limits)
    response = client.post(path, data)
    assert response.status_code == 429
    retry = int(response["Retry-After"])
    page = response.content.decode()
    assert "Too many" in page and f"Try again in {retry} s" in page
    assert kept in page  # the form comes back with what was typed


def test_a_refused_page_does_no_work(client, db, limits_on):
    from decks.models import CompletionJob, Deck

    set_limits, _ = limits_on
    _spend("deck_import", client, set_limits)
    _spend("completion", client, set_limits)
    client.post("/decks/import/", {"text": "4 Lightning Bolt"})
    client.post("/decks/complete/", {"text": "4 Lightning Bolt", "format": "modern"})
    assert not Deck.objects.exists() and not CompletionJob.objects.exists()


# --- the deck socket -----------------------------------------------------------------------------------------

@pytest.mark.django_db(transaction=True)
def test_the_deck_socket_refuses_analyses_over_the_rate_and_stays_open(limits_on):
    from decks.models import Deck
    from tests.ws import connect_path, receive_until

    set_limits, _ = limits_on
    set_limits(analysis="1/min")
    deck = Deck.objects.create(name="x", format="modern", list_hash="x")

    async def scenario():
        ws, ok, _ = await connect_path(f"/ws/decks/{deck.pk}/")
        assert ok
        await ws.send_json_to({"v": 1, "action": "analyze"})
        assert (await receive_until(ws, lambda m: m["type"] in ("queued", "error")))["type"] == "queued"
        for _ in range(2):  # refused, and the socket still answers
            await ws.send_json_to({"v": 1, "action": "analyze"})
            error = await receive_until(ws, lambda m: m["type"] in ("queued", "error"))
            assert error["code"] == 429 and error["limit"] == "analysis" and error["retry_after"] >= 1
        await ws.disconnect()

    asyncio.run(scenario())
