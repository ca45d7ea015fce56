"""Booster drafts (sets, packs, pods, bots). Built by the booster-draft issues."""
