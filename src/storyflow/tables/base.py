"""The table type: named columns with dtypes and a meaning; reading and checking a table file."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

from storyflow.errors import StoryflowError

#: Columns that hold labels: read from CSV as text, never as numbers ("1" stays "1", "full" too).
TEXT_COLUMNS = frozenset(
    {
        "story_id",
        "story_type",
        "group",
        "model",
        "formulation",
        "history",
        "measure",
        "contrast",
        "group_a",
        "group_b",
        "genre",
        "pov",
        "document_id",
        "measure_a",
        "measure_b",
        "model_a",
        "model_b",
        "unit",
        "models",
        "corpus",
        "role",
        "check",
        "rule",
    }
)


#: The grouping label's column in the pipeline's own tables; a CSV corpus's tables that a
#: reader opens call it :data:`USER_LABEL` (:func:`labelled`, :func:`read`).
LABEL, USER_LABEL = "story_type", "group"


def labelled(frame: pd.DataFrame, column: str) -> pd.DataFrame:
    """``frame`` with its :data:`LABEL` column named ``column`` (a CSV corpus's ``group``)."""
    if column == LABEL or LABEL not in frame.columns:
        return frame
    return frame.rename(columns={LABEL: column})


class TableError(StoryflowError):
    """A table lacks columns its reader needs (names the file, the missing and found columns)."""


@dataclass(frozen=True)
class Table:
    """One table's schema: ``columns`` maps each column to its pandas dtype, in file order.

    ``key`` lists the columns that identify a row; ``extra`` says whether columns beyond
    ``columns`` may follow (label columns of a corpus, covariates per window, ...).
    """

    name: str
    columns: Mapping[str, str]
    key: tuple[str, ...] = ()
    extra: bool = False
    doc: str = field(default="", compare=False)

    @property
    def names(self) -> list[str]:
        """The column names, in order."""
        return list(self.columns)

    def empty(self) -> pd.DataFrame:
        """A table with these columns and dtypes and no rows."""
        return pd.DataFrame({c: pd.Series(dtype=d) for c, d in self.columns.items()})

    def row(self, **values: Any) -> dict[str, Any]:
        """One row of this table by column name: every column, no other key (ValueError
        naming the missing and unknown ones)."""
        self._check_keys(values, self.names)
        return {c: values[c] for c in self.names}

    def partial(
        self,
        rows: Iterable[Mapping[str, Any]],
        omit: Sequence[str] = (),
        extra: Sequence[str] = (),
    ) -> pd.DataFrame:
        """``rows`` as a frame of this table's columns but ``omit`` (those the caller adds
        next, such as the validity labels ``valid`` and ``failed``), then ``extra`` ones (a
        table with ``extra`` columns): each record checked as :meth:`row` checks one, so no
        value is dropped or left out unseen. Pass the result on to :meth:`frame`."""
        unknown = [c for c in omit if c not in self.columns]
        if unknown:
            raise ValueError(f"{unknown} are not columns of the {self.name} table")
        names = [c for c in self.names if c not in omit] + list(extra)
        records = list(rows)
        for record in records:
            self._check_keys(record, names)
        return pd.DataFrame(records, columns=names)

    def _check_keys(self, values: Mapping[str, Any], names: Sequence[str]) -> None:
        """ValueError naming the ``names`` a record lacks and the keys it has beyond them."""
        missing = [c for c in names if c not in values]
        unknown = [k for k in values if k not in names]
        if missing or unknown:
            raise ValueError(
                f"a {self.name} row lacks {missing or 'nothing'} and has unknown keys "
                f"{unknown or 'none'}"
            )

    def frame(self, rows: Iterable[Mapping[str, Any]] | pd.DataFrame) -> pd.DataFrame:
        """``rows`` as this table, with its dtypes: records by column name, each checked by
        :meth:`row` (every column, no other key; ValueError), or a frame holding the columns
        (those beyond them are dropped unless ``extra``).

        A row given by position (a tuple or list in column order) is refused (TypeError): build
        it by name, e.g. with :meth:`row`."""
        if isinstance(rows, pd.DataFrame):
            frame = rows[self.names] if not self.extra else rows
        else:
            records = []
            for r in rows:
                if not isinstance(r, Mapping):
                    raise TypeError(
                        f"a {self.name} row must be a record by column name (a mapping, e.g. "
                        f"from Table.row(column=value, ...)), not a {type(r).__name__} in column "
                        f"order: {r!r:.100}"
                    )
                records.append(self.row(**r))
            frame = pd.DataFrame.from_records(records, columns=self.names)
        if frame.empty:
            return self.empty() if not self.extra else frame.astype(dict(self.columns))
        return frame.astype(dict(self.columns))

    def check(
        self,
        frame: pd.DataFrame,
        source: str | Path | None = None,
        needs: Iterable[str] | None = None,
    ) -> pd.DataFrame:
        """``frame`` when it has every column of this table (or those in ``needs``), else
        :class:`TableError` naming ``source``, the missing and the found columns."""
        wanted = list(self.columns) if needs is None else list(needs)
        unknown = [c for c in wanted if c not in self.columns]
        if unknown:
            raise ValueError(f"{unknown} are not columns of the {self.name} table")
        missing = [c for c in wanted if c not in frame.columns]
        if missing:
            where = f"{source}: " if source else ""
            raise TableError(
                f"{where}the {self.name} table lacks column(s) {', '.join(missing)}; "
                f"it has {', '.join(map(str, frame.columns)) or 'no columns'}. It was probably "
                "written by another storyflow version or edited by hand: delete it and re-run "
                "the rule that makes it."
            )
        return frame


def read(table: Table, path: str | Path, needs: Iterable[str] | None = None) -> pd.DataFrame:
    """Read ``path`` (Parquet, or CSV with label columns kept as text) and check its columns
    (all of ``table``'s, or those in ``needs``); a file that names the grouping label
    ``group`` (a CSV corpus's, :func:`labelled`) is read with it as ``story_type``."""
    path = Path(path)
    if path.suffix == ".csv":
        header = pd.read_csv(path, nrows=0).columns
        frame = pd.read_csv(path, dtype={c: str for c in TEXT_COLUMNS if c in header})
    else:
        frame = pd.read_parquet(path)
    if LABEL in table.columns and LABEL not in frame.columns and USER_LABEL in frame.columns:
        frame = frame.rename(columns={USER_LABEL: LABEL})  # a CSV corpus's table (labelled)
    return table.check(frame, path, needs)


def read_all(table: Table, paths: str | Path | Sequence[str | Path]) -> pd.DataFrame:
    """:func:`read` each of ``paths`` and concatenate them (at least one path)."""
    paths = [paths] if isinstance(paths, str | Path) else list(paths)
    if not paths:
        raise StoryflowError(f"no {table.name} tables were given")
    return pd.concat([read(table, p) for p in paths], ignore_index=True)


def parquet_to_csv(
    table: Table, source: str | Path, target: str | Path, label: str = LABEL
) -> pd.DataFrame:
    """Write the Parquet table ``source`` (checked against ``table``) to ``target`` as CSV: the
    same rows and columns, the grouping label's column named ``label`` (:func:`labelled`), no
    index, floats at full precision (they read back equal), booleans as ``True``/``False``, a
    missing value as an empty field. Returns the table as read."""
    frame = read(table, source)
    labelled(frame, label).to_csv(target, index=False)
    return frame
