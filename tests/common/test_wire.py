"""The websocket message envelope (pure): what is wrong with a frame is said exactly."""
import pytest

from common.wire import ProtocolError, decode_message

ACTIONS = ("pick", "ping")


def decode(text, **kwargs):
    return decode_message(text, **{"version": 1, "actions": ACTIONS, "max_chars": 100, **kwargs})


def test_a_good_frame_gives_its_object_text_or_utf8_bytes():
    assert decode('{"v": 1, "action": "pick", "card": "x"}') == {"v": 1, "action": "pick", "card": "x"}
    assert decode('{"v": 1, "action": "ping"}'.encode()) == {"v": 1, "action": "ping"}


@pytest.mark.parametrize("text, message", [
    (None, "text frames"), (b"\xff", "UTF-8"), ("x" * 101, "too long"), ("not json", "JSON objects"),
    ("[1]", "JSON objects"), ('{"v": 2, "action": "pick"}', "unsupported protocol version 2"),
    ('{"v": 1, "action": "wizard"}', "unknown action 'wizard'; expected one of pick, ping")])
def test_a_bad_frame_says_what_is_wrong(text, message):
    with pytest.raises(ProtocolError, match=message):
        decode(text)
