"""Figures A (sequentiality) and B (effect sizes), and the five thin scripts end to end."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import run_script
from matplotlib.figure import Figure
from matplotlib.text import Text

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


def test_a_csv_corpus_figure_says_group_and_hippocorpus_story_type(tmp_path: Path) -> None:
    """A CSV corpus's groups are whatever its group column holds: its figure calls them
    "group"; HIPPOCORPUS's recalled and imagined stay story types."""
    from storyflow.corpora import group_word

    config = {"corpora": {"mine": {"kind": "csv"}}}
    assert group_word(config, "mine") == "group"
    assert group_word(config, "hippocorpus") == group_word(config, "books") == "story type"
    summary = make_summary(models=("m1",), formulations=("context",))
    shown = {}
    for corpus in ("mine", "hippocorpus"):
        outputs = {"png": tmp_path / f"{corpus}.png", "pdf": tmp_path / f"{corpus}.pdf"}
        summary.to_csv(tmp_path / "summary.csv", index=False)
        params = {"figures": {"dpi": 60, "width_per_panel": 3.0, "height_per_panel": 2.4}}
        run_script(
            "plot_sequentiality",
            input={"table": tmp_path / "summary.csv"},
            params={**params, "group_word": group_word(config, corpus)},
            output=outputs,
        )
        assert_files([outputs["png"], outputs["pdf"]])
        fig = plot_sequentiality(
            summary, [tmp_path / "a.png"], SIZE, group_word=group_word(config, corpus)
        )
        texts = [t.get_text() for t in fig.findobj(Text)]
        shown[corpus] = fig.legends[0].get_title().get_text()
        if corpus == "mine":
            assert not [t for t in texts if "story type" in t or "story_type" in t]
    assert shown == {
        "mine": "group (mean and confidence interval)",
        "hippocorpus": "story type (mean and confidence interval)",
    }


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
    params = {"confidence": 0.95, "min_sentences": 2, "label": "story_type"}
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
    assert overall.at[("context", "seq"), "cell_mean_g"] == pytest.approx(seq["g"].mean())
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


# --- every figure fits: no title, label or legend cut off, at 1, 2 and many panels ----------
LONG = "a-rather-long-model-name-from-a-local-file-Q4_K_M-instruct-v0.3"


def outside(fig: Figure) -> list[str]:
    """Every drawn text (titles, suptitles, axis and tick labels, legends, texts placed on a
    panel or the figure) whose window extent reaches past the figure (1 px tolerance)."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.text import Text

    canvas = fig.canvas if isinstance(fig.canvas, FigureCanvasAgg) else FigureCanvasAgg(fig)
    canvas.draw()
    renderer = canvas.get_renderer()
    artists: list = [*fig.texts, *fig.legends]
    for ax in fig.axes:
        if not ax.get_visible():
            continue
        artists += [ax.title, ax._left_title, ax._right_title, *ax.texts]
        for axis in (ax.xaxis, ax.yaxis):
            artists.append(axis.label)
            for tick in axis._update_ticks():  # the ticks drawn
                artists += [tick.label1, tick.label2]
        if ax.get_legend() is not None:
            artists.append(ax.get_legend())
    for legend in [*fig.legends, *(ax.get_legend() for ax in fig.axes if ax.get_legend())]:
        artists += [*legend.get_texts(), legend.get_title()]
    box = fig.bbox
    bad = []
    for artist in artists:
        if not artist.get_visible() or (isinstance(artist, Text) and not artist.get_text()):
            continue
        ext = artist.get_window_extent(renderer)
        if ext.x0 < box.x0 - 1 or ext.y0 < box.y0 - 1 or ext.x1 > box.x1 + 1 or ext.y1 > box.y1 + 1:
            name = artist.get_text() if isinstance(artist, Text) else type(artist).__name__
            bad.append(f"{name!r} at {ext.bounds} outside {box.bounds}")
    return bad


@pytest.fixture
def drawn(monkeypatch: pytest.MonkeyPatch) -> list[Figure]:
    """Every figure the figure functions save, as saved (each module's ``save`` kept)."""
    from storyflow.figures import (
        common,
        comparison,
        narrative_sense,
        plot_holes,
        sequentiality,
        tension,
    )

    figures: list[Figure] = []

    def keep(fig: Figure, paths, dpi: int) -> Figure:
        figures.append(common.save(fig, paths, dpi))
        return fig

    for module in (comparison, narrative_sense, plot_holes, sequentiality, tension):
        monkeypatch.setattr(module, "save", keep)
    return figures


PANELS = {"one": (1, 1), "two": (1, 2), "many": (4, 3)}


def _names(n: int, stem: str) -> list[str]:
    return [f"{stem}{i}-{LONG}" if i % 2 else f"{stem}{i}" for i in range(n)]


@pytest.mark.parametrize("panels_", list(PANELS), ids=list(PANELS))
def test_sequentiality_figures_fit(tmp_path: Path, drawn: list[Figure], panels_: str) -> None:
    n_models, n_formulations = PANELS[panels_]
    models = _names(n_models, "m")
    formulations = ["topic", "context", "neutral-with-a-long-name"][:n_formulations]
    summary = make_summary(models=models, formulations=formulations)
    effects = make_effects(models=models, formulations=formulations)
    long_contrast = "imagined_stories_written_from_a_prompt_vs_recalled_diary_stories"
    effects["contrast"] = effects["contrast"].replace("retold_vs_recalled", long_contrast)
    means = effects.assign(mean_a=0.3, mean_b=0.1, sd_a=0.2, sd_b=0.1, n_a=5, n_b=4)
    plot_sequentiality(summary, [tmp_path / "a.png"], SIZE)
    plot_effect_sizes(effects, [tmp_path / "b.png"], SIZE)
    plot_contrast_sequentiality(means, [tmp_path / "c.png"], SIZE, confidence=0.95)
    assert len(drawn) == 3
    for fig in drawn:
        assert outside(fig) == []


def _tension_groups(n_series: int, n_groups: int) -> pd.DataFrame:
    from storyflow import tables

    rows = []
    for s in range(n_series):
        for measure in ("no_rate", "inflection_rate_60", "inflection_rate_120"):
            for group in _names(n_groups, "group"):
                rows.append(
                    tables.TENSION_GROUPS.row(
                        model=f"forecaster{s}-{LONG}", judge="embedding", k=4, story_type=group,
                        measure=measure, n=10, mean=0.45, sd=0.1, ci_low=0.3, ci_high=0.6,
                        flag="", valid=s % 2 == 0,
                        failed="" if s % 2 == 0 else "forecaster pairwise_accuracy 0.4 < 0.6",
                    )
                )  # fmt: skip
    return tables.TENSION_GROUPS.frame(rows)


@pytest.mark.parametrize("panels_", list(PANELS), ids=list(PANELS))
def test_tension_and_comparison_figures_fit(
    tmp_path: Path, drawn: list[Figure], panels_: str
) -> None:
    from storyflow.figures import comparison, tension

    n, m = PANELS[panels_]
    count = n * m
    groups = _tension_groups(count, max(2, count))
    tension.plot_tension_by_group(groups, [tmp_path / "t.png"], 60)
    tension.plot_inflection_rates(groups, [tmp_path / "r.png"], 60)
    measures = [f"measure{i}.{'score_with_a_long_name' * (i % 2)}" for i in range(4)]
    rows = []
    for c in range(count):
        for model in ("", LONG):
            for measure in measures:
                rows.append(
                    {"contrast": f"c{c}", "group_a": f"group{c}-{LONG}", "group_b": "recalled",
                     "model": model, "measure": measure, "g": 0.3, "g_low": -0.1, "g_high": 0.7,
                     "valid": model == ""}
                )  # fmt: skip
    comparison.plot_separation(pd.DataFrame(rows), [tmp_path / "s.png"], dpi=60)
    corr = [
        {"model": model, "measure_a": a, "measure_b": b, "rho": 0.5, "partial": 0.2,
         "valid": True}
        for model in _names(n, "m") for a in measures for b in measures
    ]  # fmt: skip
    comparison.plot_correlations(pd.DataFrame(corr), [tmp_path / "k.png"], length="n_words", dpi=60)
    assert len(drawn) == 4
    for fig in drawn:
        assert outside(fig) == []


@pytest.mark.parametrize("panels_", list(PANELS), ids=list(PANELS))
def test_narrative_sense_and_plot_hole_figures_fit(
    tmp_path: Path, drawn: list[Figure], panels_: str
) -> None:
    from storyflow.figures import narrative_sense, plot_holes

    n, m = PANELS[panels_]
    count = n * m
    rng = np.random.default_rng(0)
    scores = pd.DataFrame(
        [
            {"group": group, "pair_pmi": np.sort(rng.normal(size=6))[::-1]}
            for group in _names(max(1, count), "group")
            for _ in range(3)
        ]
    )
    narrative_sense.plot_pair_scores(scores, [tmp_path / "p.png"], top_pairs=2, dpi=60, seed=1)
    base = {"corpus": "t", "n": 20, "ceeval_ci_low": 0.3, "ceeval_ci_high": 0.7,
            "ceeval_full": 0.5}  # fmt: skip
    ceeval = pd.DataFrame(
        [
            {**base, "maker": maker, "detector": detector, "kind": "model",
             "valid": i % 2 == 0, "validity": "passed" if i % 2 == 0 else "failed: auroc, pairs"}
            for maker in _names(min(count, 4), "maker")
            for i, detector in enumerate(_names(3, "detector"))
        ]
    )  # fmt: skip
    plot_holes.plot_ceeval(ceeval, [tmp_path / "h.png"], 60)
    assert len(drawn) == 2
    for fig in drawn:
        assert outside(fig) == []


@pytest.mark.parametrize("panels_", list(PANELS), ids=list(PANELS))
def test_regression_tension_curve_and_replication_figures_fit(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, panels_: str
) -> None:
    from storyflow import tables
    from storyflow.figures import common, regression, replication, tension

    drawn: list[Figure] = []

    def keep(fig: Figure, paths, dpi: int) -> Figure:
        drawn.append(common.save(fig, paths, dpi))
        return fig

    for module in (regression, replication, tension):
        monkeypatch.setattr(module, "save", keep)
    n, m = PANELS[panels_]
    count = n * m
    coefficients = pd.DataFrame(
        [
            {"role": "covariate", "spec": f"spec{s}", "label": label, "kind": f"gain-{LONG}",
             "history": "1", "n_obs": 300, "n_stories": 30, "significant_fdr": i % 2 == 0,
             "estimate": 0.1 * i, "ci_low": 0.1 * i - 0.05, "ci_high": 0.1 * i + 0.05}
            for s in range(count)
            for i, label in enumerate(["connectives (contrastive, per 100 words)", "x", "y"])
        ]
    )  # fmt: skip
    regression.plot_coefficients(coefficients, [tmp_path / "f.png"], dpi=60, width_per_panel=3.0)
    rows = []
    for k, group in enumerate(_names(max(2, count), "group")):
        sid, n_cuts = f"story{k}-{LONG}", 4
        for cut in range(n_cuts):
            rows.append((sid, group, "m", cut, cut, (cut + 1) / 5, "j", 4, 4, cut % 2, 0))
    rate_columns = ("no_rate", "no_rate_judged")
    frame = pd.DataFrame(
        rows, columns=[c for c in tables.TENSION_CURVES.names if c not in rate_columns]
    )
    share = frame["n_no"] / frame["n_judged"]
    curves = tables.TENSION_CURVES.frame(frame.assign(no_rate=share, no_rate_judged=share))
    tension.plot_example_curves(curves, [tmp_path / "c.png"], 50, smoothing=3, angle=60.0)
    from test_replication import _ours, _replication

    table = _replication(
        [(f"r{i}", f"model-{LONG}", 0.4, _ours(0.5, 0.2, 0.8)) for i in range(count)]
    )
    replication.plot_replication(table, [tmp_path / "r.png"], dpi=60)
    assert len(drawn) == 3
    for fig in drawn:
        assert outside(fig) == []


def test_fabula_entropy_figures_fit(tmp_path: Path) -> None:
    """Its two figures (a panel per question kind), with a failed reader in the legend and a
    suptitle naming the readers."""
    from test_fabula_entropy import _answers, _summarize

    from storyflow.figures import common
    from storyflow.figures import fabula_entropy as figures

    readers = ("good", "good2", "yes")
    versions, questions, answers = _answers(np.random.default_rng(0), readers)
    out = _summarize(versions, questions, answers)
    for i, draw in enumerate((figures.distributions_figure, figures.dose_figure)):
        fig = common.save(draw(out["indices"], out["dose"]), [tmp_path / f"{i}.png"], 60)
        assert outside(fig) == []
