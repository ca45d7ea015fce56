"""Draft bots (pure: no Django): ``base`` (the ``DraftBot`` interface and ``PickContext``), then
``baselines``, ``ratings``, ``draftsim``, ``archetype`` and ``neural`` (torch, loaded where used). They may
import ``base`` and ``drafts.core``; the shell (``drafts.services``) chooses and loads them."""
