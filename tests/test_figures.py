"""Figures A (sequentiality) and B (effect sizes), and the five thin scripts end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import run_script
from matplotlib.figure import Figure

from storyflow.figures.common import FigureSettings
from storyflow.figures.sequentiality import (
    FORMULATION_TITLES,
    contrast_colors,
    plot_contrast_sequentiality,
    plot_effect_sizes,
    plot_sequentiality,
    story_type_colors,
)

ROOT = Path(__file__).resolve().parents[1]
HISTORIES = ["1", "2", "3", "full"]
SIZE = FigureSettings(dpi=80, width_per_panel=3.0, height_per_panel=2.4)


def make_summary(models=("m1", "m2"), formulations=("topic", "context")) -> pd.DataFrame:
    rows = []
    for model in models:
        for formulation in formulations:
            for h in HISTORIES:
                for k, story_type in enumerate(["recalled", "imagined"]):
                    for measure in ["seq", "nll_base", "nll_context"]:
                        mean = 0.1 + 0.05 * k + (0.03 * int(h) if h != "full" else 0.12)
                        rows.append(
                            {
                                "model": model,
                                "formulation": formulation,
                                "history": h,
                                "story_type": story_type,
                                "measure": measure,
                                "n": 12,
                                "mean": mean,
                                "sd": 0.05,
                                "ci_low": mean - 0.03,
                                "ci_high": mean + 0.03,
                            }
                        )
    return pd.DataFrame(rows)


def make_effects(models=("m1", "m2"), formulations=("topic", "context")) -> pd.DataFrame:
    rows = []
    contrasts = [("imagined_vs_recalled", "imagined"), ("retold_vs_recalled", "retold")]
    for model in models:
        for formulation in formulations:
            for h in HISTORIES:
                for name, group_a in contrasts:
                    g = np.nan if (name == "retold_vs_recalled" and h == "2") else 0.4
                    rows.append(
                        {
                            "model": model,
                            "formulation": formulation,
                            "history": h,
                            "contrast": name,
                            "group_a": group_a,
                            "group_b": "recalled",
                            "measure": "seq",
                            "g": g,
                            "g_ci_low": g - 0.5,
                            "g_ci_high": g + 0.5,
                        }
                    )
    return pd.DataFrame(rows)


def panels(fig: Figure) -> list:
    """The figure's axes, row by row (the legend is a figure legend, not an axes)."""
    return list(fig.axes)


def tick_labels(ax) -> list[str]:
    """x tick labels (drawn on the bottom row only; the top rows share x)."""
    return [t.get_text() for t in ax.get_xticklabels()]


def legend_lines(ax) -> list[str]:
    return [line.get_label() for line in ax.get_lines() if not line.get_label().startswith("_")]


def assert_files(paths: list[Path]) -> None:
    for path in paths:
        assert path.exists()
        assert path.stat().st_size > 5_000, path
    assert paths[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert paths[1].read_bytes()[:5] == b"%PDF-"


def test_plot_sequentiality_panels_and_lines(tmp_path: Path) -> None:
    paths = [tmp_path / "a.png", tmp_path / "sub" / "a.pdf"]
    paths[1].parent.mkdir()  # Snakemake makes the folders of a rule's outputs
    fig = plot_sequentiality(make_summary(), paths, SIZE)
    assert_files(paths)
    axes = panels(fig)
    assert len(axes) == 4  # 2 models x 2 formulations
    assert [axes[0].get_title(), axes[1].get_title()] == [
        FORMULATION_TITLES["topic"],
        FORMULATION_TITLES["context"],
    ]
    assert axes[0].get_ylabel() == "sequentiality (nats/token)"
    for ax in axes:
        assert legend_lines(ax) == ["imagined", "recalled"]
        # "full" sits after a gap: one step further than the spacing of finite h
        ticks = list(ax.get_xticks())
        assert ticks == [1.0, 2.0, 3.0, 5.0]
    assert [tick_labels(ax) for ax in axes[2:]] == [HISTORIES, HISTORIES]
    assert axes[2].get_xlabel() == "history size h (sentences)"
    # the line for h = 1..3 carries the means (recalled: 0.1 + 0.03 h); "full" is not joined
    recalled = next(line for line in axes[0].get_lines() if line.get_label() == "recalled")
    assert list(recalled.get_xdata()) == [1.0, 2.0, 3.0]
    assert list(recalled.get_ydata()) == pytest.approx([0.13, 0.16, 0.19])
    # y is shared within a column, not across columns
    assert axes[0].get_shared_y_axes().joined(axes[0], axes[2])
    assert not axes[0].get_shared_y_axes().joined(axes[0], axes[1])
    # the two story types get different, stable colours
    colors = story_type_colors(["recalled", "imagined"])
    assert colors == story_type_colors(["imagined", "recalled"])
    assert colors["recalled"] != colors["imagined"]
    assert recalled.get_color() == colors["recalled"]


def test_plot_sequentiality_single_panel(tmp_path: Path) -> None:
    summary = make_summary(models=("m1",), formulations=("context",))
    fig = plot_sequentiality(summary, [tmp_path / "a.png"], SIZE)
    axes = panels(fig)
    assert len(axes) == 1
    assert axes[0].get_title() == "context only (SEQ′)"
    assert tick_labels(axes[0]) == HISTORIES


def test_one_finite_history_still_draws_its_interval(tmp_path: Path) -> None:
    """With nll.max_history 1 each line has one finite point: a band over one x is invisible, so
    the point gets an error bar (every plotted mean has its interval)."""
    summary = make_summary(models=("m1",), formulations=("context",))
    summary = summary[summary["history"].isin(["1", "full"])]
    fig = plot_sequentiality(summary, [tmp_path / "a.png"], SIZE)
    (ax,) = panels(fig)
    bars = [c for c in ax.containers if hasattr(c, "has_yerr") and c.has_yerr]
    at_h1 = [b for b in bars if list(b.lines[0].get_xdata()) == [1.0]]
    assert len(at_h1) == 2  # one per story type
    segments = at_h1[0].lines[2][0].get_segments()
    assert segments[0][1][1] - segments[0][0][1] == pytest.approx(0.06)  # ci_high - ci_low


def test_plot_effect_sizes_panels_and_lines(tmp_path: Path) -> None:
    paths = [tmp_path / "b.png", tmp_path / "b.pdf"]
    fig = plot_effect_sizes(make_effects(), paths, SIZE)
    assert_files(paths)
    axes = panels(fig)
    assert len(axes) == 4
    for ax in axes:
        assert legend_lines(ax) == ["imagined vs recalled", "retold vs recalled"]
        zero = [line for line in ax.get_lines() if line.get_linestyle() == "--"]
        assert zero and list(zero[0].get_ydata()) == [0, 0]
    assert [tick_labels(ax) for ax in axes[2:]] == [HISTORIES, HISTORIES]
    assert axes[0].get_ylabel() == "Hedges' g"
    # a NaN g (too few stories) leaves a gap instead of failing
    retold = next(line for line in axes[0].get_lines() if line.get_label() == "retold vs recalled")
    assert np.isnan(retold.get_ydata()[1])
    assert contrast_colors(["x", "y"]) == contrast_colors(["x", "y"])


def test_untested_contrasts_are_named_with_their_sizes(tmp_path: Path) -> None:
    effects = make_effects(models=("m1",), formulations=("context",))
    small = effects["contrast"] == "retold_vs_recalled"
    effects = effects.assign(tested=~small, n_a=2, n_b=2)
    effects.loc[small, ["g", "g_ci_low", "g_ci_high"]] = np.nan
    fig = plot_effect_sizes(effects, [tmp_path / "b.png"], SIZE)
    legend = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend == ["imagined vs recalled", "retold vs recalled (not tested: 2 vs 2 stories)"]


def test_plot_contrast_sequentiality_draws_both_groups_with_t_intervals(tmp_path: Path) -> None:
    effects = make_effects(formulations=("context",)).assign(
        mean_a=0.3, mean_b=0.1, sd_a=0.2, sd_b=0.1, n_a=5, n_b=4
    )
    paths = [tmp_path / "c.png", tmp_path / "c.pdf"]
    fig = plot_contrast_sequentiality(effects, paths, SIZE, confidence=0.95)
    assert_files(paths)
    axes = panels(fig)
    assert len(axes) == 4  # 2 models x 2 contrasts x 1 formulation
    assert axes[0].get_title().startswith("imagined vs recalled")
    assert legend_lines(axes[1]) == ["a: retold", "b: recalled"]
    line_a = next(line for line in axes[0].get_lines() if line.get_label() == "a: imagined")
    assert list(line_a.get_ydata()) == pytest.approx([0.3, 0.3, 0.3])  # h = 1..3 ("full" apart)
    # the band of group a: mean ± t_{0.975, 4} · 0.2 / sqrt(5) = 0.3 ± 0.2483328
    band = axes[0].collections[0].get_paths()[0].vertices[:, 1]
    assert band.min() == pytest.approx(0.3 - 0.2483328, abs=1e-6)
    assert band.max() == pytest.approx(0.3 + 0.2483328, abs=1e-6)


def test_empty_measure_is_an_error(tmp_path: Path) -> None:
    summary = make_summary()
    with pytest.raises(ValueError, match="measure 'seq'"):
        plot_sequentiality(summary[summary.measure != "seq"], [tmp_path / "a.png"], SIZE)


def test_scripts_end_to_end(tmp_path: Path) -> None:
    rng = np.random.default_rng(3)
    stories, counts, nll = [], [], []
    for k in range(12):
        story_type = ["recalled", "imagined", "retold"][k % 3]
        story_id = f"{k:04d}"  # looks numeric: must stay text through the CSV
        n = 4
        stories.append({"story_id": story_id, "story_type": story_type, "text": "", "topic": ""})
        counts.append({"story_id": story_id, "story_type": story_type, "n_sentences": n})
        for formulation in ["topic", "context"]:
            for i in range(n):
                base = 3.0 + rng.normal(0, 0.3)
                for h in ["0", "1", "2", "full"]:
                    n_history = 0 if h == "0" else min(i, i if h == "full" else int(h))
                    gain = 0.1 * n_history + rng.normal(0, 0.02) if n_history else 0.0
                    nll.append(
                        {
                            "story_id": story_id,
                            "sentence_idx": i,
                            "model": "m1",
                            "formulation": formulation,
                            "history": h,
                            "n_history": n_history,
                            "n_tokens": 8,
                            "nll": base - gain,
                            "nll_first": 2 * (base - gain),
                            "truncated": False,
                        }
                    )
    pd.DataFrame(nll).to_parquet(tmp_path / "nll.parquet")
    pd.DataFrame(stories).to_parquet(tmp_path / "stories.parquet")
    pd.DataFrame(counts).to_csv(tmp_path / "counts.csv", index=False)
    names = ["sent.parquet", "story.parquet", "summ.csv", "eff.csv", "contrast.csv"]
    out = {name: tmp_path / name for name in names}
    run_script(
        "compute_sequentiality",
        input={
            "nll": tmp_path / "nll.parquet",
            "stories": tmp_path / "stories.parquet",
            "counts": tmp_path / "counts.csv",
        },
        output={"sentences": out["sent.parquet"], "stories": out["story.parquet"]},
    )
    story = pd.read_parquet(out["story.parquet"])
    assert len(story) == 12 * 2 * 3  # stories x formulations x histories 1, 2, full
    assert set(story["story_id"]) == {f"{k:04d}" for k in range(12)}
    params = {"confidence": 0.95, "min_sentences": 2}
    run_script(
        "summarize_sequentiality",
        input={"stories": [str(out["story.parquet"])]},
        params=params,
        output={"table": out["summ.csv"]},
    )
    contrasts = [{"name": "imagined_vs_recalled", "a": "imagined", "b": "recalled"}]
    run_script(
        "compute_effect_sizes",
        input={"stories": [str(out["story.parquet"])], "labels": tmp_path / "stories.parquet"},
        params={**params, "contrasts": contrasts, "min_group_size": 2},
        output={"table": out["eff.csv"], "summary": out["contrast.csv"]},
    )
    summary = pd.read_csv(out["summ.csv"], dtype={"history": str})
    assert len(summary) == 2 * 3 * 3 * 3  # formulations x histories x types x measures
    effects = pd.read_csv(out["eff.csv"], dtype={"history": str})
    assert len(effects) == 2 * 3 * 1 * 3  # formulations x histories x contrasts x measures
    assert effects["g"].notna().all()
    overall = pd.read_csv(out["contrast.csv"]).set_index(["formulation", "measure"])
    seq = effects[(effects["measure"] == "seq") & (effects["formulation"] == "context")]
    assert overall.at[("context", "seq"), "mean_g"] == pytest.approx(seq["g"].mean())
    assert overall.at[("context", "seq"), "n_histories"] == 3
    figure_params = {"figures": {"dpi": 60, "width_per_panel": 3.0, "height_per_panel": 2.4}}
    for name, table in [
        ("plot_sequentiality", "summ.csv"),
        ("plot_effect_sizes", "eff.csv"),
        ("plot_contrast_sequentiality", "eff.csv"),
    ]:
        outputs = {"png": tmp_path / f"{name}.png", "pdf": tmp_path / f"{name}.pdf"}
        extra = {"confidence": 0.95} if name == "plot_contrast_sequentiality" else {}
        run_script(
            name, input={"table": out[table]}, params={**figure_params, **extra}, output=outputs
        )
        assert_files([outputs["png"], outputs["pdf"]])
