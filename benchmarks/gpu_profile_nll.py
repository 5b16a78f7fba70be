"""Where the packed NLL engine's time goes on a GPU: torch.profiler over packed batches.

Issue 57: on an H200 the packed engine reached 75% of the Llama-3.1-8B shape's raw forward rate
and 38.9% MFU at 128 rows and 16,384 tokens per batch (docs/engine.md, "Measured: packed
batches"), short of the goals of 85% and 40%. This script measures what the doc can only
suppose. Run on the GPU machine from the repository root (under 3 minutes on one H200):

    python benchmarks/gpu_profile_nll.py

It builds the shape as ``benchmarks/gpu_nll_throughput.py`` does (random weights, bfloat16; its
functions imported), packs the default sample's 27 stories (the committed sentence lengths) at
``--setting`` (default ``packed:128:16384``), warms up as that script does, and then:

1. scores the chosen batches twice without the profiler (the second wall time is the
   reference: the first meets each batch shape for the first time);
2. scores the same batches under ``torch.profiler`` (CPU and CUDA), with ranges around each
   forward pass (``model.forward``) and each padded pass (``padded_pass``: the host-side
   building of the batch, the forward, the log-softmax and the copy back);
3. times one full batch of ``n_batch / 512`` rows of 512 tokens with no attention mask (the raw
   forward rate's setting) and with a padding mask of one padded position per row (which
   keeps transformers' SDPA path from passing ``is_causal`` and makes it pass an explicit mask).

Prints the top 15 ops by CUDA time (self time), the share of the profiled wall time with no GPU
kernel, copy or memset running (host-side gaps), the host time in and around the forward passes,
the attention implementation, and the mask check; the figures go to
``$OUT/gpu_profile_nll.json`` (or ``--out``). ``--trace`` keeps the Chrome trace there too (tens
of MB). ``BENCH_DEVICE=cpu ... --shape toy`` runs it end to end on a CPU (no GPU figures).
"""

from __future__ import annotations

import argparse
import functools
import json
import os
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO / "src"))
sys.path.insert(0, str(REPO / "benchmarks"))

from gpu_nll_throughput import (  # noqa: E402
    DEFAULT_LENGTHS,
    DEVICE,
    FORMULATIONS,
    MAX_HISTORY,
    SHAPES,
    bf16_peak,
    build,
    model_flops,
    setting,
    stories_of,
    synchronize,
)

TOP = 15


def chosen(batches: list, count: int) -> list:
    """``count`` batches spread evenly over the shard, in order (0: all of them)."""
    if count <= 0 or count >= len(batches):
        return list(batches)
    step = (len(batches) - 1) / (count - 1) if count > 1 else 0
    return [batches[round(i * step)] for i in range(count)]


def busy_share(trace: Path) -> dict:
    """From a Chrome trace: the profiled window (the host's ``profiled batches`` range), the time
    with at least one GPU kernel, copy or memset running (union of their intervals), and the
    idle share of the window."""
    events = json.loads(trace.read_text()).get("traceEvents", [])
    device = sorted(
        (float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0)))
        for e in events
        if e.get("ph") == "X" and e.get("cat") in ("kernel", "gpu_memcpy", "gpu_memset")
    )
    host = [
        (float(e["ts"]), float(e["ts"]) + float(e.get("dur", 0)))
        for e in events
        if e.get("ph") == "X"
        and e.get("cat") == "user_annotation"
        and e.get("name") == "profiled batches"
    ]
    if not host:
        return {"window_us": None, "gpu_busy_us": None, "gpu_idle_share": None}
    start, end = min(a for a, _ in host), max(b for _, b in host)
    busy, cur_a, cur_b = 0.0, None, None
    for a, b in device:
        a, b = max(a, start), min(b, end)
        if b <= a:
            continue
        if cur_b is None or a > cur_b:
            if cur_b is not None:
                busy += cur_b - cur_a
            cur_a, cur_b = a, b
        else:
            cur_b = max(cur_b, b)
    if cur_b is not None:
        busy += cur_b - cur_a
    window = end - start
    return {
        "window_us": window,
        "gpu_busy_us": busy if device else None,
        "gpu_idle_share": 1 - busy / window if device and window else None,
        "device_events": len(device),
    }


def ranges(prof: Any) -> dict:
    """Host (CPU) time of the labelled ranges, summed: padded passes and forward passes."""
    out = {}
    for avg in prof.key_averages():
        if avg.key in ("padded_pass", "model.forward", "profiled batches"):
            out[avg.key] = {"count": avg.count, "cpu_total_us": avg.cpu_time_total}
    return out


def top_ops(prof: Any, n: int) -> list[dict]:
    """The ``n`` ops with the most self CUDA time (self CPU time on a CPU run)."""

    def self_device(avg: Any) -> float:
        return float(
            getattr(avg, "self_device_time_total", None)
            or getattr(avg, "self_cuda_time_total", 0)
            or 0
        )

    def device_total(avg: Any) -> float:
        return float(
            getattr(avg, "device_time_total", None) or getattr(avg, "cuda_time_total", 0) or 0
        )

    labels = ("padded_pass", "model.forward", "profiled batches")
    avgs = [a for a in prof.key_averages() if a.key not in labels]
    on_gpu = any(self_device(a) for a in avgs)
    avgs.sort(key=lambda a: -(self_device(a) if on_gpu else a.self_cpu_time_total))
    total = (
        sum(self_device(a) for a in avgs) if on_gpu else sum(a.self_cpu_time_total for a in avgs)
    )
    rows = []
    for a in avgs[:n]:
        own = self_device(a) if on_gpu else a.self_cpu_time_total
        rows.append(
            {
                "name": a.key,
                "calls": a.count,
                "self_cuda_us" if on_gpu else "self_cpu_us": own,
                "share": own / total if total else None,
                "cuda_total_us": device_total(a),
                "cpu_total_us": a.cpu_time_total,
            }
        )
    return rows


def mask_check(model: Any, rows: int, width: int, vocab: int, repeats: int = 5) -> dict:
    """Seconds (median of ``repeats``) of one forward pass over ``rows`` x ``width`` tokens with
    no attention mask and with one padded position at the end of every row."""
    import torch

    ids = torch.randint(1, vocab, (rows, width), device=DEVICE)
    padded = torch.ones((rows, width), dtype=torch.long, device=DEVICE)
    padded[:, -1] = 0
    out = {}
    with torch.inference_mode():
        for name, kwargs in (("no_mask", {}), ("padding_mask", {"attention_mask": padded})):
            model(input_ids=ids, use_cache=False, **kwargs)
            synchronize()
            times = []
            for _ in range(repeats):
                began = time.perf_counter()
                model(input_ids=ids, use_cache=False, **kwargs)
                synchronize()
                times.append(time.perf_counter() - began)
            out[name] = sorted(times)[repeats // 2]
    out["rows"], out["width"] = rows, width
    out["slowdown"] = out["padding_mask"] / out["no_mask"]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shape", default="Llama-3.1-8B", choices=list(SHAPES))
    parser.add_argument("--setting", type=setting, default=("packed", 128, 16384))
    parser.add_argument("--batches", type=int, default=6, help="batches profiled (0: all)")
    parser.add_argument("--lengths", type=Path, default=DEFAULT_LENGTHS)
    parser.add_argument("--stories", type=int, default=None, help="the first N stories only")
    default_out = Path(os.environ.get("OUT", REPO / "benchmarks/out")) / "gpu_profile_nll.json"
    parser.add_argument("--out", type=Path, default=default_out)
    parser.add_argument("--trace", action="store_true", help="keep the Chrome trace beside it")
    args = parser.parse_args()

    import torch
    from torch.profiler import ProfilerActivity, profile, record_function

    from storyflow.lm.backends.transformers import TransformersScorer
    from storyflow.lm.nll.engine import score_story
    from storyflow.lm.nll.packing import pack, padded_tokens, score_packed, shard_jobs

    mode, n_seq, n_batch = args.setting
    if mode != "packed":
        sys.exit("--setting must be packed:N_SEQ:N_BATCH")
    began_all = time.perf_counter()
    lengths = json.loads(args.lengths.read_text())[: args.stories]
    device = torch.cuda.get_device_name(0) if DEVICE == "cuda" else DEVICE
    model = build(args.shape, torch.bfloat16)
    vocab = model.config.vocab_size
    stories = stories_of(lengths, vocab)
    jobs = shard_jobs(stories, FORMULATIONS, 0, MAX_HISTORY, 8192, "shared")
    batches = pack(jobs, n_seq, n_batch)
    picked = chosen(batches, args.batches)
    real = sum(jobs[j].width(k) for batch in picked for j, k in batch)
    padded = padded_tokens(jobs, picked)
    print(
        f"{device}, {args.shape} ({model.config._attn_implementation} attention), "
        f"packed {n_seq}/{n_batch}: {len(batches)} batches in the shard, {len(picked)} profiled "
        f"({real:,} tokens, {padded / real:.2f}x padded)",
        flush=True,
    )

    scorer = TransformersScorer.of_loaded(model, None, device=DEVICE, n_seq=n_seq, n_batch=n_batch)
    score_story(scorer, stories[0], FORMULATIONS, 0, MAX_HISTORY, 8192)  # warm-up, as the benchmark
    synchronize()

    def done(story: int, terms: dict) -> None:
        pass

    walls = []  # twice: the first run meets each batch shape for the first time
    for _ in range(2):
        began = time.perf_counter()
        score_packed(scorer, jobs, picked, done, desc="unprofiled")
        synchronize()
        walls.append(time.perf_counter() - began)
    plain = walls[-1]

    forward = model.forward  # ranges around the forward passes and the padded passes

    @functools.wraps(forward)
    def labelled_forward(*a: Any, **k: Any) -> Any:
        with record_function("model.forward"):
            return forward(*a, **k)

    padded_pass = scorer._padded_pass

    def labelled_pass(*a: Any, **k: Any) -> Any:
        with record_function("padded_pass"):
            return padded_pass(*a, **k)

    model.forward = labelled_forward
    scorer._padded_pass = labelled_pass
    activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if DEVICE == "cuda" else [])
    with profile(activities=activities) as prof:
        began = time.perf_counter()
        with record_function("profiled batches"):
            score_packed(scorer, jobs, picked, done, desc="profiled")
            synchronize()
        profiled = time.perf_counter() - began
    model.forward = forward
    del scorer._padded_pass

    keep = args.out.parent if args.trace else Path(tempfile.mkdtemp())
    keep.mkdir(parents=True, exist_ok=True)
    trace = keep / "gpu_profile_nll-trace.json"
    prof.export_chrome_trace(str(trace))
    gaps = busy_share(trace)
    if not args.trace:
        trace.unlink()
    ops = top_ops(prof, TOP)
    host = ranges(prof)
    flops = model_flops(model, [jobs[j].width(k) for batch in picked for j, k in batch])
    peak = bf16_peak(device, None)
    rows = max(1, n_batch // 512)
    masks = mask_check(model, rows, min(512, n_batch), vocab)

    on_gpu = DEVICE == "cuda"
    unit = "self CUDA" if on_gpu else "self CPU"
    print(f"\ntop {TOP} ops by {unit} time (profiled batches):")
    for row in ops:
        own = row.get("self_cuda_us", row.get("self_cpu_us"))
        share = 100 * (row["share"] or 0)
        print(f"  {own / 1e3:10.1f} ms  {share:5.1f}%  {row['calls']:7d}x  {row['name']}")
    forward_us = host.get("model.forward", {}).get("cpu_total_us", 0)
    pass_us = host.get("padded_pass", {}).get("cpu_total_us", 0)
    window_us = host.get("profiled batches", {}).get("cpu_total_us", profiled * 1e6)
    print(
        f"\nwall: {plain:.2f} s unprofiled, {profiled:.2f} s profiled "
        f"= {real / plain:,.0f} tok/s unprofiled"
        + (f", MFU {100 * flops / plain / peak:.1f}%" if peak and on_gpu else "")
    )
    print(
        f"host time: padded passes {pass_us / 1e6:.2f} s, of which forward calls "
        f"{forward_us / 1e6:.2f} s; outside the padded passes "
        f"{max(0.0, window_us - pass_us) / 1e6:.2f} s (packing.py's bookkeeping)"
    )
    if gaps["gpu_idle_share"] is not None:
        gaps["gpu_idle_share_unprofiled"] = max(0.0, 1 - gaps["gpu_busy_us"] / 1e6 / plain)
        print(
            f"GPU idle (no kernel, copy or memset running) {100 * gaps['gpu_idle_share']:.1f}% of "
            f"the profiled window ({gaps['window_us'] / 1e6:.2f} s); the same busy time against "
            f"the unprofiled wall: {100 * gaps['gpu_idle_share_unprofiled']:.1f}% idle"
        )
    else:
        print("GPU idle share: no GPU events (a CPU run)")
    print(
        f"one batch of {masks['rows']} x {masks['width']} tokens: {masks['no_mask'] * 1e3:.1f} ms "
        f"without a mask, {masks['padding_mask'] * 1e3:.1f} ms with a padding mask "
        f"({masks['slowdown']:.2f}x)"
    )
    report = {
        "device": device,
        "torch": torch.__version__,
        "shape": args.shape,
        "attn_implementation": model.config._attn_implementation,
        "setting": [mode, n_seq, n_batch],
        "batches_in_shard": len(batches),
        "batches_profiled": len(picked),
        "tokens": real,
        "padded_tokens": padded,
        "seconds_unprofiled": plain,
        "seconds_unprofiled_first": walls[0],
        "seconds_profiled": profiled,
        "tokens_per_s_unprofiled": real / plain,
        "mfu_unprofiled": flops / plain / peak if peak and on_gpu else None,
        "host_ranges": host,
        **gaps,
        "top_ops": ops,
        "mask_check": masks,
        "script_seconds": time.perf_counter() - began_all,
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(report, indent=2))
    print(f"-> {args.out} ({report['script_seconds']:.0f} s in all)")


if __name__ == "__main__":
    main()
