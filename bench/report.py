"""The results table: each figure beside its target (from issue #9), and whether it is met."""

from __future__ import annotations

from typing import Any

Row = tuple[str, str, str, bool]  # what, figure, target, met


def rows(results: dict[str, Any]) -> list[Row]:
    overhead = {int(count): ms for count, ms in results["overhead_ms_per_feature"].items()}
    smallest, largest = min(overhead), max(overhead)
    counts = sorted(overhead)
    context = results["context_tokens"]
    inputs = results["input_tokens"]
    calls = results["details"]["strategies"]["summarizer_calls"]
    memory = results["details"]["memory"]
    siblings, duplicate_test = results["details"]["memory_siblings"], results["details"]["duplicate_test"]
    big = results["details"]["overhead"][str(largest)]
    loop = big["segments_ms_per_feature"]
    state = results["details"]["state_size"]
    quiet, talkative_chars = state["0"], max(state, key=int)
    talkative = state[talkative_chars]
    out: list[Row] = [
        (f"overhead ms/feature at {' / '.join(map(str, counts))}", " / ".join(f"{overhead[c]:.1f}" for c in counts),
         "< 50 ms", overhead[largest] < 50),
        (f"  of which fsync waits at {largest}",
         f"{big['fsync_ms_per_feature']:.1f} ({big['fsyncs_per_feature']:.1f} fsyncs)", "", True),
        (f"overhead at {largest} vs {smallest} features", f"{overhead[largest] / overhead[smallest]:.2f}x",
         "<= 1.5x", overhead[largest] <= 1.5 * overhead[smallest]),
    ]
    if loop:
        out.append((f"loop ms/feature, first vs last tenth of {largest}", f"{loop[0]:.1f} -> {loop[-1]:.1f}",
                    "no growth (<= 1.5x)", loop[-1] <= 1.5 * loop[0]))
    cpu = big.get("segments_cpu_ms_per_feature") or []
    if cpu:  # the same, in the run's own CPU time: the figure the machine's load does not move
        out.append((f"loop CPU ms/feature, first vs last tenth of {largest}", f"{cpu[0]:.1f} -> {cpu[-1]:.1f}",
                    "no growth (<= 1.5x)", cpu[-1] <= 1.5 * cpu[0]))
    out += [
        (f"peak RSS at {largest} features", f"{results['peak_rss_mb']:.0f} MB", "< 200 MB", results["peak_rss_mb"] < 200),
        (f"  state snapshot at {quiet['features']}, check output 0 / {talkative_chars} chars",
         f"{quiet['snapshot_mb']:.1f} / {talkative['snapshot_mb']:.1f} MB (+{talkative['state_mb'] - quiet['state_mb']:.0f} MB held)",
         "", True),
        (f"context tokens at feature {' / '.join(context)}", " / ".join(str(t) for t in context.values()),
         "<= 2000", max(context.values()) <= 2000),
        ("input tokens compressed / window / replay",
         " / ".join(_thousands(inputs[s]) for s in ("compressed", "window", "replay")), "", True),
        ("compressed saves vs replay", f"{results['compressed_vs_replay_saving']:.1%}", ">= 84%",
         results["compressed_vs_replay_saving"] >= 0.84),
        ("cache reads, share of input", f"{results['cache_read_share']:.1%}", ">= 80%", results["cache_read_share"] >= 0.80),
        ("summarizer share of dollars", f"{results['summarizer_cost_share']:.1%}", "< 7%",
         results["summarizer_cost_share"] < 0.07),
        ("  of tokens; calls compressed / window / replay",
         f"{results['summarizer_share']:.1%}; " + " / ".join(str(calls[s]) for s in ("compressed", "window", "replay")),
         "", True),
        ("planted constraints retained",
         f"{memory['constraints_kept']}/{memory['constraints_planted']} ({results['constraint_retention']:.0%})",
         ">= 95%", results["constraint_retention"] >= 0.95),
        ("  active constraints at the end, per unique rule",
         f"{memory['active_constraints']} ({memory['active_per_unique']:.2f}x)", "<= 1.1x",
         memory["active_per_unique"] <= 1.1),
        ("  similar but different rules kept apart",
         f"{siblings['siblings_kept']}/{siblings['siblings_planted']}", "all",
         siblings["siblings_kept"] == siblings["siblings_planted"]),
        ("  summary kept at the last feature (full length)", f"{memory['full_summary_tokens_at_end']} tokens",
         ">= 1000", memory["full_summary_tokens_at_end"] >= 1000),
        ("  near-duplicate test: restatements missed / rules merged",
         f"{duplicate_test['missed_rate']:.0%} / {duplicate_test['false_merge_rate']:.0%}", "0% merged",
         duplicate_test["distinct_merged"] == 0),
        ("newest decisions kept (of 20)", f"{memory['newest_decisions_kept']}/20", "20/20",
         memory["newest_decisions_kept"] == 20),
    ]
    return out + _scale_rows(results["details"])


def _scale_rows(details: dict[str, Any]) -> list[Row]:
    """Issue 13: costs that grow with a long run (state, status, constraints)."""
    failed, shown, rules = details["failed_state"], details["status"], details["constraints"]
    counts = sorted(shown, key=int)
    return [
        (f"state snapshot, {failed['features']} features failed loudly", f"{failed['snapshot_mb']:.1f} MB",
         f"< {failed['limit_mb']} MiB", failed["load_s"] is not None),
        (f"status seconds at {' / '.join(counts)} features (CPU)",
         " / ".join(f"{shown[c]['seconds']:.1f} ({shown[c]['cpu_seconds']:.1f})" for c in counts), "", True),
        (f"active constraints after {rules['recorded']} recorded", str(rules["active"]), "<= 100", rules["active"] <= 100),
        ("  get_injection / record_report ms then", f"{rules['get_injection_ms']:.1f} / {rules['record_report_ms']:.1f}",
         "", True),
    ]


def render(results: dict[str, Any]) -> str:
    machine = results["machine"]
    header = (f"orchestrate benchmarks ({results['mode']}): {machine['cpus']} CPUs ({machine['cpu_model']}), "
              f"Python {machine['python']}, fsync {machine['fsync_ms_median']} ms, load {machine['load_average']}")
    table = [("", "figure", "target", "")] + [
        (what, figure, target, ("met" if met else "MISSED") if target else "") for what, figure, target, met in rows(results)
    ]
    widths = [max(len(row[i]) for row in table) for i in range(4)]
    lines = [header, ""] + ["  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip() for row in table]
    return "\n".join(lines)


def _thousands(value: int) -> str:
    return f"{value:,}"
