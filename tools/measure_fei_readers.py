"""The fabula-entropy readers' validity with and without calibration (docs/fabula_entropy.md).

    .venv/bin/python tools/measure_fei_readers.py RUN_DIR NAME=VARIANT:GGUF ... [--corpora c ...]

RUN_DIR holds ``results/<corpus>/fabula_entropy/{versions,questions}.parquet`` (rule
make_fabula_items). For each corpus and model (VARIANT ``instruct`` or ``base``), the questions
are answered once without calibration (one prompt variant, ``standard``, the shared-prefix
scorer), then the content-free priors of each calibration mode are asked after them, as rule
answer_fabula_questions does; each mode's P(yes) goes through the validity check. Prints one
row per corpus, model and mode: answers asked (questions + priors), seconds, control AUC and
balanced accuracy with bootstrap CIs, the verdict. Loads the models: run it on a free machine.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import numpy as np

from storyflow import tables
from storyflow.lm.connect import open_model
from storyflow.lm.specs import ModelSpec
from storyflow.measures.fabula_entropy import compare, readers

STATS = {"confidence": 0.95, "resamples": 2000, "seed": 2022, "min_group_size": 5}
THRESHOLDS = {"min_auc": 0.8, "min_balanced_accuracy": 0.7}
LABELS = {"yes": ["Yes", "yes"], "no": ["No", "no"]}


def measure(run: Path, corpus: str, name: str, variant: str, gguf: str, threads: int) -> list:
    out = run / "results" / corpus / "fabula_entropy"
    versions = tables.read(tables.FEI_VERSIONS, out / "versions.parquet")
    asked = tables.read(tables.FEI_QUESTIONS, out / "questions.parquet")
    spec = ModelSpec(
        name=name, source={}, family="", size="", variant=variant, backend="llama.cpp",
        dtype="float32", prompt="chat" if variant == "instruct" else "plain", roles=(),
    )  # fmt: skip
    model = open_model(spec, gguf, n_ctx=2048, n_threads=threads, share_prefix=True)
    settings = readers.ReaderSettings(("standard",), LABELS, "none", 0.05, 2048)
    start = time.perf_counter()
    answers, _ = readers.answer_questions(model, versions, asked, settings)
    seconds = time.perf_counter() - start
    options = readers.label_options(LABELS, model.mode)
    n_lines = {(r.story_id, r.version, r.passage): int(r.n_lines) for r in versions.itertuples()}
    rows = []
    stats = compare.Statistics.from_params(STATS)
    for mode in readers.CALIBRATIONS:
        priors: dict[tuple[str, int], float] = {}
        keys = []
        for q in asked.itertuples():
            n = n_lines[(q.story_id, q.version, q.passage)]
            texts = [] if mode == "none" else [q.text] if mode == "question" else (
                q.prior_texts.split("\n")
            )  # fmt: skip
            keys.append([(t, n) for t in texts])
        start = time.perf_counter()
        for text, n in sorted({k for ks in keys for k in ks}, key=lambda k: (k[1], k[0])):
            prompt = model.render(
                readers.messages([readers.CONTENT_FREE] * n, text, "standard"), cue=readers.CUE
            )
            priors[(text, n)] = model.answer(prompt, options).probs[0]
        prior_seconds = time.perf_counter() - start
        p0 = {
            (q.story_id, q.version, q.question_id): (
                float(np.mean([priors[k] for k in ks])) if ks else None
            )
            for q, ks in zip(asked.itertuples(), keys, strict=True)
        }
        mine = answers.copy()
        mine["p_yes"] = [
            readers.calibrated(r.p_yes_raw, p0[(r.story_id, r.version, r.question_id)])
            if p0[(r.story_id, r.version, r.question_id)] is not None
            else r.p_yes_raw
            for r in mine.itertuples()
        ]
        table, _ = compare.reader_checks(
            mine, asked, THRESHOLDS, stats, corpus=corpus, calibration=mode
        )
        r = table.iloc[0]
        rows.append(
            (corpus, name, mode, len(answers), len(priors), seconds, prior_seconds, r.auc,
             r.auc_ci_low, r.auc_ci_high, r.balanced_accuracy, r.balanced_accuracy_ci_low,
             r.balanced_accuracy_ci_high, r.share_yes_controls, r.n_controls, bool(r.passed),
             r.failed)
        )  # fmt: skip
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("run", type=Path)
    parser.add_argument("models", nargs="+", help="NAME=VARIANT:GGUF")
    parser.add_argument("--corpora", nargs="+", default=["hippocorpus", "rocstories"])
    parser.add_argument("--threads", type=int, default=2)
    args = parser.parse_args()
    print(
        "corpus\tmodel\tcalibration\tquestions\tpriors\tseconds_questions\tseconds_priors\tauc"
        "\tauc_low\tauc_high\tbalanced_accuracy\tba_low\tba_high\tshare_yes_controls"
        "\tn_controls\tpassed\tfailed",
        flush=True,
    )
    for corpus in args.corpora:
        for entry in args.models:
            name, _, rest = entry.partition("=")
            variant, _, gguf = rest.partition(":")
            for row in measure(args.run, corpus, name, variant, gguf, args.threads):
                print("\t".join(f"{v:.3f}" if isinstance(v, float) else str(v) for v in row),
                      flush=True)  # fmt: skip


if __name__ == "__main__":
    main()
