"""Mixed-effects regressions (docs/method.md §7): lme4 via rpy2, cross-checked with statsmodels."""

from __future__ import annotations

import copy
import shutil
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from conftest import run_script
from scipy import stats

from storyflow import lmer, plan
from storyflow.errors import StoryflowError
from storyflow.figures.regression import plot_coefficients
from storyflow.measures.sequentiality import regression
from storyflow.measures.sequentiality.covariates import CONNECTIVE_COLUMNS, WINDOW_MEASURES

ROOT = Path(__file__).resolve().parents[1]


def r_available() -> bool:
    try:
        lmer.check_r()
    except StoryflowError:
        return False
    return True


needs_r = pytest.mark.skipif(not r_available(), reason="R with lme4 and lmerTest not installed")


# --- a missing R gives one clear message ----------------------------------------------------


def without_r(monkeypatch) -> None:
    monkeypatch.delenv("R_HOME", raising=False)
    monkeypatch.setattr(shutil, "which", lambda name, *a, **k: None)


def test_missing_r_names_what_to_install(monkeypatch) -> None:
    without_r(monkeypatch)
    with pytest.raises(StoryflowError) as err:
        lmer.check_r()
    message = str(err.value)
    assert "R is not installed" in message
    assert "apt-get install -y --no-install-recommends r-base-core r-cran-lme4 r-cran-lmertest" in (
        message
    )
    assert "envs/regression.yaml" in message
    assert "rpy2==3.6.6" in message


def test_missing_rpy2_names_the_pins(monkeypatch) -> None:
    def fail():
        raise ImportError("No module named 'rpy2'")

    monkeypatch.setattr(lmer, "_import_robjects", fail)
    with pytest.raises(StoryflowError, match=r"rpy2 cannot be imported.*rpy2-rinterface==3\.6\.5"):
        lmer.check_r()


@needs_r
def test_missing_r_package_is_named(monkeypatch) -> None:
    monkeypatch.setattr(lmer, "R_PACKAGES", ("lme4", "noSuchPackageXyz"))
    with pytest.raises(StoryflowError, match=r"R package.* noSuchPackageXyz are not installed"):
        lmer.check_r()


def test_rule_without_r_fails_with_the_message_not_a_traceback(
    monkeypatch, tmp_path: Path, capsys
) -> None:
    sequentiality, covariates = synthetic_tables(n_stories=4, n_sentences=4, models=["m1"])
    sequentiality.to_parquet(tmp_path / "seq.parquet")
    covariates.to_parquet(tmp_path / "cov.parquet")
    without_r(monkeypatch)
    with pytest.raises(SystemExit) as exit_info:
        run_script(
            "fit_regressions",
            input={
                "sequentiality": [str(tmp_path / "seq.parquet")],
                "covariates": tmp_path / "cov.parquet",
            },
            output={
                "coefficients": tmp_path / "c.csv",
                "tables": [tmp_path / "g.csv"],
                "diagnostics": tmp_path / "d.csv",
            },
            params={
                "specs": ["gain_h1"],
                "skipped": {},
                "models": ["m1"],
                "formulation": "context",
                "fdr_alpha": 0.05,
                "confidence": 0.95,
            },
        )
    assert exit_info.value.code == 1
    err = capsys.readouterr().err
    assert "storyflow: error in rule fit_regressions" in err
    assert "r-cran-lmertest" in err
    assert "Traceback" not in err


# --- lmer agrees with statsmodels -----------------------------------------------------------


def mixed_data(seed: int = 1, n_groups: int = 40, n_per: int = 12) -> pd.DataFrame:
    """Random-intercept data: y = 0.5 + 0.3 x1 − 0.2 x2 + 0.4 b + u_story + e."""
    rng = np.random.default_rng(seed)
    group = np.repeat(np.arange(n_groups), n_per)
    x1, x2 = rng.normal(size=group.size), rng.normal(size=group.size)
    b = rng.integers(0, 2, group.size).astype(float)
    u = rng.normal(0, 0.8, n_groups)[group]
    y = 0.5 + 0.3 * x1 - 0.2 * x2 + 0.4 * b + u + rng.normal(0, 1, group.size)
    return pd.DataFrame(
        {"y": y, "x1": x1, "x2": x2, "b": b, "story_id": [f"s{g:02d}" for g in group]}
    )


@needs_r
def test_lmer_fixed_effects_match_statsmodels() -> None:
    import statsmodels.formula.api as smf

    data = mixed_data()
    fit = regression.fit_lmer(
        data, "y ~ x1 + x2 + b + (1 | story_id)", {"story_id": sorted(data["story_id"].unique())}
    )
    ml = smf.mixedlm("y ~ x1 + x2 + b", data, groups=data["story_id"]).fit(
        reml=False, method=["bfgs"]
    )
    lmer = fit.coefficients.set_index("term")["estimate"]
    assert list(lmer.index) == ["(Intercept)", "x1", "x2", "b"]
    np.testing.assert_allclose(
        lmer.to_numpy(), ml.fe_params[["Intercept", "x1", "x2", "b"]].to_numpy(), atol=1e-4
    )
    assert fit.loglik == pytest.approx(ml.llf, abs=1e-3)
    assert fit.sd_story == pytest.approx(float(np.sqrt(ml.cov_re.iloc[0, 0])), abs=1e-3)
    assert fit.converged and not fit.singular
    # Satterthwaite: df between the number of stories and of rows; p from t and df
    coefs = fit.coefficients.set_index("term")
    assert 30 < coefs.at["(Intercept)", "df"] < 100 < coefs.at["x1", "df"] < len(data)
    expected_p = 2 * stats.t.sf(np.abs(coefs["t"]), coefs["df"])
    np.testing.assert_allclose(coefs["p"], expected_p, rtol=1e-6)


@needs_r
def test_singular_fit_and_warnings_are_reported_not_swallowed() -> None:
    data = mixed_data(n_groups=10, n_per=10)
    rng = np.random.default_rng(5)
    noise = pd.Series(rng.normal(0, 1, len(data)))
    # no story effect at all, and story means of the noise removed: the ML story SD is 0
    noise -= noise.groupby(data["story_id"]).transform("mean")
    data["y"] = 0.3 * data["x1"] + noise
    data["x2"] = data["x2"] * 1e7  # lme4 warns about predictors on very different scales
    fit = regression.fit_lmer(
        data, "y ~ x1 + x2 + (1 | story_id)", {"story_id": sorted(data["story_id"].unique())}
    )
    assert fit.singular
    assert fit.sd_story == pytest.approx(0.0, abs=1e-6)
    assert any("singular" in m for m in fit.messages)
    assert any("rescaling" in w for w in fit.warnings)


# --- from the workflow's tables to coefficient tables -----------------------------------------


def synthetic_tables(
    n_stories: int = 30, n_sentences: int = 8, models: tuple[str, ...] | list[str] = ("m1", "m2")
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Sentence sequentiality (context formulation, h = 1, 3) and covariates with a known effect:
    the gain grows by 0.2 nats/token per unit of embedding_sim_h{h}."""
    rng = np.random.default_rng(11)
    cov_rows, seq_rows = [], []
    for s in range(n_stories):
        story = f"{s:04d}"
        story_effect = rng.normal(0, 0.1)
        for i in range(n_sentences):
            row = {"story_id": story, "sentence_idx": i}
            for w in (1, 3):
                for m in WINDOW_MEASURES:
                    row[f"{m}_h{w}"] = np.nan if i == 0 else rng.uniform()
            row.update(
                n_tokens=int(rng.integers(5, 30)),
                rare_word_rate=rng.uniform(0, 0.3),
                clause_count=int(rng.integers(1, 4)),
                tree_depth=int(rng.integers(2, 8)),
                **{c: int(rng.uniform() < 0.3) for c in CONNECTIVE_COLUMNS},
                rhetorical_disrupting=np.nan if i == 0 else float(rng.uniform() < 0.2),
                rhetorical_source="connective-heuristic",
                agent_source="subject-pronoun-heuristic",
                embedding_model="fake",
            )
            row["conn_contrastive"] = 0  # never occurs: constant, must be dropped
            cov_rows.append(row)
            for k, model in enumerate(models):
                base = 4.0 + 0.3 * k + rng.normal(0, 0.5)
                for h in ("1", "3"):
                    n_history = min(i, int(h))
                    gain = (
                        0.0
                        if n_history == 0
                        else 0.5
                        + story_effect
                        + 0.2 * row[f"embedding_sim_h{h}"]
                        + rng.normal(0, 0.05)
                    )
                    seq_rows.append(
                        {
                            "story_id": story,
                            "sentence_idx": i,
                            "model": model,
                            "formulation": "context",
                            "history": h,
                            "n_history": n_history,
                            "truncated": False,
                            "nll_base": base,
                            "nll_context": base - gain,
                            "seq": gain,
                        }
                    )
    return pd.DataFrame(seq_rows), pd.DataFrame(cov_rows)


def test_rows_drop_first_sentences_and_need_covariates() -> None:
    seq, cov = synthetic_tables(n_stories=3, n_sentences=4)
    rows, counts = regression.regression_rows(seq, cov, formulation="context", history="1")
    assert counts == {
        "n_rows_scored": 3 * 4 * 2,
        "n_first_sentences_dropped": 3 * 2,
        "n_truncated_kept": 0,
    }
    assert len(rows) == 3 * 3 * 2 and (rows["sentence_idx"] > 0).all()
    with pytest.raises(StoryflowError, match="have no covariates"):
        regression.regression_rows(seq, cov.iloc[2:], formulation="context", history="1")
    with pytest.raises(StoryflowError, match="no sentence sequentiality rows"):
        regression.regression_rows(seq, cov, formulation="topic", history="1")


def test_design_scales_continuous_predictors_and_drops_constants() -> None:
    seq, cov = synthetic_tables(n_stories=5, n_sentences=5)
    rows, _ = regression.regression_rows(seq, cov, formulation="context", history="3")
    design = regression.build_design(rows, regression.Spec("raw", "3"), ["m2", "m1"])
    frame = design.frame
    assert design.formula.startswith("nll_context ~ model + nll_base + lemma_overlap_h3 + ")
    assert design.formula.endswith(" + (1 | story_id)")
    assert "conn_contrastive" not in frame and "conn_contrastive (constant)" in design.dropped
    for column in ["nll_base", "embedding_sim_h3", "n_tokens"]:
        assert frame[column].mean() == pytest.approx(0.0, abs=1e-12)
        assert frame[column].std(ddof=1) == pytest.approx(1.0)
        assert design.scaling[column] == "z-score"
    assert set(frame["conn_onset"].unique()) == {0.0, 1.0}  # indicators as they are
    assert design.factors["model"] == ["m2", "m1"]  # config order: m2 is the reference
    one_model = regression.build_design(
        rows[rows["model"] == "m1"], regression.Spec("gain", "3"), ["m1"]
    )
    assert "model" not in one_model.formula
    assert "model (only m1 model)" in one_model.dropped


def test_story_level_narrative_sense_enters_as_a_z_scored_covariate() -> None:
    seq, cov = synthetic_tables(n_stories=6, n_sentences=4)
    stories = sorted(seq["story_id"].unique())
    scores = pd.DataFrame(
        {
            "story_id": stories,
            "median_pmi_top": [-7.0, -7.5, np.nan, -8.0, -6.5, -7.2],  # story 3: too few lemmas
        }
    )
    story = regression.story_covariates(scores)
    rows, _ = regression.regression_rows(
        seq, cov, formulation="context", history="1", story_covariates=story
    )
    # every sentence carries its story's score
    by_story = rows.groupby("story_id")["narrative_sense"].first()
    assert by_story.loc[stories[0]] == -7.0 and np.isnan(by_story.loc[stories[2]])
    design = regression.build_design(rows, regression.Spec("gain", "1"), ["m1", "m2"])
    assert " + tree_depth + narrative_sense + conn_temporal + " in design.formula
    assert design.scaling["narrative_sense"] == "z-score"
    assert design.frame["narrative_sense"].mean() == pytest.approx(0.0, abs=1e-12)
    # the unscored story's rows are dropped and counted, not filled in
    assert design.n_missing_dropped == 3 * 2  # 3 sentences with history x 2 models
    assert stories[2] not in set(design.frame["story_id"])
    with pytest.raises(StoryflowError, match="1 stories have no story-level covariates"):
        regression.regression_rows(
            seq, cov, formulation="context", history="1", story_covariates=story.iloc[1:]
        )
    # without the table the design is the sentence-level one
    plain, _ = regression.regression_rows(seq, cov, formulation="context", history="1")
    assert (
        "narrative_sense"
        not in regression.build_design(plain, regression.Spec("gain", "1"), ["m1", "m2"]).formula
    )


# --- which corpora and models the regressions use (regression.corpora, regression.models) ----


def with_models(config: dict, *names: str, instruct: str = "") -> dict:
    cfg = copy.deepcopy(config)
    cfg["models"] = [{"name": n, "roles": ["sequentiality"], "source": {}} for n in names]
    if instruct:
        cfg["models"].append({"name": instruct, "roles": ["sequentiality"], "source": {}})
    cfg["models"].append({"name": "reader", "roles": ["fabula_entropy.reader"], "source": {}})
    return cfg


def test_regression_models_default_to_every_sequentiality_model(default_config: dict) -> None:
    cfg = with_models(default_config, "base-a", "base-b", instruct="chat-c")
    assert plan.sequentiality.regression_models(cfg) == ["base-a", "base-b", "chat-c"]
    # the paper's fits: the base models only, in config order whatever the key's order
    cfg["regression"]["models"] = ["base-b", "base-a"]
    assert plan.sequentiality.regression_models(cfg) == ["base-a", "base-b"]
    cfg["regression"]["models"] = ["reader"]
    with pytest.raises(StoryflowError, match=r"regression\.models names reader, which score"):
        plan.sequentiality.regression_models(cfg)
    cfg["regression"]["models"] = ["nobody"]
    with pytest.raises(StoryflowError, match=r"regression\.models names unknown model"):
        plan.sequentiality.regression_models(cfg)


def test_regression_corpora_plan_covariates_and_fits(default_config: dict) -> None:
    outputs = plan.sequentiality.final_outputs(default_config)
    fitted = [o for o in outputs if "regression_coefficients.csv" in o]
    assert fitted == ["results/hippocorpus/sequentiality/tables/regression_coefficients.csv"]
    cfg = copy.deepcopy(default_config)
    cfg["regression"]["corpora"] = ["hippocorpus", "books"]
    outputs = plan.sequentiality.final_outputs(cfg)
    for corpus in ("hippocorpus", "books"):
        assert f"results/{corpus}/sequentiality/covariates.parquet" in outputs
        assert f"results/{corpus}/sequentiality/figures/regression_coefficients.png" in outputs
    cfg["books"]["enabled"] = False
    with pytest.raises(StoryflowError, match=r"regression\.corpora names books, not a corpus"):
        plan.sequentiality.final_outputs(cfg)
    cfg["regression"]["enabled"] = False
    assert plan.sequentiality.regression_corpora(cfg) == []
    assert not [o for o in plan.sequentiality.final_outputs(cfg) if "regression" in o]


def test_the_paper_config_fits_eq_7_and_8_without_narrative_sense() -> None:
    """Fiction Flows Eq. 7/8 (l. 416-422) have no narrative-sense term; paper.yaml fits the base
    models of Table 1 only (the instruct variants of Tables A7-A9 are scored, not fitted)."""
    import yaml

    paper = yaml.safe_load((ROOT / "config" / "paper.yaml").read_text())
    assert paper["regression"]["narrative_sense"] is False
    variants = {m["name"]: m.get("variant", "base") for m in paper["models"]}
    assert {variants[name] for name in paper["regression"]["models"]} == {"base"}
    instruct = [
        m["name"] for m in paper["models"]
        if m.get("variant") == "instruct" and "sequentiality" in m.get("roles", ["sequentiality"])
    ]  # fmt: skip
    assert len(instruct) == 5  # Llama3-I, Mistral3-I, Qwen3:8b-I, Qwen3:sm-I, smoLLM-I


@needs_r
def test_fit_specifications_tables(tmp_path: Path) -> None:
    seq, cov = synthetic_tables()
    specs = [regression.Spec("gain", "1"), regression.Spec("raw", "3")]
    coefs, diagnostics = regression.fit_specifications(
        seq,
        cov,
        specs,
        models=["m1", "m2"],
        formulation="context",
        fdr_alpha=0.05,
        confidence=0.95,
        skipped={"gain_h9": "history 9 not scored (nll.max_history = 3)"},
    )
    assert list(coefs.columns) == regression.COEFFICIENT_COLUMNS
    assert list(diagnostics["spec"]) == ["gain_h1", "raw_h3", "gain_h9"]
    assert diagnostics["status"].tolist() == [
        "fitted",
        "fitted",
        "skipped: history 9 not scored (nll.max_history = 3)",
    ]
    fitted = diagnostics.iloc[:2]
    assert (fitted["n_obs"] == 30 * 7 * 2).all() and (fitted["n_stories"] == 30).all()
    assert (fitted["n_first_sentences_dropped"] == 30 * 2).all()
    assert fitted["dropped_predictors"].str.contains("conn_contrastive").all()
    gain = coefs[coefs["spec"] == "gain_h1"].set_index("term")
    # the planted effect: 0.2 per unit of embedding_sim_h1, i.e. 0.2 * SD per SD
    sd = gain.at["embedding_sim_h1", "predictor_sd"]
    assert gain.at["embedding_sim_h1", "estimate"] == pytest.approx(0.2 * sd, rel=0.15)
    assert bool(gain.at["embedding_sim_h1", "significant_fdr"])
    assert gain.at["embedding_sim_h1", "label"] == "embedding similarity (fake)"
    assert gain.at["agent_continuity_h1", "label"] == "agent continuity (subject-pronoun-heuristic)"
    assert gain.at["modelm2", "role"] == "control"
    # BH over every coefficient but the intercept; CIs from the Satterthwaite t quantile
    family = gain.drop(index="(Intercept)")
    np.testing.assert_allclose(
        family["p_fdr"], stats.false_discovery_control(family["p"], method="bh")
    )
    assert np.isnan(gain.at["(Intercept)", "p_fdr"])
    half = stats.t.ppf(0.975, gain["df"]) * gain["se"]
    np.testing.assert_allclose(gain["ci_high"] - gain["estimate"], half)
    raw = coefs[coefs["spec"] == "raw_h3"].set_index("term")
    assert raw.at["nll_base", "role"] == "control" and raw.at["nll_base", "estimate"] > 0.3

    figure = plot_coefficients(
        coefs, [tmp_path / "f.png", tmp_path / "f.pdf"], dpi=50, width_per_panel=3.0
    )
    assert (tmp_path / "f.png").stat().st_size > 0 and (tmp_path / "f.pdf").stat().st_size > 0
    assert len(figure.axes) == 2
    labels = [t.get_text() for t in figure.axes[0].get_yticklabels()]
    assert "intercept" not in labels and "NLL without context" not in labels


@needs_r
def test_fit_corpus_reads_the_files_adds_the_narrative_sense_and_splits_by_spec(
    tmp_path: Path,
) -> None:
    """The rule's entry point: the tables read from their files, the narrative-sense story
    scores (when given) as a z-scored story covariate, one coefficient table per spec."""
    seq, cov = synthetic_tables(n_stories=12, n_sentences=5, models=["m1"])
    seq.to_parquet(tmp_path / "seq.parquet")
    cov.to_parquet(tmp_path / "cov.parquet")
    stories = sorted(seq["story_id"].unique())
    pd.DataFrame(
        {
            "story_id": stories,
            "group": "recalled",
            "n_words": 50,
            "median_pmi_top": [np.nan, *np.linspace(-8, -6, len(stories) - 1)],
            "pair_pmi": 0.0,
        }
    ).to_parquet(tmp_path / "scores.parquet")
    settings = {
        "specs": ["gain_h1", "raw_h3"],
        "models": ["m1"],
        "formulation": "context",
        "fdr_alpha": 0.05,
        "confidence": 0.95,
        "skipped": {"gain_h9": "history 9 not scored"},
    }
    files = ([tmp_path / "seq.parquet"], tmp_path / "cov.parquet")
    coefs, diagnostics, per_spec = regression.fit_corpus(
        *files, [tmp_path / "scores.parquet"], **settings
    )
    assert [t["spec"].unique().tolist() for t in per_spec] == [["gain_h1"], ["raw_h3"]]
    assert sum(map(len, per_spec)) == len(coefs)
    assert diagnostics["spec"].tolist() == ["gain_h1", "raw_h3", "gain_h9"]
    assert "narrative_sense" in set(per_spec[0]["term"])
    # the story without a score (its first story) is left out of the fits
    assert (diagnostics.iloc[:2]["n_stories"] == 11).all()
    plain, plain_diagnostics, _ = regression.fit_corpus(*files, None, **settings)
    assert "narrative_sense" not in set(plain["term"])
    assert (plain_diagnostics.iloc[:2]["n_stories"] == 12).all()


@pytest.mark.slow
@needs_r
def test_tiny_workflow_fits_on_real_nlls(tiny_run: Path) -> None:
    """The tiny config end to end (the shared run of conftest's ``tiny_run``): covariates and
    lmer fits from real NLLs (h = 1 only)."""
    results = tiny_run / "results/hippocorpus/sequentiality"
    covariates = pd.read_parquet(results / "covariates.parquet")
    sentences = pd.read_parquet(tiny_run / "results/hippocorpus/corpus/sentences.parquet")
    assert len(covariates) == len(sentences)
    diagnostics = pd.read_csv(results / "tables/regression_diagnostics.csv")
    assert diagnostics.set_index("spec")["status"].to_dict() == {
        "gain_h1": "fitted",
        "raw_h1": "fitted",
        "gain_h3": "skipped: history 3 not scored (nll.max_history = 2)",
        "raw_h3": "skipped: history 3 not scored (nll.max_history = 2)",
    }
    fitted = diagnostics[diagnostics["status"] == "fitted"]
    first = (sentences["sentence_idx"] == 0).sum()
    assert (fitted["n_obs"] == len(sentences) - first).all()
    assert (fitted["n_first_sentences_dropped"] == first).all()
    for spec in ["gain_h1", "raw_h1"]:
        table = regression.read_coefficients(results / f"tables/regression_{spec}.csv")
        assert list(table.columns) == regression.COEFFICIENT_COLUMNS
        assert table["estimate"].notna().all() and table["se"].gt(0).all()
