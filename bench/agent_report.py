"""The printed report of ``bench/agent.py``, from its figures (``agent.figures``): the per-decision
times, the agent's own work, the heuristic's steps, the pairs and the verdict, the memory of
each process, and ``bench/mcp_step.py``'s report when it was measured."""

from __future__ import annotations

import re

from agent_figures import FLAT_KIB_PER_1000, PARTS, TARGET_MS


def fmt(x: float | None, spec: str = ".2f") -> str:
    """``format(x, spec)``, or a dash as wide as the spec's width for a figure not taken."""
    if x is not None:
        return format(x, spec)
    width = re.match(r"\d*", spec).group(0)
    return "-".rjust(int(width) if width else 1)


def report(fig: dict) -> list[str]:
    d, b = fig["agent"], fig["baseline"]
    lines = [
        f"Machine: {fig['machine']}",
        f"Agent session: {d['decisions']} model decisions ({d['executed']} executed) in {d['steps']} steps, "
        f"seed {fig['seed']}, {d['wall_s']:.1f} s; outcomes {d['outcomes']}; calls per decision: "
        f"{d['calls']}",
        "",
        "Per model decision, ms                      median      p90      n",
    ]
    rows = (
        ("model", "model: client-measured answer time (wall_ms)"),
        ("http", "  of which the HTTP request (latency_ms)"),
        ("decide", "policy's decide_ms"),
        ("policy_extra", "policy extra: decide_ms - model"),
        ("step", "step: observation -> next observation"),
        ("own", "pipeline's own: step - model"),
        ("obs_prop", "  observation row -> proposal row"),
        ("prop_next", "  proposal row -> next observation row"),
        ("row_bytes", "proposal row, bytes"),
    )
    for key, label in rows:
        s = d["figures"][key]
        lines.append(f"  {label:<42}{fmt(s['median'], '9.2f')}{fmt(s['p90'], '9.2f')}{s['n']:7d}")
    lines.append(f"  stand-in CPU per answer (its process, psutil): {fmt(d['standin_cpu_ms'])} ms")
    lines.append("")
    pt = fig["parts"]
    lines.append(
        f"The agent's own work, timed in this process on {pt['screen_text']['n']} decisions' screens, "
        f"µs              median      p90"
    )
    for key, what in PARTS.items():
        lines.append(f"  {key:<17}{what:<70}{fmt(pt[key]['median'], '9.0f')}{fmt(pt[key]['p90'], '9.0f')}")
    total = sum(pt[k]["median"] or 0 for k in PARTS) + pt["question"]["median"] + pt["request_hash"]["median"]
    lines.append(f"  per decision, the question and its hash counted twice: {total / 1000:.2f} ms of CPU")
    lines.append("")
    lines.append(
        "The heuristic (policy.module: sts2, no model), same seed, right after the long session, ms"
        "                   median      p90      n"
    )
    for label, s in (
        ("step: observation -> next observation", b["step"]),
        ("  observation row -> proposal row", b["obs_prop"]),
        ("  proposal row -> next observation row", b["prop_next"]),
    ):
        lines.append(f"  {label:<86}{fmt(s['median'], '9.2f')}{fmt(s['p90'], '9.2f')}{s['n']:7d}")
    other = d["other_steps"]
    lines.append(
        f"  (the long agent session's steps that asked no model: median {fmt(other['median'])}, "
        f"p90 {fmt(other['p90'])}, n {other['n']})"
    )
    lines.append("")
    lines.append(
        "Pairs: an agent session and a heuristic session, one right after the other (ms, medians; "
        "added and ratio against the heuristic's step on the same screen and action)"
    )
    lines.append(
        f"  {'pair':<10}{'order':<17}{'decisions':>10}{'matched':>9}{'own':>8}{'heuristic':>11}{'added':>8}{'ratio':>7}"
    )
    for p in fig["pairs"]:
        lines.append(
            f"  {p['name']:<10}{p['order']:<17}{p['decisions']:10d}{p['matched']:9d}{fmt(p['own_ms'], '8.2f')}"
            f"{fmt(p['heuristic_ms'], '11.2f')}{fmt(p['added_ms'], '8.2f')}{fmt(p['ratio'], '7.2f')}"
        )
    v = fig["verdict"]
    lines.append(
        f"Verdict: the agent adds {fmt(v['added_ms'])} ms per decision over the model's answer time "
        f"(the median over the pairs); ratio {fmt(v['ratio'])}x; target <= "
        f"{TARGET_MS:g} ms: {'MET' if v['met'] else 'NOT MET'}"
    )
    lines.append(f"  policy extra alone (decide_ms - model), median {fmt(d['figures']['policy_extra']['median'])} ms")
    lines.append("")
    lines.append(
        f"Memory of the agent session's processes (RSS by psutil every {fig['sample_s']:g} s, MiB; "
        f"slopes after the first tenth of the decisions)"
    )
    lines.append(
        f"  {'process':<14}{'first tenth':>12}{'last tenth':>11}{'peak':>7}"
        f"{'slope':>8}{'heuristic':>11}{'excess':>8}  verdict (flat: excess <= {FLAT_KIB_PER_1000:g})"
    )
    for name, m in fig["memory"].items():
        verdict = "-" if m["flat"] is None else ("flat" if m["flat"] else "NOT FLAT")
        lines.append(
            f"  {name:<14}{fmt(m['first_mib'], '12.1f')}{fmt(m['last_mib'], '11.1f')}"
            f"{fmt(m['peak_mib'], '7.1f')}{fmt(m['slope_kib_per_1000'], '8.0f')}"
            f"{fmt(m['baseline_kib_per_1000_steps'], '11.0f')}{fmt(m['excess_kib_per_1000'], '8.0f')}  {verdict}"
        )
    lines.append(
        "  slope: KiB per 1,000 model decisions; heuristic: the same process in the heuristic session over "
        "the same steps, KiB per 1,000 steps; excess: slope - heuristic x the agent's steps per decision"
    )
    cpu = fig["cpu_ms_per_step"]
    lines.append(
        "  CPU ms per step, agent / baseline: "
        + ", ".join(f"{k} {fmt(cpu['agent'].get(k))} / {fmt(cpu['baseline'].get(k))}" for k in sorted(cpu["agent"]))
    )
    if fig.get("mcp") is not None:
        lines.append("")
        lines.append(fig["mcp"])
    return lines
