"""Scale-out on one machine: what a second Daphne process and a second Celery worker buy.

    .venv/bin/python -m bench.scale [--quick] [--sizes 1 2 3 4 6 8] [--jobs 32] [--output PATH]

Setup as bench/pods.py (its clients, processes and checks are in bench/harness/: podload.py, processes.py): a throw-away PostgreSQL database
(``mtg_scale``, or BENCH_SCALE_DB), Redis under a per-run prefix (database 14, or BENCH_PODS_REDIS), the services
stack with the settings' channel layer (MTG_CHANNEL_LAYER), the hand-made TST set.

1. Web: for N = 1, 2, 3, ... pods of 8 people drafting at once, three runs taken in turn (so that all see the same
   machine): on one Daphne process; on two with each pod whole on one of them (pods in turn, as a load balancer
   keyed on the pod's URL would share them out); on two with every pod's seats split (0-3 on the first, 4-7 on the
   second: every pack from seat 3 to 4 and from 7 to 0 crosses processes through the channel layer). Per run: pick
   -> the neighbour's next pack p50/p95/p99, picks/s, Daphne CPU per pick, lost and duplicated picks (the database
   against what every client was told; must be 0). Stops once all three are over 200 ms at p95. Figure: the
   largest N under 200 ms with each.
2. Workers: a tiny Manamorphosis model trained here on a generated corpus (the completion tests' own), then
   ``--jobs`` completions (``full`` sampler) queued at once, done by one worker, then by two (``-n w1@%h``,
   ``-n w2@%h``; batches of COMPLETION_BATCH_SIZE, 8); completions per second from the first queued to the last
   done, and how many each worker ran. Each worker first runs a warm-up job (its model load is not timed).

The machine's load average is recorded at the start, the end and with every run: the machine is shared, and
another process changes the figures. Writes bench/results/scale.json and .svg and prints a table. --quick: N = 1
and 2, 8 jobs.
"""
from __future__ import annotations

import argparse
import datetime as dt
import io
import os
import shlex
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.harness import podload, processes
from bench.harness.paths import RESULTS, ROOT, command
from bench.harness.report import write_result

JOB_CARDS = [("Lightning Bolt", 4), ("Goblin Guide", 4)]


# (key, Daphne processes, each pod whole on one process); "2-split": every pod's seats 0-3 on one, 4-7 on the other
WEB = [("1", 1, False), ("2", 2, True), ("2-split", 2, False)]


def web_part(sizes: list[int], webs: list[processes.Proc], bot: str, min_sizes: int) -> dict:
    ports = [w.port for w in webs]
    runs: dict[str, list[dict]] = {key: [] for key, _, _ in WEB}
    stopped = "end of list"
    for n in sizes:
        for key, k, by_pod in WEB:  # in turn at each N, so that all see the same machine
            r = podload.load_run(n, ports[:k], bot, 0, f"{key}n{n}", timeout=max(60.0, 10.0 * n), daphne=webs[:k],
                              by_pod=by_pod)
            r.pop("_samples", None)
            runs[key].append(r)
            nx = r["next_pack_ms"]
            print(f"  {key:<7} N={n:<2} {r['picks_per_s']} picks/s  next-pack p50/p95/p99 {nx.get('p50')}/{nx.get('p95')}/"
                  f"{nx.get('p99')} ms  Daphne {r['cpu_ms_per_pick']['daphne']} ms CPU/pick  load {r['loadavg_1min']}  db "
                  f"{'ok' if r['db']['ok'] else 'FAIL'}  ({r['wall_seconds']} s)", flush=True)
        if all(rs[-1]["next_pack_ms"].get("p95", float("inf")) > podload.THRESHOLD_MS for rs in runs.values()) \
                and len(runs["1"]) >= min_sizes:
            stopped = f"all over {podload.THRESHOLD_MS:.0f} ms at N={n}"
            break
    best = {key: max((r["pods"] for r in rs if r["next_pack_ms"].get("p95", float("inf")) < podload.THRESHOLD_MS), default=0)
            for key, rs in runs.items()}
    same_n = {}  # two processes against one at the same N
    for i, one in enumerate(runs["1"]):
        row = {}
        for key in ("2", "2-split"):
            two = runs[key][i]
            if one["next_pack_ms"].get("p95") and two["next_pack_ms"].get("p95") and one["picks_per_s"] and two["picks_per_s"]:
                row[key] = {"p95_one_over_two": round(one["next_pack_ms"]["p95"] / two["next_pack_ms"]["p95"], 2),
                            "picks_per_s_two_over_one": round(two["picks_per_s"] / one["picks_per_s"], 2)}
        same_n[one["pods"]] = row
    return {"runs": runs, "max_pods_p95_under_threshold": best,
            "ratio_max_pods_2_over_1": round(best["2"] / best["1"], 2) if best["1"] else None, "same_n": same_n,
            "stopped": stopped}


def train_tiny_model(workdir: Path) -> dict:
    """The completion tests' tiny stack through the real commands: the sample catalogue, 40 generated decks,
    Doc2Vec (dim 8) and a 1-layer Manamorphosis denoiser trained for 25 steps."""
    from django.core.management import call_command

    from tests.decks.completion.conftest import import_tiny_corpus, train_tiny_diffusion

    t = time.perf_counter()
    call_command("import_cards", atomic=str(ROOT / "tests" / "fixtures" / "AtomicCards.sample.json"), no_oracle=True,
                 stdout=io.StringIO(), stderr=io.StringIO())
    import_tiny_corpus(workdir)
    train_tiny_diffusion()
    return {"seconds": round(time.perf_counter() - t, 1), "model": "deck_diffusion d_model 16, 1 layer, 25 steps",
            "corpus_decks": 40}


def queue_jobs(n: int, seed0: int) -> list:
    from decks.completion.service import CompletionRequest, create_job
    from decks.tasks import enqueue_completion

    jobs = []
    for i in range(n):
        jobs.append(create_job(CompletionRequest("modern", JOB_CARDS, [], True, "full", seed0 + i, "manamorphosis")))
        enqueue_completion(jobs[-1])
    return jobs


def wait_jobs(jobs: list, timeout: float) -> list:
    from decks.models import CompletionJob

    ids = [j.pk for j in jobs]
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        rows = list(CompletionJob.objects.filter(pk__in=ids))
        if all(r.status in ("done", "failed") for r in rows):
            return rows
        time.sleep(0.05)
    raise TimeoutError(f"completions not done after {timeout} s")


def worker_run(k: int, workers: list[processes.Proc], jobs: int, seed0: int) -> dict:
    """``jobs`` completions queued at once, run by the first ``k`` workers (started here, stopped at the end)."""
    from decks.models import Deck

    for w in workers[:k]:
        w.start()
    try:
        warmed = {r.worker for r in wait_jobs(queue_jobs(k, seed0), 300)}  # every worker loads the model once
        for i in range(20):  # a worker that took no warm-up job (another batched it) takes one of the next
            if len(warmed) >= k:
                break
            warmed |= {r.worker for r in wait_jobs(queue_jobs(1, seed0 + k + i), 300)}
        decks0 = Deck.objects.filter(source="completion").count()
        load0 = os.getloadavg()[0]
        cpu0 = [processes.cpu_seconds(w.proc.pid) for w in workers[:k]]
        t = time.perf_counter()
        rows = wait_jobs(queue_jobs(jobs, seed0 + 1000), 600)
        took = max(r.finished for r in rows) - min(r.created for r in rows)
        wall = time.perf_counter() - t
        cpu = [round(processes.cpu_seconds(w.proc.pid) - c, 1) for w, c in zip(workers[:k], cpu0)]
    finally:
        for w in workers[:k]:
            w.stop()
    by_worker: dict[str, int] = {}
    for r in rows:
        by_worker[r.worker] = by_worker.get(r.worker, 0) + 1
    seconds = took.total_seconds()
    return {"workers": k, "jobs": jobs, "done": sum(r.status == "done" for r in rows),
            "failed": sum(r.status == "failed" for r in rows), "runs_over_one": sum(r.attempts > 1 for r in rows),
            "decks_saved": Deck.objects.filter(source="completion").count() - decks0,
            "seconds": round(seconds, 2), "wall_seconds": round(wall, 2),
            "completions_per_s": round(jobs / seconds, 2) if seconds else None,
            "jobs_by_worker": by_worker, "worker_cpu_seconds": cpu,
            "loadavg_1min": [round(load0, 2), round(os.getloadavg()[0], 2)]}


def plot(doc: dict, path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib.figure import Figure

    fig = Figure(figsize=(11, 4.2), layout="constrained")
    a, b = fig.subplots(1, 2, width_ratios=[2, 1])
    web = doc["web"]
    labels = {"1": "1 Daphne process", "2": "2, each pod on one", "2-split": "2, every pod's seats split"}
    for k, color in (("1", "#9a9a9a"), ("2", "#1f6fb4"), ("2-split", "#d3202a")):
        rs = web["runs"][k]
        a.plot([r["pods"] for r in rs], [r["next_pack_ms"].get("p95") for r in rs], "-o", color=color,
               label=f"{labels[k]} (max N {web['max_pods_p95_under_threshold'][k]})")
    a.axhline(podload.THRESHOLD_MS, color="#000000", lw=0.8, ls=":")
    a.set_xlabel("concurrent pods (8 people each)")
    a.set_ylabel("pick -> next pack p95 (ms)")
    a.set_title("web: one or two Daphne processes")
    a.legend(fontsize=8)
    wk = doc["workers"]["runs"]
    b.bar([f"{r['workers']} worker{'s' if r['workers'] > 1 else ''}" for r in wk], [r["completions_per_s"] or 0 for r in wk],
          color=["#9a9a9a", "#2e8b3d"][:len(wk)])
    b.set_ylabel("completions / s")
    b.set_title("workers: deck completions")
    load = doc["loadavg"]
    fig.suptitle(f"Scale-out on {doc['machine'].get('cpu_count')} shared CPUs, {doc['config']['channel_layer']} "
                 f"channel layer (load average {load['start'][0]} at the start, {load['end'][0]} at the end)", fontsize=10)
    fig.savefig(path, format="svg")


def summary(doc: dict) -> str:
    web, wk = doc["web"], doc["workers"]
    head = f"{'picks/s':>7} {'p50':>6} {'p95':>6} {'db':>4}"
    lines = [f"scale-out ({doc['mode']}): {doc['machine'].get('cpu_count')} CPUs, channel layer "
             f"{doc['config']['channel_layer']}, load average {doc['loadavg']['start']} -> {doc['loadavg']['end']}", "",
             "web: pick -> next pack (ms); one Daphne process | two, each pod on one | two, every pod's seats split",
             f"{'pods':>4} | {head} | {head} | {head}"]
    for rows in zip(*(web["runs"][key] for key, _, _ in WEB)):
        cells = []
        for r in rows:
            nx = r["next_pack_ms"]
            cells.append(f"{r['picks_per_s'] or 0:>7} {nx.get('p50', '-'):>6} {nx.get('p95', '-'):>6} "
                         f"{'ok' if r['db']['ok'] else 'FAIL':>4}")
        lines.append(f"{rows[0]['pods']:>4} | " + " | ".join(cells))
    best = web["max_pods_p95_under_threshold"]
    lines += [f"max pods with p95 < {podload.THRESHOLD_MS:.0f} ms: {best['1']} with one process, {best['2']} with two "
              f"(each pod on one), {best['2-split']} with two (seats split); stopped: {web['stopped']}", "",
              "workers: completions/s (jobs by worker)"]
    for r in wk["runs"]:
        lines.append(f"  {r['workers']}: {r['completions_per_s']} /s, {r['done']}/{r['jobs']} done in {r['seconds']} s, "
                     f"{r['jobs_by_worker']}, failed {r['failed']}, run twice {r['runs_over_one']}")
    lines.append(f"ratio two workers / one: {wk['ratio_2_over_1']}")
    return "\n".join(lines)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--quick", action="store_true", help="N = 1 and 2, 8 jobs")
    ap.add_argument("--sizes", type=int, nargs="+", help="pod counts (default 1 2 3 4 6 8; quick 1 2)")
    ap.add_argument("--jobs", type=int, help="completions per worker run (default 32; quick 8)")
    ap.add_argument("--bot", default="draftsim")
    ap.add_argument("--output", type=Path, default=RESULTS / "scale.json")
    args = ap.parse_args(argv)
    sizes = args.sizes or ([1, 2] if args.quick else [1, 2, 3, 4, 6, 8])
    jobs = args.jobs or (8 if args.quick else 32)
    t_all = time.perf_counter()
    processes.BENCH_DB = os.environ.get("BENCH_SCALE_DB", "mtg_scale")
    processes.configure_env()
    workdir = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    os.environ.update({"MTG_MODEL_DIR": str(workdir / "models"), "MTG_DATASET_DIR": str(workdir / "datasets"),
                       "OMP_NUM_THREADS": "1"})
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    load_start = [round(x, 2) for x in os.getloadavg()]
    doc: dict = {"benchmark": "scale", "mode": "quick" if args.quick else "full",
                 "date": dt.datetime.now().isoformat(timespec="seconds"),
                 "command": ".venv/bin/" + command("scale", argv or sys.argv[1:])}
    db_made = False
    try:
        processes.recreate_db()
        db_made = True
        subprocess.run([processes.PY, "manage.py", "migrate", "--noinput", "-v", "0"], cwd=ROOT, env=dict(os.environ), check=True)
        import django

        django.setup()
        from django.conf import settings

        from tests.drafts.conftest import make_set

        make_set("TST")
        webs = []
        for n in (1, 2):
            port = processes.free_port()
            argv_web = [a.replace("{port}", str(port)).replace("{app}", "mtgsite.asgi:application") for a in processes.DAPHNE_ARGV]
            webs.append(processes.Proc(f"daphne{n}", argv_web, workdir, port=port))
        queues = ",".join(settings.CELERY_ALL_QUEUES)
        argv_worker = [queues if a == processes.TAG else a for a in processes.WORKER_ARGV]
        workers = [processes.Proc(f"w{n}", argv_worker + ["-n", f"w{n}@%h"], workdir) for n in (1, 2)]
        doc["machine"] = processes.services_machine()
        doc["config"] = {"seats": podload.SEATS, "picks_per_seat": podload.PER_SEAT, "set": "TST", "bot": args.bot,
                         "channel_layer": settings.MTG_CHANNEL_LAYER, "threshold_ms": podload.THRESHOLD_MS,
                         "database": processes.BENCH_DB, "sizes": sizes, "jobs": jobs, "sampler": "full",
                         "completion_batch_size": settings.COMPLETION_BATCH_SIZE,
                         "daphne": " ".join(shlex.quote(a) for a in webs[0].argv),
                         "worker": " ".join(shlex.quote(a) for a in workers[0].argv)}
        print(f"database {processes.BENCH_DB}, channel layer {settings.MTG_CHANNEL_LAYER}, load {load_start}", flush=True)

        for w in webs:
            w.start()
        podload.load_run(1, [w.port for w in webs], args.bot, 0, "warm", timeout=90, daphne=webs)  # imports, caches
        doc["web"] = web_part(sizes, webs, args.bot, min_sizes=len(sizes) if args.quick else 3)
        for w in webs:
            w.stop()

        print("workers: training the tiny completion model", flush=True)
        doc["model"] = train_tiny_model(workdir)
        runs = []
        for k in (1, 2):
            r = worker_run(k, workers, jobs, seed0=k * 10_000)
            runs.append(r)
            print(f"  {k} worker(s): {r['completions_per_s']} completions/s ({r['done']}/{jobs} in {r['seconds']} s) "
                  f"{r['jobs_by_worker']}  load {r['loadavg_1min']}", flush=True)
        ratio = (round(runs[1]["completions_per_s"] / runs[0]["completions_per_s"], 2)
                 if runs[0]["completions_per_s"] and runs[1]["completions_per_s"] else None)
        doc["workers"] = {"runs": runs, "ratio_2_over_1": ratio}
        doc["loadavg"] = {"start": load_start, "end": [round(x, 2) for x in os.getloadavg()]}
        doc["server_tracebacks"] = {p.name: len(p.tracebacks()) for p in webs + workers}
        web_ok = all(r["db"]["ok"] for rs in doc["web"]["runs"].values() for r in rs)
        work_ok = all(r["done"] == r["jobs"] == r["decks_saved"] and not r["runs_over_one"] for r in runs)
        doc["ok"] = web_ok and work_ok and len(runs[1]["jobs_by_worker"]) == 2
        doc["total_seconds"] = round(time.perf_counter() - t_all, 1)
        args.output.parent.mkdir(parents=True, exist_ok=True)
        write_result(doc, args.output, default=str)
        plot(doc, args.output.with_suffix(".svg"))
        print()
        print(summary(doc))
        print(f"\nwrote {args.output} and {args.output.with_suffix('.svg')} ({doc['total_seconds']} s); logs in {workdir}")
        return 0 if doc["ok"] else 1
    finally:
        processes.kill_all()
        try:
            processes.clean_redis()
        except Exception as exc:
            print(f"(could not clean Redis: {exc})", file=sys.stderr)
        if db_made:
            try:
                processes.drop_db()
            except Exception as exc:
                print(f"(could not drop {processes.BENCH_DB}: {exc})", file=sys.stderr)


if __name__ == "__main__":
    sys.exit(main())
