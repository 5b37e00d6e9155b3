"""Tables for `status` and `logs`, drawn as rich draws them, in time linear in the rows.

rich's `Table` measures and wraps every cell: listing 10,000 features took 7 s, 100,000 over a
minute. Here each row is one line, padded to its column's widest cell; a cell wider than its
column's limit is cut with an ellipsis (`--json` and `logs ID` give the whole text). Cells are
printed as they are: callers escape what they read from files.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.cells import cell_len, set_cell_size

ELLIPSIS = "…"


def render_table(
    columns: Sequence[str], rows: Sequence[Sequence[str]], *, title: str = "",
    right: frozenset[str] = frozenset(), max_width: dict[str, int] | None = None,
) -> str:
    """The table as text: an optional centred title, a heavy-edged header, one line per row."""
    limits = [(max_width or {}).get(name) for name in columns]
    rows = [[_fit(cell, limit) for cell, limit in zip(row, limits)] for row in rows]
    widths = [cell_len(name) for name in columns]
    for row in rows:
        for index, cell in enumerate(row):
            widths[index] = max(widths[index], cell_len(cell))
    aligned_right = [name in right for name in columns]

    def line(cells: Sequence[str], edge: str) -> str:
        padded = (_pad(cell, width, at_right) for cell, width, at_right in zip(cells, widths, aligned_right))
        return f"{edge} " + f" {edge} ".join(padded) + f" {edge}"

    def rule(left: str, fill: str, joint: str, end: str) -> str:
        return left + joint.join(fill * (width + 2) for width in widths) + end

    lines = []
    if title:
        total = sum(widths) + 3 * len(widths) + 1
        lines.append(_pad(title, total, False, centre=True).rstrip())
    lines += [rule("┏", "━", "┳", "┓"), line(columns, "┃"), rule("┡", "━", "╇", "┩")]
    lines += [line(row, "│") for row in rows]
    lines.append(rule("└", "─", "┴", "┘"))
    return "\n".join(lines) + "\n"


def _fit(cell: str, limit: int | None) -> str:
    if limit is None or cell_len(cell) <= limit:
        return cell
    return set_cell_size(cell, limit - 1) + ELLIPSIS


def _pad(cell: str, width: int, at_right: bool, *, centre: bool = False) -> str:
    room = width - cell_len(cell)
    if room <= 0:
        return cell
    if centre:
        return " " * (room // 2) + cell + " " * (room - room // 2)
    return " " * room + cell if at_right else cell + " " * room
