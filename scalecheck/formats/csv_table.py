"""CSV tables: a header row kernel,metric,<parameter>...,value and one row per repetition."""

from __future__ import annotations

import csv
import io
from collections import Counter
from pathlib import Path

from scalecheck.data.measurement import Run, RunBuilder, number
from scalecheck.errors import InputError, Location
from scalecheck.formats.limits import LimitedRunBuilder, check_parameter_count
from scalecheck.formats.source import read_text

KERNEL, METRIC, UNIT, VALUE = "kernel", "metric", "unit", "value"
KERNEL_ALIAS = "callpath"  # Extra-P's name for a kernel
COLUMNS_FIX = ("scalecheck reads a header row kernel,metric,<parameter>...,value (metric and unit are optional, "
               "callpath may stand for kernel; every other column is a parameter) and one row per repetition")


def read_csv_table(path: Path) -> Run:
    """`read_csv_table_text` of the file `path`, read once."""
    path = Path(path)
    return read_csv_table_text(read_text(path), path)


def read_csv_table_text(text: str, source: Path) -> Run:
    """Read a CSV table; rows for the same kernel, metric and point add repetitions."""
    # newline="" leaves line endings to the csv module, which also handles quoted fields holding newlines
    reader = csv.reader(io.StringIO(text, newline=""), strict=True)  # strict: a stray quote is an error
    header: list[str] | None = None
    columns: dict[str, int] = {}
    builder: RunBuilder | None = None
    try:
        for row in reader:
            if not any(cell.strip() for cell in row):
                continue  # blank lines, also those holding only spaces or commas
            if header is None:
                header = [cell.strip() for cell in row]
                columns = _columns(source, header, reader.line_num)
                roles = set(columns.values())
                builder = LimitedRunBuilder([name for index, name in enumerate(header) if index not in roles], source)
                continue
            assert builder is not None
            _add_row(builder, header, columns, row, Location(source, reader.line_num))
    except csv.Error as err:
        raise InputError(f"not valid CSV: {err}", where=Location(source, reader.line_num),
                         fix="check the quotes on this line: a field that starts with \" must end with \"") from None
    if builder is None:
        raise InputError("the file holds no header row", where=Location(source), fix=COLUMNS_FIX)
    return builder.build()


def _columns(source: Path, header: list[str], line: int) -> dict[str, int]:
    """Indices of the columns with a meaning (kernel, metric, unit, value); the others are parameters."""
    where = Location(source, line)
    if len(header) == 1 and any(sep in header[0] for sep in ";\t"):
        raise InputError("the header row has no commas", where=where,
                         fix="scalecheck reads comma-separated values; " + COLUMNS_FIX)
    counts = Counter(header)  # not list.count per column: a header may have a million columns
    for index, name in enumerate(header):
        if not name:
            raise InputError(f"column {index + 1} has no name", where=where,
                             fix="name every column in the header row, or delete the empty column")
        if counts[name] > 1:
            raise InputError(f"column '{name}' appears twice", where=where, fix="give every column its own name")
    if KERNEL in header and KERNEL_ALIAS in header:
        raise InputError("the header has both 'kernel' and 'callpath'", where=where,
                         fix="keep one of them: callpath is another name for the kernel column")
    named = {KERNEL: KERNEL_ALIAS if KERNEL_ALIAS in header else KERNEL, METRIC: METRIC, UNIT: UNIT, VALUE: VALUE}
    missing = [role for role in (KERNEL, VALUE) if named[role] not in header]
    if missing:
        raise InputError(f"missing column(s) {', '.join(missing)}", where=where, fix=COLUMNS_FIX)
    columns = {role: header.index(name) for role, name in named.items() if name in header}
    if len(columns) == len(header):
        raise InputError("the header has no parameter column", where=where,
                         fix="add a column per parameter, e.g. kernel,p,value; " + COLUMNS_FIX)
    check_parameter_count(len(header) - len(columns), where,
                          fix="keep a column for each parameter that the measurements vary; " + COLUMNS_FIX)
    return columns


def _add_row(builder: RunBuilder, header: list[str], columns: dict[str, int], row: list[str],
             where: Location) -> None:
    """Add the one repetition in `row` to `builder`."""
    if len(row) != len(header):
        raise InputError(f"the row has {len(row)} fields but the header has {len(header)} columns", where=where,
                         fix=f"give every row the columns {','.join(header)}; quote a field that holds a comma")
    roles = set(columns.values())
    fix = f"correct or delete the row on line {where.line}"
    point = [number(row[index], f"parameter '{name}'", where, fix)
             for index, name in enumerate(header) if index not in roles]
    cell = {role: row[index].strip() for role, index in columns.items()}
    builder.add(cell[KERNEL], cell.get(METRIC, ""), point, [cell[VALUE]], where, cell.get(UNIT, ""))
