"""The short human summary of a verification report (``--json`` prints ``Report.to_dict()``).

One line per session that is not intact, followed by its findings (at most
``MAX_FINDINGS`` each); intact sessions get a line each only when there are few of them.
The last line is the verdict and the exit code.
"""

from __future__ import annotations

from .findings import INTACT, NOTE, FeedReport, Finding, Report, SessionReport

MAX_FINDINGS = 10
LIST_INTACT_UP_TO = 20


def _finding(f: Finding) -> str:
    return f"  {f.severity:<10} {f.where()}: {f.code}: {f.message}"


def _findings(findings: list[Finding]) -> list[str]:
    shown = [f for f in findings if f.severity != NOTE] + [f for f in findings if f.severity == NOTE]
    lines = [_finding(f) for f in shown[:MAX_FINDINGS]]
    if len(shown) > MAX_FINDINGS:
        lines.append(f"  ... and {len(shown) - MAX_FINDINGS} more findings (--json lists all)")
    return lines


def _session(s: SessionReport) -> list[str]:
    st = s.stats
    counts = (
        f"{st.get('rows', 0)} rows, {st.get('observations', 0)} observations, "
        f"{st.get('proposals', 0)} proposals, {st.get('attempts', 0)} attempts, "
        f"{st.get('results', 0)} results"
    )
    verdict = s.verdict if s.verdict == INTACT else s.verdict.upper()
    return [f"session {s.session}: {verdict} ({counts})"] + _findings(s.findings)


def _feed(f: FeedReport) -> list[str]:
    if not f.exists:
        return [f"feed {f.name}: absent"]
    verdict = f.verdict if f.verdict == INTACT else f.verdict.upper()
    return [f"feed {f.name}: {verdict} ({f.rows} rows)"] + _findings(f.findings)


def render(report: Report) -> str:
    lines: list[str] = []
    few = len(report.sessions) <= LIST_INTACT_UP_TO
    for s in report.sessions:
        if few or s.verdict != INTACT or any(f.severity != NOTE for f in s.findings):
            lines += _session(s)
    for f in report.feeds:
        lines += _feed(f)
    lines += _findings(report.findings)
    c = report.counts()
    what = (
        f"{len(report.sessions)} session(s): {c['intact']} intact, {c['incomplete']} incomplete, {c['damaged']} damaged"
    )
    lines.append(f"verdict: {report.verdict.upper()} (exit {report.exit_code}); {what}")
    return "\n".join(lines)
