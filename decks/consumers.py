"""Websocket for a deck page: live analysis results.

Protocol (versioned JSON, see docs/websockets.md):
  client -> {"v": 1, "action": "analyze"}
  server -> {"v": 1, "type": "analysis", "analysis": {...}} | {"v": 1, "type": "queued"} | {"v": 1, "type": "error", "message": "..."}
"""
from __future__ import annotations

import json

from channels.db import database_sync_to_async
from channels.generic.websocket import AsyncWebsocketConsumer

from decks.completion.service import job_group, job_payload
from decks.models import CompletionJob, Deck
from decks.tasks import analyze_deck, deck_group
from plumbing import limits

PROTOCOL_VERSION = 1


class DeckConsumer(AsyncWebsocketConsumer):
    async def connect(self):
        self.deck_id = int(self.scope["url_route"]["kwargs"]["deck_id"])
        analysis = await self._stored_analysis()
        if analysis is False:
            await self.close(code=4404)
            return
        self.group = deck_group(self.deck_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        if analysis:
            await self._send("analysis", analysis=analysis)

    async def disconnect(self, code):
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive(self, text_data=None, bytes_data=None):
        try:
            message = json.loads(text_data or "")
        except (TypeError, ValueError):
            await self._error("Messages must be JSON objects.")
            return
        if not isinstance(message, dict):
            await self._error("Messages must be JSON objects.")
            return
        if message.get("v") != PROTOCOL_VERSION:
            await self._error(f"Unsupported protocol version {message.get('v')!r}; this server speaks v{PROTOCOL_VERSION}.")
            return
        if message.get("action") == "analyze":
            try:
                await database_sync_to_async(limits.check_socket)("analysis", self.scope)
            except limits.Refused as exc:  # the socket stays open; nothing is queued
                await self._send("error", message=exc.message, code=exc.status, limit=exc.limit,
                                 retry_after=exc.retry_after)
                return
            await self._send("queued")
            await database_sync_to_async(analyze_deck.delay)(self.deck_id)
            return
        await self._error(f"Unknown action {message.get('action')!r}; expected 'analyze'.")

    async def deck_analysis(self, event):
        await self._send("analysis", analysis=event["analysis"])

    async def _send(self, kind, **payload):
        await self.send(text_data=json.dumps({"v": PROTOCOL_VERSION, "type": kind, **payload}))

    async def _error(self, message):
        await self._send("error", message=message)

    @database_sync_to_async
    def _stored_analysis(self):
        deck = Deck.objects.filter(pk=self.deck_id).only("analysis").first()
        return False if deck is None else deck.analysis


class JobConsumer(AsyncWebsocketConsumer):
    """ws/jobs/<uuid>/: a completion job's progress and result. Server -> client only:
    {"v": 1, "type": "job", "job": {id, status, progress, message, error, deck, result}}."""

    async def connect(self):
        self.job_id = str(self.scope["url_route"]["kwargs"]["job_id"])
        payload = await self._payload()
        if payload is None:
            await self.close(code=4404)
            return
        self.group = job_group(self.job_id)
        await self.channel_layer.group_add(self.group, self.channel_name)
        await self.accept()
        await self.send(text_data=json.dumps({"v": PROTOCOL_VERSION, "type": "job", "job": payload}))

    async def disconnect(self, code):
        if hasattr(self, "group"):
            await self.channel_layer.group_discard(self.group, self.channel_name)

    async def receive(self, text_data=None, bytes_data=None):
        await self.send(text_data=json.dumps({"v": PROTOCOL_VERSION, "type": "error",
                                              "message": "This socket only sends job updates; it takes no messages."}))

    async def job_update(self, event):
        await self.send(text_data=json.dumps({"v": PROTOCOL_VERSION, "type": "job", "job": event["job"]}))

    @database_sync_to_async
    def _payload(self):
        job = CompletionJob.objects.filter(pk=self.job_id).first()
        return None if job is None else job_payload(job)
