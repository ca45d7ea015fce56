"""Draft-bot benchmark: pick agreement on held-out pods, pod speed, and first-pick order against people.

    python -m bench.drafts [--sets BLB DSK FDN] [--pods 20]

Agreement: every bot ranks every pack of the held-out pods (1 pod in 10, by a hash of the pod id;
the shipped learned bots never saw them) of the proxy 17Lands logs; top-1/top-3 agreement with the
logged pick over all picks and without the forced last pick of each pack, and the mean rank of the
logged pick, next to random and rating-only baselines scored by the same code. The logs were
sampled at temperature 1 from a pick model, so about 0.67 top-1 is the ceiling.
Speed: full 8-seat pods (336 picks) simulated and all 8 decks auto-built, per bot, timed in one
process with a trivial rating-only pod as the baseline.
First picks: Spearman rho between a bot's pack-1-pick-1 order of a whole set and the human average
pick position from Draftsim (M19, DOM, GRN, RNA, WAR).
Pure: reads the data files and the shipped weights (ml/weights/drafts/), no database.
Writes bench/results/drafts.json and bench/results/drafts.svg.
"""
from __future__ import annotations

import argparse
import datetime as dt
import statistics
import time

from bench.harness.machine import machine
from bench.harness.draft_sets import load_shipped, proxy_set
from bench.harness.paths import RESULTS, command, data_dir
from bench.harness.report import write_result

CEILING = 0.67
TARGETS = {"draftsim": 0.50, "archetype": 0.60, "neural": 0.655}


def bots_for(code: str, s, ratings) -> dict:
    from drafts.bots.archetype import default_bot
    from drafts.bots.baselines import RandomBot, RatingBot
    from drafts.bots.draftsim import DraftsimBot

    bots = {"random": RandomBot(seed=0), "rating": RatingBot(ratings), "draftsim": DraftsimBot(ratings),
            "archetype-default": default_bot(s)}
    for family in ("archetype", "neural"):
        bot = load_shipped(family, code)
        if bot is not None:
            bots[family] = bot
    return bots


def agreement_for_set(code: str) -> dict:
    from drafts.core.evaluate import agreement, ranks_from_scores, score_matrix
    from drafts.core.logs import held_out_mask, pod_keys, read_17lands_csv, read_seats

    d = data_dir() / "drafts"
    started = time.perf_counter()
    logs = read_17lands_csv(d / f"draft_data_proxy.{code}.PremierDraft.train.csv.gz")
    seats = read_seats(d / f"draft_data_proxy.{code}.PremierDraft.train.seats.csv")
    held = held_out_mask(pod_keys(logs, seats))
    test = logs.select(held)
    read_seconds = time.perf_counter() - started
    s, ratings = proxy_set(code)
    out = {"held_out_pods": int(len(test) / (8 * 42)), "held_out_picks": len(test), "read_seconds": round(read_seconds, 1),
           "bots": {}}
    for name, bot in bots_for(code, s, ratings).items():
        t0 = time.perf_counter()
        result = agreement(test, ranks_from_scores(test, score_matrix(bot, test, s)))
        out["bots"][name] = {"all": result["all"], "unforced": result["unforced"],
                             "by_pack_pick_top1": [result["by_pick"][p]["top1"] for p in sorted(result["by_pick"])],
                             "seconds": round(time.perf_counter() - t0, 2)}
        a = result["all"]
        print(f"  {code} {name:18s} top-1 {a['top1']:.3f}  top-3 {a['top3']:.3f}  unforced top-1 "
              f"{result['unforced']['top1']:.3f}  mean rank {a['mean_rank']:.2f}", flush=True)
    return out


def pod_speed(code: str, pods: int) -> dict:
    """Seconds for a full 8-seat pod plus 8 auto-built decks, per bot line-up."""
    from drafts.core.deckbuild import build_deck
    from drafts.core.pod import DraftPod, simulate

    s, ratings = proxy_set(code)
    bots = bots_for(code, s, ratings)
    lineups = {"rating (baseline)": [bots["rating"]] * 8, "draftsim": [bots["draftsim"]] * 8}
    for family in ("archetype", "neural"):
        if family in bots:
            lineups[family] = [bots[family]] * 8
    if "neural" in bots and "archetype" in bots:
        lineups["mixed"] = [bots[("neural", "archetype", "draftsim")[i % 3]] for i in range(8)]
    out = {}
    for label, lineup in lineups.items():
        times = []
        for seed in range(pods):
            t0 = time.perf_counter()
            pod = DraftPod(s, seats=8, seed=seed)
            simulate(pod, dict(enumerate(lineup)))
            for seat in range(8):
                build_deck(pod.pool(seat), s, ratings=ratings)
            times.append(time.perf_counter() - t0)
        times.sort()
        out[label] = {"median_s": round(statistics.median(times), 4), "p95_s": round(times[int(0.95 * (len(times) - 1))], 4),
                      "picks": 8 * 42}
    base = out["rating (baseline)"]["median_s"]
    for label in out:
        out[label]["ratio_to_baseline"] = round(out[label]["median_s"] / base, 2)
        print(f"  pod {label:18s} median {out[label]['median_s'] * 1000:.0f} ms  p95 {out[label]['p95_s'] * 1000:.0f} ms",
              flush=True)
    return out


def p1p1() -> list[dict]:
    from drafts.bots.archetype import default_bot
    from drafts.bots.base import PickContext
    from drafts.bots.baselines import RatingBot
    from drafts.bots.draftsim import DraftsimBot
    from drafts.bots.ratings import ratings_from_draftsim_m19, ratings_from_forge, read_khakhalin_avg_pick, spearman_p1p1
    from drafts.core.cards import read_17lands_expansion

    d = data_dir()
    out = []
    for code in ("M19", "DOM", "GRN", "RNA", "WAR"):
        human = d / "khakhalin_draftsim_derived" / f"basic_data_{code}.csv"
        if not human.exists():
            continue
        s = read_17lands_expansion(d / "statistical-drafting" / "cards" / "cards.csv", code)
        sources = {"forge": ratings_from_forge(d / "forge_reeforge" / "draft" / "rankings.txt", code)}
        if code == "M19":
            sources["draftsim-m19"] = ratings_from_draftsim_m19(d / "khakhalin_draftsim_derived" / "m19_rating.tsv")
        avg = read_khakhalin_avg_pick(human)
        for source, ratings in sources.items():
            if not ratings:
                continue
            for name, bot in (("draftsim", DraftsimBot(ratings)), ("rating", RatingBot(ratings))):
                ranking = bot.pick(s.names, [], PickContext(set_list=s))
                scores = {n: float(len(ranking) - i) for i, (n, _) in enumerate(ranking)}
                r = spearman_p1p1(scores, avg)
                out.append({"set": code, "bot": name, "ratings": source, **r})
                print(f"  p1p1 {code} {name} ({source}): rho {r['rho']:.3f} over {r['n']} cards", flush=True)
        bot = default_bot(s)
        ranking = bot.pick(s.names, [], PickContext(set_list=s))
        r = spearman_p1p1({n: float(len(ranking) - i) for i, (n, _) in enumerate(ranking)}, avg)
        out.append({"set": code, "bot": "archetype-default", "ratings": "colour and rarity", **r})
    return out


def svg(agreements: dict) -> str:
    from common.figures import figure_bytes, new_figure as _new_figure

    sets = list(agreements)
    names = [n for n in ("random", "rating", "draftsim", "archetype-default", "archetype", "neural")
             if any(n in agreements[c]["bots"] for c in sets)]
    fig = _new_figure(figsize=(9, 4.2), dpi=100)
    ax = fig.add_subplot(1, 1, 1)
    width = 0.8 / len(names)
    colors = ["#bbbbbb", "#8c8c8c", "#d95f02", "#e6ab02", "#7570b3", "#1b9e77"]
    for i, name in enumerate(names):
        xs = [j + i * width for j in range(len(sets))]
        ys = [agreements[c]["bots"].get(name, {}).get("all", {}).get("top1", 0) for c in sets]
        ax.bar(xs, ys, width=width * 0.95, label=name, color=colors[i % len(colors)])
    ax.axhline(CEILING, color="#333333", linestyle="--", linewidth=1, label=f"ceiling ≈ {CEILING}")
    ax.set_xticks([j + 0.4 - width / 2 for j in range(len(sets))], sets)
    ax.set_ylabel("top-1 agreement, held-out pods")
    ax.set_ylim(0, 0.75)
    ax.legend(fontsize=8, ncol=3, frameon=False, loc="upper left")
    ax.set_title("Draft bots: agreement with logged picks")
    fig.subplots_adjust(left=0.08, right=0.98, bottom=0.1, top=0.9)
    return figure_bytes(fig, "svg").decode()


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sets", nargs="+", default=["BLB", "DSK", "FDN"])
    parser.add_argument("--pods", type=int, default=20, help="pods timed per bot line-up")
    args = parser.parse_args()
    import torch

    torch.set_num_threads(1)
    started = time.perf_counter()
    agreements = {}
    for code in args.sets:
        print(f"{code}: agreement on held-out pods", flush=True)
        agreements[code] = agreement_for_set(code)
    speed = pod_speed(args.sets[0], args.pods)
    firsts = p1p1()
    targets = {}
    for code, result in agreements.items():
        for family, target in TARGETS.items():
            got = result["bots"].get(family, {}).get("all", {}).get("top1")
            targets[f"{family} {code}"] = {"target": target, "top1": got, "met": got is not None and got >= target}
    report = {
        "benchmark": "drafts",
        "command": command("drafts"),
        "date": dt.datetime.now().isoformat(timespec="seconds"),
        "machine": machine(torch_threads=torch.get_num_threads()),
        "ceiling_top1": CEILING,
        "agreement": agreements,
        "targets": targets,
        "pod_speed": {"set": args.sets[0], "pods": args.pods, "lineups": speed, "target_s": 0.5},
        "p1p1_spearman": firsts,
        "seconds": round(time.perf_counter() - started, 1),
    }
    write_result(report, RESULTS / "drafts.json", newline=False, indent=1)
    (RESULTS / "drafts.svg").write_text(svg(agreements))
    print(f"wrote bench/results/drafts.json and drafts.svg in {report['seconds']}s")
    for key, t in targets.items():
        print(f"  target {key}: {t['top1']} vs {t['target']} {'met' if t['met'] else 'NOT met'}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
