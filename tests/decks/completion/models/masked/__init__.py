"""Tests of decks.completion.models.masked (pure torch/numpy; no Django)."""
