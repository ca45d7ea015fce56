"""Pick agreement of a bot with logged picks (pure).

Top-1 / top-3 agreement over all picks and without forced picks (a pack of one card), by overall
pick number, and the mean rank (1 = the bot's first choice) of the logged pick.
"""
from __future__ import annotations

import inspect

import numpy as np

from drafts.bots.base import PickContext
from drafts.core.logs import DraftLogs


def ranks_from_scores(logs: DraftLogs, scores: np.ndarray) -> np.ndarray:
    """Ranks from a dense [rows, cards] score matrix (cards outside the pack ignored).

    Ties are broken against the logged pick (a tie counts as the worse position), so a bot that
    scores everything equal earns no agreement by luck.
    """
    scores = np.where(logs.pack > 0, scores, -np.inf)
    chosen = scores[np.arange(len(logs)), logs.pick][:, None]
    better_or_tied = ((scores >= chosen) & (logs.pack > 0)).sum(axis=1)
    return better_or_tied.astype(np.int16)


def agreement(logs: DraftLogs, ranks: np.ndarray) -> dict:
    forced = logs.forced
    overall = logs.pack_number.astype(int) * max(logs.picks_per_pack, 1) + logs.pick_number.astype(int)

    def summary(mask):
        r = ranks[mask]
        if not len(r):
            return {"picks": 0}
        return {"picks": int(len(r)), "top1": round(float((r == 1).mean()), 4),
                "top3": round(float((r <= 3).mean()), 4), "mean_rank": round(float(r.mean()), 3)}

    out = {"all": summary(np.ones(len(logs), bool)), "unforced": summary(~forced)}
    out["by_pick"] = {int(p): summary(overall == p) for p in np.unique(overall)}
    return out


def score_matrix(bot, logs: DraftLogs, set_list) -> np.ndarray:
    """Scores [rows, cards] of a bot over logged picks: its vectorised ``score_logs`` when it has
    one, else one ``pick`` call per row (ranked position turned into a score)."""
    fn = getattr(bot, "score_logs", None)
    if fn is not None:
        wants_set = "set_list" in inspect.signature(fn).parameters
        return np.asarray(fn(logs, set_list) if wants_set else fn(logs), dtype=np.float64)
    index = {n: i for i, n in enumerate(logs.cards)}
    out = np.full(logs.pack.shape, -np.inf)
    per_pack = max(logs.picks_per_pack, 1)
    for row in range(len(logs)):
        context = PickContext(set_list=set_list, pack_number=int(logs.pack_number[row]),
                              pick_number=int(logs.pick_number[row]), picks_per_pack=per_pack)
        ranking = bot.pick(logs.pack_names(row), logs.pool_names(row), context)
        for position, (name, _) in enumerate(ranking):
            i = index[name]
            out[row, i] = max(out[row, i], -position)
    return out


def rankings(logs: DraftLogs, scores: np.ndarray) -> list[list[str]]:
    """Each row's pack (distinct cards), best first; ties keep column order."""
    out = []
    for row in range(len(logs)):
        present = np.flatnonzero(logs.pack[row])
        order = present[np.argsort(-scores[row, present], kind="stable")]
        out.append([logs.cards[i] for i in order])
    return out
