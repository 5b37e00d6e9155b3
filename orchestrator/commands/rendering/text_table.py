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
    if any(limit is not None for limit in limits):
        rows = [[_fit(cell, limit) for cell, limit in zip(row, limits, strict=False)] for row in rows]
    cells = [_measured(row) for row in rows]
    header = _measured(columns)
    widths = [max(size for _, size in column) for column in zip(header, *cells, strict=False)]
    aligned_right = [name in right for name in columns]

    def line(row: Sequence[tuple[str, int]], edge: str) -> str:
        padded = [
            " " * (width - size) + text if at_right else text + " " * (width - size)
            for (text, size), width, at_right in zip(row, widths, aligned_right, strict=False)
        ]
        return f"{edge} " + f" {edge} ".join(padded) + f" {edge}"

    def rule(left: str, fill: str, joint: str, end: str) -> str:
        return left + joint.join(fill * (width + 2) for width in widths) + end

    lines = []
    if title:
        total = sum(widths) + 3 * len(widths) + 1
        room = max(0, total - cell_len(title))
        lines.append(" " * (room // 2) + title)
    lines += [rule("┏", "━", "┳", "┓"), line(header, "┃"), rule("┡", "━", "╇", "┩")]
    lines += [line(row, "│") for row in cells]
    lines.append(rule("└", "─", "┴", "┘"))
    return "\n".join(lines) + "\n"


def _measured(row: Sequence[str]) -> list[tuple[str, int]]:
    """Each cell with its width in terminal cells (its length, for the usual ASCII text)."""
    sizes = map(len, row) if "".join(row).isascii() else map(cell_len, row)
    return list(zip(row, sizes, strict=False))


def _fit(cell: str, limit: int | None) -> str:
    if limit is None or len(cell) <= limit or cell_len(cell) <= limit:
        return cell
    return set_cell_size(cell, limit - 1) + ELLIPSIS
