"""The demo behind `make demo`: validate every shipped example at each Tile feature-level row."""

from pathlib import Path

import numpy as np
from rich.console import Console
from rich.table import Table

import dmltile

HERE = Path(__file__).parent
LEVELS = ["1.0", "2.1", "3.1", "4.1"]


def main() -> None:
    """Print a files x feature levels matrix, then the full report for one invalid example."""
    console = Console(width=max(Console().width, 110))
    table = Table(title="Every example at each Tile feature-level row (ok, or the rule codes broken)")
    table.add_column("example", no_wrap=True)
    for level in LEVELS:
        table.add_column(level, justify="center")
    table.add_column("lowest level")
    for path in sorted(HERE.glob("*.json")):
        cells = []
        for level in LEVELS:
            report = dmltile.validate(path, feature_level=level)
            cells.append(
                "[green]ok[/]"
                if report.valid
                else "[red]" + " ".join(sorted({i.code for i in report.errors})) + "[/]"
            )
        lowest = dmltile.min_feature_level(path)
        table.add_row(path.name, *cells, lowest.dotted if lowest else "[red]none[/]")
    console.print(table)

    bad = HERE / "invalid_output_sizes.json"
    console.print(f"\n[bold]{bad.name}[/] at 4.1:")
    console.print(str(dmltile.validate(bad, feature_level="4.1")), highlight=False, markup=False)

    # `dmltile explain` and `dmltile run` of the DirectML documentation's example, from Python.
    doc = HERE / "doc_example.json"
    console.print(f"\n[bold]{doc.name}[/], explained (output index [0, 0, 4, 7] traced back):")
    console.print(dmltile.explain(doc, index=[0, 0, 4, 7]))
    x = np.arange(1, 7, dtype=np.float32).reshape(1, 1, 2, 3)
    console.print(f"\n[bold]{doc.name}[/] run on NumPy with input [[1, 2, 3], [4, 5, 6]]:")
    console.print(dmltile.execute(doc, x), highlight=False)


if __name__ == "__main__":
    main()
