"""Versioned JSON messages from websocket clients: the envelope every live page shares (pure).

A client message is a text frame holding a JSON object ``{"v": <version>, "action": <name>, ...}``.
``decode_message`` checks the envelope and says exactly what is wrong; each protocol (draft pods,
games) then checks its own fields.
"""
from __future__ import annotations

import json
from typing import Sequence


class ProtocolError(ValueError):
    """A client message that breaks the protocol; the text is sent back to the client."""


def decode_message(text, *, version: int, actions: Sequence[str], max_chars: int) -> dict:
    """One client frame -> its JSON object, with a known ``action`` and the right ``v``."""
    if text is None:
        raise ProtocolError("send text frames holding a JSON object")
    if isinstance(text, bytes):
        try:
            text = text.decode("utf-8")
        except UnicodeDecodeError:
            raise ProtocolError("messages must be UTF-8 JSON text") from None
    if len(text) > max_chars:
        raise ProtocolError(f"message too long ({len(text)} characters; at most {max_chars})")
    try:
        message = json.loads(text)
    except ValueError:
        raise ProtocolError("messages must be JSON objects") from None
    if not isinstance(message, dict):
        raise ProtocolError("messages must be JSON objects")
    if message.get("v") != version:
        raise ProtocolError(f"unsupported protocol version {message.get('v')!r}; this server speaks v{version}")
    action = message.get("action")
    if action not in actions:
        raise ProtocolError(f"unknown action {action!r}; expected one of {', '.join(actions)}")
    return message
