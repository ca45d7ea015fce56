"""Complete a deck with the masked denoiser: retrieval, then 8-16 unmasking steps with hard legality masks.

``MaskedCompleter.complete(main_known, side_known, fmt, seed)`` (names in, names out; pure, no Django):

1. **Validation**: unknown format or card, bad count, no main card, more than 60 / 15 cards, more copies than a
   card's limit across main + sideboard (``CompletionError``, a user-facing message). A card the site has not
   seen played in the format is *kept* with a warning: legality here is observed from tournament decks, so it
   has false negatives; generated cards stay inside what is known to be legal.
2. **Retrieval**: the top-M corpus decks for the user's main cards (``decks.completion.models.retrieval``), fixed for the run.
3. **Main deck**: ``steps`` rounds; each runs the denoiser on the cards placed so far and commits the most
   confident (card, copy) slots: about ``remaining / rounds left`` of them. A slot is allowed only if its card is
   legal in the format, the copy keeps the card within its limit across main + side (restricted = 1, basics and
   "any number" cards exempt) and the board has room: legality is a mask at every step, never a repair.
4. **Sideboard**: the same, with the whole main deck visible and the neighbours retrieved with it.
5. If the neighbours' cards run out, the format's most played legal cards fill the rest (as the baselines do).

With ``gate=1`` the scores are the neighbours' votes and the deck is exactly the neighbour-vote baseline's.
Sampling is greedy (most confident first), so the same input gives the same deck; ``seed`` is kept for the
interface and breaks no ties (ties go to the lower copy number, then the lower card index).
"""
from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import torch

from decks.completion.models.archetypes import group_neighbours, soft_weights, split_neighbours
from decks.completion.models.collection import SIDE_BASICS_SHARE, playable_deck
from decks.completion.models.baselines import DeckBuilder, owned_array
from decks.completion.models.retrieval import MAX_COPIES, NeighbourVoteBaseline, Neighbours, RetrievalParams, narrow
from decks.completion.models.deckrank import SlotIndex, SlotRanker, rank_fill
from decks.completion.models.common import CompletionError, check_limits, check_sizes, resolve_entries
from decks.completion.models.masked.model import MAX_ADD, MaskedDenoiser, collate
from decks.completion.models.masked.data import Tables, board_example, visible_batch
from decks.core.cards import BASIC_LAND_NAMES
from decks.core.names import CardIndex

__all__ = ["MaskedCompleter", "MaskedCompletion", "ArchetypeCompletion", "Source", "INFERENCE_GATE", "SAMPLER_DEFAULTS"]

# The sampler settings a newly trained version is registered with (its config's "sampler"; a version's own
# config wins). Training learns a gate g ~ 0.40 (best for the cross-entropy); greedy unmasking does better
# leaning more on the vote. Chosen on the validation month (decks of 2026-04, model and index from before
# it, 600 decks, bench/completion_gates.py): gate 0.6 with one unmasking round gave main recall
# 0.812/0.828/0.825 at K = 10/20/40 against 0.807/0.824/0.817 for the vote, 0.812/0.826/0.819 for 12 rounds
# and 0.807/0.825/0.814 for the learned gate (docs/completion.md, "Choosing the sampler").
INFERENCE_GATE = 0.6
SAMPLER_DEFAULTS = {"gate": INFERENCE_GATE, "side_gate": 0.6, "steps": 1, "side_steps": 4}


@dataclass
class Source:
    """A corpus deck the completion drew on: index row, share of the vote, similarity to the given cards."""

    row: int
    weight: float
    similarity: float


@dataclass
class MaskedCompletion:
    main: list[tuple[str, int]]
    side: list[tuple[str, int]]
    generated_main: list[tuple[str, int]]
    generated_side: list[tuple[str, int]]
    iterations: int                      # unmasking rounds run (main + side)
    seconds: float
    confidence: dict[str, float] = field(default_factory=dict)   # "main:Name"/"side:Name" -> 0..1
    sources: list[Source] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    # completing from a collection (decks.completion.models.collection): what the deck built without it holds that the
    # collection lacks (copies missing), the same as (name, wanted, owned, missing) rows, the main-deck copies the
    # collection lacks (its open slots, filled), notes for the page, and the land count against the nearest decks'
    missing: list[tuple[str, int]] = field(default_factory=list)
    missing_table: list[tuple[str, int, int, int]] = field(default_factory=list)
    not_owned: list[tuple[str, int]] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    lands: dict | None = None
    # one completion per archetype when the nearest decks split into groups (decks.completion.models.archetypes),
    # largest share first; empty when they are one archetype (this completion is the default answer either way)
    archetypes: list = field(default_factory=list)

    def to_dict(self) -> dict:
        return {"main": [list(e) for e in self.main], "side": [list(e) for e in self.side],
                "generated_main": [list(e) for e in self.generated_main],
                "generated_side": [list(e) for e in self.generated_side], "iterations": self.iterations,
                "seconds": self.seconds, "confidence": self.confidence,
                "sources": [{"row": s.row, "weight": s.weight, "similarity": s.similarity} for s in self.sources],
                "warnings": self.warnings, "missing": [list(e) for e in self.missing],
                "missing_table": [list(e) for e in self.missing_table], "not_owned": [list(e) for e in self.not_owned],
                "notes": self.notes, "lands": self.lands, "archetypes": [a.to_dict() for a in self.archetypes]}


def _grouped(names: list[str], cnt: Counter) -> list[tuple[str, int]]:
    return sorted(((names[i], n) for i, n in cnt.items() if n > 0), key=lambda e: e[0])


@dataclass
class ArchetypeCompletion:
    """The completion drawn from one archetype group of the nearest decks: its share of their (soft) weight, its
    number of decks, the deck, and example decks of the group (best first)."""

    share: float
    decks: int
    main: list[tuple[str, int]]
    side: list[tuple[str, int]]
    generated_main: list[tuple[str, int]]
    generated_side: list[tuple[str, int]]
    confidence: dict[str, float]
    sources: list[Source]

    def to_dict(self) -> dict:
        return {"share": self.share, "decks": self.decks, "main": [list(e) for e in self.main],
                "side": [list(e) for e in self.side], "generated_main": [list(e) for e in self.generated_main],
                "generated_side": [list(e) for e in self.generated_side], "confidence": self.confidence,
                "sources": [{"row": s.row, "weight": s.weight, "similarity": s.similarity} for s in self.sources]}


class MaskedCompleter:
    """The default deck completer: neighbour retrieval + the masked denoiser (or its gate-1 prior alone)."""

    def __init__(self, model: MaskedDenoiser | None, vote: NeighbourVoteBaseline, tables: Tables, names: list[str],
                 formats: list[str], restricted: np.ndarray | None = None, gate: float | None = None,
                 steps: int = 12, side_steps: int = 4, side_gate: float | None = None):
        if model is None:
            gate, side_gate = 1.0, None
        self.model = model.eval() if model is not None else None
        self.vote = vote
        self.index = vote.index
        self.params: RetrievalParams = vote.params
        self.tables = tables
        self.names = list(names)
        self.formats = list(formats)
        self.restricted = (np.zeros_like(tables.legal) if restricted is None else np.asarray(restricted, bool))
        self.gate = gate
        self.side_gate = side_gate
        self.steps = int(steps)
        self.side_steps = int(side_steps)
        self.candidates = model.config.candidates if model is not None else 160
        # the no-retrieval ablation (decks.completion.models.masked.ablation): scores the vocabulary, no neighbours' votes
        self.plain = model is not None and getattr(model, "retrieval", True) is False
        self._token_cards = np.zeros(int(tables.token.max()) + 1, np.int64)
        self._token_cards[tables.token[tables.token > 0]] = np.flatnonzero(tables.token > 0)
        self.card_index = CardIndex(self.names)  # the site's resolver: exact name first, never a look-alike
        self.basics = [i for i, n in enumerate(self.names) if n in BASIC_LAND_NAMES]
        # bool [V]: land cards (the shell sets it from the catalogue: decks.completion.datasets.land_mask); the
        # basics alone until then
        self.land = np.zeros(len(self.names), bool)
        self.land[self.basics] = True
        # the deck-level sideboard ranker (decks.completion.models.deckrank; kind deck_rank): when set, it builds
        # the sideboard from the finished main deck instead of the denoiser's sideboard rounds
        self.side_ranker: SlotRanker | None = None
        self.rank_index: SlotIndex | None = None
        # a main-deck ranker (decks.completion.models.mainrank.MainRanker; bench.main_rank only): when set, it
        # re-scores the masked model's and the vote's main-deck slots together and fills the main deck
        self.main_ranker = None

    def with_side_ranker(self, model: SlotRanker | None, index: SlotIndex | None) -> "MaskedCompleter":
        """Use ``model`` over ``index`` (built on this completer's corpus) for the sideboard; None: the denoiser's."""
        if model is not None and index is not None and index.fit is not self.vote.fitted:
            raise ValueError("the ranker's index must be built on this completer's corpus (vote.fitted)")
        self.side_ranker, self.rank_index = (model, index) if model is not None and index is not None else (None, None)
        return self

    # ------------------------------------------------------------------ validation

    def _format_index(self, fmt) -> int:
        f = str(fmt or "").strip().lower()
        if f not in self.formats:
            raise CompletionError(f"Unknown format '{fmt}': choose one of {', '.join(self.formats)}.")
        return self.formats.index(f)

    def _validate(self, main_known, side_known, fmt):
        f = self._format_index(fmt)
        label = self.formats[f].title()
        main_c = Counter(resolve_entries(main_known, "main deck", self.card_index.position))
        side_c = Counter(resolve_entries(side_known, "sideboard", self.card_index.position))
        check_sizes(main_c, side_c)
        check_limits(self.names, main_c, side_c, self.vote.fitted.limit[f], self.restricted[f], label)
        warnings = [f"{self.names[i]} has not been seen in a {label} tournament deck: it is kept, but check that "
                    f"it is legal." for i in sorted(main_c + side_c, key=lambda i: self.names[i])
                    if not self.tables.legal[f, i]]
        return f, main_c, side_c, warnings

    # ------------------------------------------------------------------ sampling

    def gate_for(self, board: int) -> float | None:
        """The gate of a board: ``side_gate`` for the sideboard when set, else ``gate`` (None = as trained)."""
        return self.side_gate if board == 1 and self.side_gate is not None else self.gate

    def _scores(self, ex, nb_votes, vis: np.ndarray, gate: float | None) -> tuple[np.ndarray, bool]:
        """(float64 [C, MAX_ADD]: score of adding j more copies of each candidate, whether the scores are
        log-probabilities: the vote's and the slot head's are, the token head's only rank)."""
        C = ex.cand_card.size
        if gate is not None and gate >= 1.0:  # the pure vote, exactly (no float32 round trip)
            table = nb_votes.table[np.searchsorted(nb_votes.cards, ex.cand_card)]
            v = vis[ex.cand_card].astype(np.int64)
            cols = np.minimum(v[:, None] + np.arange(1, MAX_ADD + 1)[None, :], MAX_COPIES)
            vals = np.take_along_axis(table, cols, axis=1)
            vals[(v[:, None] + np.arange(1, MAX_ADD + 1)[None, :]) > MAX_COPIES] = 0.0
            with np.errstate(divide="ignore"):
                return np.log(vals).reshape(C, MAX_ADD), True
        with torch.no_grad():
            device = next(self.model.parameters()).device  # the network's device (MTG_DEVICE on the site)
            batch = {k: v.to(device) for k, v in collate([ex]).items()}
            scores, calibrated = self.model.scores(batch, gate=gate)
            return scores[0].double().cpu().numpy(), calibrated

    def _plain_candidates(self, f: int, board: int, main_vis: np.ndarray, side_vis: np.ndarray, left: int):
        """The no-retrieval model's shortlist: (cards, slot scores, not calibrated, expected new cards, normaliser 0)."""
        batch = visible_batch(self.tables, [(f, board, main_vis, side_vis)])
        cards, scores, _ = shortlist_scores(self.model, batch, self._token_cards, self.candidates)
        return cards, scores, False, float(np.clip(left / 2.5, 1.0, 60.0)), 0.0

    def _fill_board(self, b: DeckBuilder, f: int, nb: Neighbours, board: int, steps: int,
                    wide: Neighbours | None = None, given: float = 1.0, record: dict | None = None) -> tuple[int, dict]:
        """Unmask one board in ``steps`` rounds; returns (rounds run, confidence per added card). ``record``: a dict
        given the first round's evidence (``cards``, the slot ``scores`` [C, MAX_ADD], the ``prior`` scores of the
        neighbour vote, the ``visible`` counts) for the main-deck ranker (``decks.completion.models.mainrank``)."""
        add = b.add_main if board == 0 else b.add_side
        left = (lambda: b.main_left) if board == 0 else (lambda: b.side_left)
        part = "main" if board == 0 else "side"
        both = (self.index.votes(nb, "main"), self.index.votes(nb, "side"))
        votes = both[board]
        gate = self.gate_for(board)
        extra = None
        if self.model is not None and gate != 1.0 and not self.plain:  # second opinions, network features only
            extra = (self.index.votes(wide, part) if wide is not None and wide.rows.size else None,
                     self.index.votes(narrow(nb), part))
        conf: dict[int, float] = {}
        rounds = 0
        for s in range(steps):
            if left() <= 0:
                break
            main_vis = b.main_count.astype(np.int64)
            side_vis = b.side_count.astype(np.int64)
            vis = main_vis if board == 0 else side_vis
            if self.plain:
                cand_card, scores, calibrated, expected, norm = self._plain_candidates(f, board, main_vis, side_vis,
                                                                                       left())
            else:
                ex = board_example(self.index, self.tables, f, main_vis, side_vis, nb, board, self.candidates,
                                   votes=both, extra_votes=extra if extra is not None else (votes, votes),
                                   main_given=given)
                cand_card = ex.cand_card
                scores, calibrated = self._scores(ex, votes, vis, gate) if cand_card.size else (None, True)
                if record is not None and s == 0 and cand_card.size:
                    record.update(cards=cand_card, scores=scores, visible=vis.copy(),
                                  prior=scores if gate is not None and gate >= 1.0 else self._scores(ex, votes, vis, 1.0)[0])
                # token head: the expected number of new distinct cards turns p(token) into a presence probability
                expected = float(np.clip(np.exp(ex.prior_tok.astype(np.float64)).sum(), 1.0, 60.0))
                norm = (np.logaddexp.reduce(scores[:, 0][np.isfinite(scores[:, 0])])
                        if not calibrated and cand_card.size else 0.0)
            if cand_card.size == 0:
                break
            rounds += 1
            quota = math.ceil(left() / (steps - s))
            C = cand_card.size
            cc = np.repeat(cand_card, MAX_ADD)
            jj = np.tile(np.arange(1, MAX_ADD + 1), C)
            nn = vis[cc] + jj
            sc = scores.ravel()
            ok = np.isfinite(sc)
            order = np.flatnonzero(ok)[np.lexsort((cc[ok], nn[ok], -sc[ok]))]
            added = Counter()
            taken = 0
            for k in order:
                if taken >= quota or left() <= 0:
                    break
                c, j = int(cc[k]), int(jj[k])
                if added[c] != j - 1 or b.room(c) <= 0:
                    continue
                if add(c, 1):
                    added[c] += 1
                    taken += 1
                    if calibrated:  # log P(the deck holds this copy)
                        p = float(np.exp(sc[k]))
                    else:
                        p_tok = float(np.exp(scores[k // MAX_ADD, 0] - norm))
                        p = (1.0 - (1.0 - min(p_tok, 1.0)) ** expected) * float(np.exp(sc[k] - scores[k // MAX_ADD, 0]))
                    conf[c] = min(conf.get(c, 1.0), p)
            if taken == 0:
                break
        return rounds, conf

    def _run(self, b: DeckBuilder, f: int, generate_side: bool, report, nb: Neighbours | None = None):
        """Retrieve for the user's main cards, unmask the main deck, then the sideboard (retrieving again with
        the whole main deck) -> (main neighbours, rounds, confidence main, confidence side, main, side).
        ``nb``: these neighbours instead (one archetype's, ``decks.completion.models.archetypes``; they are also
        the wider set)."""
        cards, counts = np.unique(np.array(b.main, dtype=np.int64), return_counts=True)
        given = min(1.0, len(b.main) / 60.0)  # the share of the main deck the user gave
        grouped = nb is not None  # one archetype's decks: the masked model over them alone
        if nb is None:
            nb, wide = self.index.neighbour_sets(cards, counts, f, None, self.params)
        else:
            wide = nb
        report(0.1, "Nearest tournament decks found")
        if self.main_ranker is not None and not grouped:  # the deck-level main-deck ranker over the masked model's evidence
            rounds, conf_main = self.main_ranker.fill(self, b, f, nb, wide, given)
        else:
            rounds, conf_main = self._fill_board(b, f, nb, 0, self.steps, wide, given)
        report(0.6, "Main deck done")
        conf_side: dict[int, float] = {}
        if generate_side and b.side_left > 0 and self.side_ranker is not None:
            conf_side = self._rank_side(b)
            rounds += 1
        elif generate_side and b.side_left > 0:
            cards, counts = np.unique(np.array(b.main, dtype=np.int64), return_counts=True)
            nb_side, wide_side = self.index.neighbour_sets(cards, counts, f, None, self.params)
            r, conf_side = self._fill_board(b, f, nb_side, 1, self.side_steps, wide_side, given)
            rounds += r
        main, side = b.finish(side=generate_side)
        return nb, rounds, conf_main, conf_side, main, side

    def _rank_side(self, b: DeckBuilder) -> dict[int, float]:
        """The sideboard by the deck-level ranker (one pass over the finished main deck's candidate slots);
        confidence of an added card: the sigmoid of its lowest added copy's score."""
        before = b.side_count.copy()
        slots = rank_fill(self.side_ranker, self.rank_index, b, 1)
        conf: dict[int, float] = {}
        if slots.score is None:
            return conf
        for c, n, s in zip(slots.card.tolist(), slots.copy.tolist(), slots.score.tolist()):
            if before[c] < n <= b.side_count[c]:
                conf[c] = min(conf.get(c, 1.0), 1.0 / (1.0 + math.exp(-s)))
        return conf

    def owned(self, collection) -> np.ndarray:
        """A collection ([(name, copies), ...]) as ``DeckBuilder``'s owned array: basic lands in any number; a
        name outside the vocabulary cannot be played by the model and is left out."""
        pairs = []
        for entry in collection or ():
            try:
                name, count = entry
                count = int(count)
            except (TypeError, ValueError):
                raise CompletionError("Each collection entry must be a (card name, count) pair.") from None
            i = self.card_index.position(name)
            if i is not None and count > 0:
                pairs.append((i, count))
        return owned_array(len(self.names), pairs, self.basics)

    def complete(self, main_known, side_known=(), fmt: str = "", seed: int = 0, generate_side: bool = True,
                 progress: Callable[[float, str], None] | None = None, collection=None, archetypes: bool = True,
                 **_ignored) -> MaskedCompletion:
        """Complete one deck (see the module docstring); raises ``CompletionError``. With ``collection`` (name,
        copies pairs) only owned cards are added, within their counts (basic lands in any number): a hard mask like
        legality; ``missing`` then lists what the deck completed without it would add that the collection lacks."""
        started = time.perf_counter()
        report = progress or (lambda fraction, message: None)
        f, main_c, side_c, warnings = self._validate(main_known, side_known, fmt)
        user_main = [i for i, n in main_c.items() for _ in range(n)]
        user_side = [i for i, n in side_c.items() for _ in range(n)]
        owned = self.owned(collection) if collection is not None else None
        deck = None
        try:
            nb, rounds, conf_main, conf_side, main, side = self._run(
                DeckBuilder(self.vote.fitted, f, user_main, user_side, owned), f, generate_side, report)
            if owned is not None:  # the deck a tournament player would build, against what the collection holds
                _, _, want_conf, _, want_main, want_side = self._run(
                    DeckBuilder(self.vote.fitted, f, user_main, user_side), f, generate_side,
                    lambda fraction, message: None)
                deck = self._from_collection(f, nb, main_c, side_c, main, side, want_main, want_side, owned,
                                             want_conf, conf_side)
                main = np.sort(np.array(list(deck.main.elements()), dtype=np.int64))
                side = np.sort(np.array(list(deck.side.elements()), dtype=np.int64))
                conf_main = {**{c: p for c, p in want_conf.items() if c in deck.not_owned}, **conf_main}
        except ValueError:
            raise CompletionError("There are not enough legal cards left to fill the deck within the copy limits"
                                  + (" and the collection." if owned is not None else ".")) from None
        report(1.0, "Done")
        gen_main = Counter(main.tolist()) - Counter(user_main)
        gen_side = Counter(side.tolist()) - Counter(user_side)
        confidence = {f"main:{self.names[c]}": round(float(conf_main.get(c, 0.0)), 3) for c in gen_main}
        confidence.update({f"side:{self.names[c]}": round(float(conf_side.get(c, 0.0)), 3) for c in gen_side})
        sources = [Source(int(r), round(float(w), 4), round(float(s), 4))
                   for r, w, s in zip(nb.rows[:5], nb.weight[:5], nb.sim[:5])]
        group = lambda cnt: sorted(((self.names[i], n) for i, n in cnt.items() if n > 0), key=lambda e: e[0])  # noqa: E731
        out = MaskedCompletion(main=group(Counter(main.tolist())), side=group(Counter(side.tolist())),
                               generated_main=group(gen_main), generated_side=group(gen_side), iterations=rounds,
                               seconds=time.perf_counter() - started, confidence=confidence, sources=sources,
                               warnings=warnings)
        if archetypes and owned is None:
            out.archetypes = self._archetypes(f, nb, user_main, user_side, generate_side)
        if deck is not None:
            out.missing = [(self.names[c], m) for c, _, _, m in deck.missing]
            out.missing_table = [(self.names[c], w, o, m) for c, w, o, m in deck.missing]
            out.not_owned = group(deck.not_owned)
            out.notes = list(deck.notes)
            out.lands = {"count": deck.lands, "low": deck.land_range[0], "high": deck.land_range[1]}
        return out

    def _archetypes(self, f: int, nb: Neighbours, user_main: list[int], user_side: list[int],
                    generate_side: bool) -> list["ArchetypeCompletion"]:
        """One completion per archetype group of the neighbours ``nb`` (``decks.completion.models.archetypes``),
        largest share first, each voted by its own group's decks alone; [] when they are one archetype."""
        if nb.rows.size < 4:
            return []
        groups = split_neighbours(self.index.main[nb.rows], soft_weights(nb, self.params.beta))
        if len(groups) < 2:
            return []
        out = []
        for group in groups:
            g_nb = group_neighbours(nb, group.members)
            _, _, conf_main, conf_side, main, side = self._run(
                DeckBuilder(self.vote.fitted, f, user_main, user_side), f, generate_side,
                lambda fraction, message: None, nb=g_nb)
            gen_main = Counter(main.tolist()) - Counter(user_main)
            gen_side = Counter(side.tolist()) - Counter(user_side)
            confidence = {f"main:{self.names[c]}": round(float(conf_main.get(c, 0.0)), 3) for c in gen_main}
            confidence.update({f"side:{self.names[c]}": round(float(conf_side.get(c, 0.0)), 3) for c in gen_side})
            order = np.argsort(-g_nb.weight, kind="stable")[:3]
            out.append(ArchetypeCompletion(
                share=round(group.share, 4), decks=int(group.members.sum()),
                main=_grouped(self.names, Counter(main.tolist())), side=_grouped(self.names, Counter(side.tolist())),
                generated_main=_grouped(self.names, gen_main), generated_side=_grouped(self.names, gen_side),
                confidence=confidence,
                sources=[Source(int(g_nb.rows[i]), round(float(g_nb.weight[i]), 4), round(float(g_nb.sim[i]), 4))
                         for i in order]))
        return out

    def _from_collection(self, f: int, nb: Neighbours, main_c: Counter, side_c: Counter, main, side, want_main,
                         want_side, owned: np.ndarray, want_conf: dict, conf_side: dict):
        """The playable deck from a collection (``decks.completion.models.collection.playable_deck``) out of the owned-only
        deck (``main``, ``side``) and the wanted deck, for the neighbours ``nb`` of the given cards."""
        main_votes, side_votes = self.index.votes(nb, "main"), self.index.votes(nb, "side")
        land_counts = (np.asarray(self.index.main[nb.rows] @ self.land.astype(np.int64)).ravel()
                       if nb.rows.size else np.zeros(0))
        want = Counter(want_main.tolist())
        order = sorted(want.items(), key=lambda e: (-(1.0 if e[0] in main_c else want_conf.get(e[0], 0.0)), e[0]))
        basic = np.zeros(len(self.names), bool)
        basic[self.basics] = True
        side_share = self.vote.fitted.side_share[f]
        return playable_deck(
            given_main=main_c, given_side=side_c, built_main=Counter(main.tolist()),
            built_side=Counter(side.tolist()), want_main=order, want_side=Counter(want_side.tolist()), owned=owned,
            limit=self.vote.fitted.limit[f], land=self.land, basic=basic, main_vote=main_votes.of,
            side_vote=side_votes.of, land_counts=land_counts, side_confidence=conf_side,
            side_basics_ok=bool(self.basics) and float(side_share[self.basics].max()) >= SIDE_BASICS_SHARE)

    def complete_many(self, requests, seed: int = 0, progress=None, **kwargs) -> list:
        """One ``MaskedCompletion`` or ``CompletionError`` per ``(main_known, side_known, fmt[, collection])``
        request."""
        out = []
        for i, request in enumerate(requests):
            try:
                main_known, side_known, fmt, *rest = request
                if len(rest) > 1:
                    raise ValueError
            except (TypeError, ValueError):
                out.append(CompletionError("Each request must be (main cards, sideboard cards, format[, "
                                           "collection])."))
                continue
            try:
                out.append(self.complete(main_known, side_known, fmt, seed=seed,
                                         collection=rest[0] if rest else None, **kwargs))
            except CompletionError as exc:
                out.append(exc)
            if progress:
                progress((i + 1) / max(1, len(requests)), f"{i + 1}/{len(requests)} decks")
        return out

    # ------------------------------------------------------------------ evaluation interface

    def complete_idx(self, main_known, side_known, fmt: int, seed: int = 0, generate_side: bool = True):
        """Index interface of the baselines (``decks.completion.models.evaluate``): card indices in, (main [60], side [15])."""
        b = DeckBuilder(self.vote.fitted, int(fmt), main_known, side_known)
        return self._run(b, int(fmt), generate_side, lambda fraction, message: None)[4:]

    def archetypes_idx(self, main_known, side_known, fmt: int, generate_side: bool = True):
        """Index interface of one completion per archetype (bench/completion_archetypes.py): ((main, side) of the
        default answer, [(share, main, side), ...] of the archetype groups, [] when they are one archetype)."""
        f = int(fmt)
        b = DeckBuilder(self.vote.fitted, f, main_known, side_known)
        nb, *_, main, side = self._run(b, f, generate_side, lambda fraction, message: None)
        groups = []
        if nb.rows.size >= 4:
            split = split_neighbours(self.index.main[nb.rows], soft_weights(nb, self.params.beta))
            for group in split if len(split) > 1 else ():
                g = self._run(DeckBuilder(self.vote.fitted, f, main_known, side_known), f, generate_side,
                              lambda fraction, message: None, nb=group_neighbours(nb, group.members))
                groups.append((group.share, g[4], g[5]))
        return (main, side), groups

    def nearest_overlap(self, main: np.ndarray, fmt: int, candidates: int = 50) -> float:
        """Coherence of a main deck: the share of its 60 cards (copies counted) that its nearest real deck of the
        format holds, among the ``candidates`` decks most like it (IDF-weighted retrieval, no recency)."""
        cards, counts = np.unique(np.asarray(main, dtype=np.int64), return_counts=True)
        params = RetrievalParams(neighbours=candidates, beta=self.params.beta, tau_days=0.0,
                                 occurrences=0.0)
        nb, _ = self.index.neighbour_sets(cards, counts, int(fmt), None, params, wide=False)
        if nb.rows.size == 0:
            return 0.0
        sub = self.index.main[nb.rows][:, cards].toarray()
        return float(np.minimum(sub, counts[None, :]).sum(axis=1).max() / max(int(counts.sum()), 1))


def shortlist_scores(model: torch.nn.Module, batch: dict[str, torch.Tensor], token_cards: np.ndarray,
                     shortlist: int) -> tuple[np.ndarray, np.ndarray, float]:
    """For one board (batch of one) of the no-retrieval model (``ablation.PlainDenoiser``): (catalogue cards [C],
    slot scores [C, MAX_ADD], expected new cards) of the ``shortlist`` best allowed cards. Scores are log p(token) over the whole allowed vocabulary + log P(>= j more)."""
    with torch.no_grad():
        h = model.encode(batch)
        logp = torch.log_softmax(model.token_logits(h, batch["allowed"]), dim=-1)[0]
        finite = torch.isfinite(logp)
        n = int(finite.sum())
        if n == 0:
            return np.zeros(0, np.int64), np.zeros((0, MAX_ADD)), 0.0
        top = torch.topk(logp.masked_fill(~finite, -math.inf), min(shortlist, n))
        cnt = torch.log_softmax(model.count_logits(h, top.indices[None, :]), dim=-1)[0]
        at_least = torch.logcumsumexp(cnt.flip(-1), dim=-1).flip(-1)
        scores = (top.values[:, None] + at_least).double().numpy()
    return token_cards[top.indices.numpy()], scores, float(n)
