"""Linear mixed-effects models fitted in R (lme4 and lmerTest) through rpy2.

The one place storyflow talks to R: :func:`check_r` reports what is installed, :func:`fit_lmer`
fits one ``lmerTest::lmer`` model by maximum likelihood and returns its coefficients
(estimates in the outcome's unit per unit of the predictor, Satterthwaite degrees of freedom and
p-values) with every warning and message R gave. Measures build their designs and call it.
"""

from __future__ import annotations

import atexit
import logging
import os
import shutil
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from typing import Any

import numpy as np
import pandas as pd

from storyflow.errors import StoryflowError

log = logging.getLogger(__name__)

R_PACKAGES = ("lme4", "lmerTest")
RPY2_PINS = "rpy2==3.6.6 rpy2-robjects==3.6.6 rpy2-rinterface==3.6.5"
R_INSTALL_HINT = (
    "Install them: on Debian/Ubuntu (as root) `apt-get install -y --no-install-recommends "
    "r-base-core r-cran-lme4 r-cran-lmertest`; with conda (no root needed) run the workflow "
    "with `--software-deployment-method conda` (envs/regression.yaml) or `conda install -c "
    "conda-forge r-base r-lme4 r-lmertest`; elsewhere install R from https://cran.r-project.org "
    "and run `install.packages(c('lme4', 'lmerTest'))` in R. The Python side needs "
    f"`pip install {RPY2_PINS}`. Or switch the stage off with `regression: {{enabled: false}}`."
)


def _missing_r(what: str) -> StoryflowError:
    return StoryflowError(
        f"the regression stage fits lme4/lmerTest models in R through rpy2, but {what}. "
        + R_INSTALL_HINT
    )


def _import_robjects() -> Any:
    """``rpy2.robjects``, starting R (ABI mode: no compiler needed; quiet about API mode)."""
    os.environ.setdefault("RPY2_CFFI_MODE", "ABI")
    library_path = os.environ.get("LD_LIBRARY_PATH")
    import rpy2.robjects as ro

    # Starting R sets LD_LIBRARY_PATH (R's lib folder and /usr/lib/x86_64-linux-gnu) in this
    # process. R's libraries are loaded by then; keeping the setting would make any Python started
    # later from this process load the system's libpython instead of its own.
    if library_path is None:
        os.environ.pop("LD_LIBRARY_PATH", None)
    else:
        os.environ["LD_LIBRARY_PATH"] = library_path
    _quiet_exit_once()
    return ro


@cache
def _quiet_exit_once() -> None:
    """Keep rpy2's "Embedded R ended." out of the logs at interpreter exit.

    rpy2 ends R in an ``atexit`` hook that logs that line at INFO level. By then a handler's
    stream may be closed (pytest's captured stderr, a log file closed by the runner), and
    logging prints "--- Logging error ---" with a traceback for an ordinary exit. This hook is
    registered after rpy2's (R starts when ``rpy2.robjects`` is first imported), so it runs
    first (``atexit`` runs last in, first out) and raises the level of rpy2's embedding logger
    to WARNING: R still ends the same way, its start/end notes are simply not logged then.
    """
    atexit.register(logging.getLogger("rpy2.rinterface_lib.embedded").setLevel, logging.WARNING)


def check_r() -> dict[str, str]:
    """Check that R, rpy2, lme4 and lmerTest are usable; return their versions.

    Raises:
        StoryflowError: one of them is missing; the message names it and how to install it.
    """
    if not os.environ.get("R_HOME") and shutil.which("R") is None:
        raise _missing_r("R is not installed (no `R` on PATH and R_HOME is not set)")
    try:
        ro = _import_robjects()
    except ImportError as err:
        raise _missing_r(f"the Python package rpy2 cannot be imported ({err})") from err
    except Exception as err:  # rpy2 raises various errors when libR cannot be loaded
        raise _missing_r(
            f"R could not be started through rpy2 ({type(err).__name__}: {err})"
        ) from err
    _route_r_console()
    installed = ro.r("function(p) nzchar(system.file(package = p))")
    missing = [p for p in R_PACKAGES if not installed(p)[0]]
    if missing:
        raise _missing_r(f"the R package(s) {', '.join(missing)} are not installed")
    versions = {"r_version": str(ro.r("R.version.string")[0])}
    for package in R_PACKAGES:
        versions[f"{package}_version"] = str(ro.r(f"as.character(packageVersion('{package}'))")[0])
    return versions


def _route_r_console() -> None:
    """Send what R prints to the log instead of stdout (rpy2's default)."""
    from rpy2.rinterface_lib import callbacks

    # the parameter named as rpy2's default callbacks name it (`s`)
    def write(s: str) -> None:
        if s.strip():
            log.info("R: %s", s.rstrip())

    def write_error(s: str) -> None:
        if s.strip():
            log.warning("R: %s", s.rstrip())

    callbacks.consolewrite_print = write
    callbacks.consolewrite_warnerror = write_error


# Runs one lmer fit collecting every warning and message (they are returned, never printed).
_R_FIT = r"""
function(data, formula, group) {
  warnings <- character(0)
  messages <- character(0)
  collect <- function(expr) withCallingHandlers(expr,
    warning = function(w) {
      warnings <<- c(warnings, conditionMessage(w))
      invokeRestart("muffleWarning")
    },
    message = function(m) {
      messages <<- c(messages, trimws(conditionMessage(m)))
      invokeRestart("muffleMessage")
    })
  fit <- collect(lmerTest::lmer(stats::as.formula(formula), data = data, REML = FALSE))
  coefs <- collect(if (inherits(fit, "lmerModLmerTest"))
    summary(fit, ddf = "Satterthwaite")$coefficients else summary(fit)$coefficients)
  conv <- fit@optinfo$conv$lme4$messages
  vc <- as.data.frame(lme4::VarCorr(fit))
  dropped <- attr(fit@pp$X, "col.dropped")
  list(
    terms = rownames(coefs),
    columns = colnames(coefs),
    coefs = as.numeric(coefs),
    nrow = nrow(coefs),
    warnings = as.character(warnings),
    messages = as.character(messages),
    convergence = if (is.null(conv)) character(0) else as.character(conv),
    optimizer_code = as.integer(fit@optinfo$conv$opt),
    singular = lme4::isSingular(fit),
    nobs = as.integer(stats::nobs(fit)),
    ngroups = as.integer(lme4::ngrps(fit)[[group]]),
    loglik = as.numeric(stats::logLik(fit)),
    aic = stats::AIC(fit),
    sd_story = vc$sdcor[vc$grp == group],
    sd_residual = vc$sdcor[vc$grp == "Residual"],
    dropped = if (is.null(dropped)) character(0) else names(dropped)
  )
}
"""


# One ordinary least-squares fit (stats::lm): its coefficients with the residual df.
_R_LM = r"""
function(data, formula) {
  fit <- stats::lm(stats::as.formula(formula), data = data)
  coefs <- summary(fit)$coefficients
  list(terms = rownames(coefs), coefs = as.numeric(coefs), nrow = nrow(coefs),
       df = as.numeric(fit$df.residual), nobs = as.integer(stats::nobs(fit)))
}
"""


@dataclass
class LmerFit:
    """Result of :func:`fit_lmer`.

    ``coefficients`` has one row per fixed effect (``term`` as R names it) with ``estimate``,
    ``se`` (standard error), ``df`` (Satterthwaite), ``t`` and ``p`` (two-sided); the other
    fields are what R reported (``converged`` is False when lme4 raised a convergence message or
    the optimizer returned a non-zero code; ``singular`` is lme4's ``isSingular``).
    """

    coefficients: pd.DataFrame
    warnings: list[str] = field(default_factory=list)
    messages: list[str] = field(default_factory=list)
    convergence: list[str] = field(default_factory=list)
    converged: bool = True
    singular: bool = False
    n_obs: int = 0
    n_groups: int = 0
    loglik: float = float("nan")
    aic: float = float("nan")
    sd_story: float = float("nan")
    sd_residual: float = float("nan")
    dropped_columns: list[str] = field(default_factory=list)


def _to_r_frame(frame: pd.DataFrame, factors: Mapping[str, Sequence[str]]) -> Any:
    """An R data.frame: numeric columns as doubles, ``factors`` (column → levels) as factors."""
    ro = _import_robjects()
    columns: dict[str, Any] = {}
    for name in frame.columns:
        if name in factors:
            columns[name] = ro.FactorVector(
                ro.StrVector(frame[name].astype(str).tolist()),
                levels=ro.StrVector(list(factors[name])),
            )
        else:
            columns[name] = ro.FloatVector(frame[name].to_numpy(dtype=float))
    return ro.DataFrame(columns)


def fit_lmer(
    frame: pd.DataFrame,
    formula: str,
    factors: Mapping[str, Sequence[str]],
    group: str = "story_id",
) -> LmerFit:
    """Fit ``formula`` by ML with ``lmerTest::lmer(REML = FALSE)`` (call :func:`check_r` first).

    Args:
        frame: Every column the formula uses; the columns in ``factors`` are turned into R
            factors, the others must be numeric.
        formula: An lme4 formula, e.g. ``"y ~ x + (1 | story_id)"``.
        factors: Factor columns and their levels (the first level is the reference).
        group: The random intercept's grouping column (``n_groups`` and ``sd_story`` are its).

    Raises:
        StoryflowError: R stopped with an error (its message is included).
    """
    ro = _import_robjects()
    from rpy2.rinterface_lib.embedded import RRuntimeError

    fit_function = ro.r(_R_FIT)
    try:
        result = fit_function(_to_r_frame(frame, factors), formula, group)
    except RRuntimeError as err:
        raise StoryflowError(f"lmer could not fit {formula!r}: {err}") from err
    get = result.rx2
    nrow = int(get("nrow")[0])
    values = np.asarray(list(get("coefs")), dtype=float).reshape(-1, nrow).T
    r_columns = list(get("columns"))
    names = {
        "Estimate": "estimate",
        "Std. Error": "se",
        "df": "df",
        "t value": "t",
        "Pr(>|t|)": "p",
    }
    coefs = pd.DataFrame(values, columns=[names.get(c, c) for c in r_columns])
    for column in ("df", "p"):
        if column not in coefs:
            coefs[column] = np.nan
    coefs.insert(0, "term", list(get("terms")))
    # lme4 lists a singular fit among its convergence messages; it is reported as ``singular``
    # (and its message in ``messages``), so it does not count as a convergence failure here.
    convergence = [m for m in get("convergence") if not m.startswith("boundary (singular) fit")]
    return LmerFit(
        coefficients=coefs[["term", "estimate", "se", "df", "t", "p"]],
        warnings=list(get("warnings")),
        messages=list(get("messages")),
        convergence=convergence,
        converged=not convergence and int(get("optimizer_code")[0]) == 0,
        singular=bool(get("singular")[0]),
        n_obs=int(get("nobs")[0]),
        n_groups=int(get("ngroups")[0]),
        loglik=float(get("loglik")[0]),
        aic=float(get("aic")[0]),
        sd_story=float(get("sd_story")[0]),
        sd_residual=float(get("sd_residual")[0]),
        dropped_columns=list(get("dropped")),
    )


def fit_lm(frame: pd.DataFrame, formula: str, factors: Mapping[str, Sequence[str]]) -> LmerFit:
    """Fit ``formula`` by ordinary least squares with R's ``stats::lm`` (a design with no
    random effect; call :func:`check_r` first): the coefficients with ``df`` the residual
    degrees of freedom, in an :class:`LmerFit` whose random-effect fields stay empty.

    Raises:
        StoryflowError: R stopped with an error (its message is included).
    """
    ro = _import_robjects()
    from rpy2.rinterface_lib.embedded import RRuntimeError

    try:
        result = ro.r(_R_LM)(_to_r_frame(frame, factors), formula)
    except RRuntimeError as err:
        raise StoryflowError(f"lm could not fit {formula!r}: {err}") from err
    get = result.rx2
    nrow = int(get("nrow")[0])
    values = np.asarray(list(get("coefs")), dtype=float).reshape(-1, nrow).T
    coefs = pd.DataFrame(values, columns=["estimate", "se", "t", "p"])
    coefs.insert(0, "term", list(get("terms")))
    coefs["df"] = float(get("df")[0])
    return LmerFit(
        coefficients=coefs[["term", "estimate", "se", "df", "t", "p"]],
        n_obs=int(get("nobs")[0]),
    )
