"""The SQL that counts the entities a candidate is about, run by the warehouse and re-run by the
verifier. One builder for the table, or the fact table joined to a dimension table."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from ..probes import Join


def quote(col: str) -> str:
    return '"' + str(col).replace('"', '""') + '"'


def lit(v) -> str:
    """A SQL literal of a value read from a result."""
    if isinstance(v, (bool, np.bool_)):
        return "TRUE" if v else "FALSE"
    if isinstance(v, (int, np.integer)):
        return str(int(v))
    if isinstance(v, (float, np.floating)):
        return repr(float(v))
    return "'" + str(v).replace("'", "''") + "'"


def eq(col_sql: str, value) -> str:
    return f"{col_sql} = {lit(value)}"


def since(col_sql: str, date: str) -> str:
    return f"{col_sql} >= TIMESTAMP '{date}'"


@dataclass(frozen=True)
class Source:
    """What a count reads: ``ref``, or ``ref f JOIN dim o ON f.on = o.key`` when the probe joined (through a
    middle table ``m`` when the join has a ``via``)."""
    ref: str
    join: Join | None = None
    flags: dict[str, list[str]] = field(default_factory=dict)  # {name: [due, actual(, "date")]}: actual > due

    @property
    def sql(self) -> str:
        return self.join.from_sql(self.ref, quote) if self.join else self.ref

    def fact(self, col: str) -> str:
        """A column of the fact table (a flag the probe computed: its comparison of two of them)."""
        if col in self.flags:
            due, actual, *grain = self.flags[col]
            if "date" in grain:  # a day due and a moment done: late only on a later day
                return f"CAST({self.fact(actual)} AS DATE) > CAST({self.fact(due)} AS DATE)"
            return f"{self.fact(actual)} > {self.fact(due)}"
        return f"f.{quote(col)}" if self.join else quote(col)

    def dim(self, col: str) -> str:
        """A column of the dimension table (of the table itself without a join)."""
        return f"o.{quote(col)}" if self.join else quote(col)

    def count(self, *conds: str, what: str = "count(*)") -> str:
        where = f" WHERE {' AND '.join(conds)}" if conds else ""
        return f"SELECT {what} AS count FROM {self.sql}{where}"

    def count_distinct(self, col: str, *conds: str) -> str:
        return self.count(*conds, what=f"count(DISTINCT {self.fact(col)})")

    def count_never(self, entity: str, flag: str, *conds: str) -> str:
        """Entities none of whose rows has ``flag`` true (the customers of a segment who never bought)."""
        e = self.fact(entity)
        return (f"SELECT count(*) AS count FROM (SELECT {e} FROM {self.sql} WHERE {' AND '.join(conds)} "
                f"GROUP BY {e} HAVING max(CASE WHEN {self.fact(flag)} THEN 1 ELSE 0 END) = 0) AS never")
