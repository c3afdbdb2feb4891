"""Outputs of the metrics tap. Each has ``tick(metrics)`` (called often; it paces itself) and
``close(metrics, reason)``.

    PlainLines    one plain text line per interval (no terminal, piped, CI)
    Dashboard     a rich live dashboard redrawn in place (a terminal)
    JsonlSink     one JSON sample per interval appended to a file, for later plotting
    Prometheus    ``/metrics`` over HTTP (prometheus-client), read on each scrape

Prometheus metric names: ``gamerig_journal_sequence``, ``gamerig_steps_total``,
``gamerig_steps_per_second``, ``gamerig_action_results_total{outcome}``,
``gamerig_stage_latency_ms{stage,quantile}``, ``gamerig_model_tokens_total{kind}``,
``gamerig_model_errors_total``, ``gamerig_actor_rss_bytes{actor}``,
``gamerig_actor_cpu_percent{actor}``, ``gamerig_actor_restarts_total{actor}``,
``gamerig_tap_dropped_rows_total``.
"""

from __future__ import annotations

import json
import os
import sys
import time

from .metrics import QUANTILES, STAGES, Metrics


class Paced:
    every_s = 2.0

    def __init__(self, every_s: float | None = None):
        self.every_s = every_s if every_s is not None else self.every_s
        self._next = 0.0

    def tick(self, metrics: Metrics) -> None:
        now = time.monotonic()
        if now >= self._next:
            self._next = now + self.every_s
            self.emit(metrics.sample())

    def close(self, metrics: Metrics, reason: str) -> None:
        self.emit(metrics.sample(), final=reason)

    def emit(self, sample: dict, final: str = "") -> None:
        raise NotImplementedError


def _ms(v) -> str:
    return "-" if v is None else (f"{v:.0f}" if v >= 100 else f"{v:.1f}")


def format_line(s: dict) -> str:
    a = s["actions"]
    lat = " ".join(f"{st} {_ms(s['latency_ms'][st]['p50'])}/{_ms(s['latency_ms'][st]['p99'])}" for st in STAGES)
    actors = " ".join(
        f"{n}={x['rss_bytes'] // 1048576}M/{x['cpu_percent']:.0f}%/r{x['restarts']}" for n, x in s["actors"].items()
    )
    m = s["model"]
    return (
        f"seq {s['sequence']} steps {s['steps']} {s['steps_per_s']:.1f}/s | accepted {a['accepted']} "
        f"rejected {a['rejected']} unknown {a['unknown']} | p50/p99 ms {lat} | tokens "
        f"{m['total_tokens']} model_errors {m['errors']} | dropped {s['dropped']} | {actors}"
    )


class PlainLines(Paced):
    """One line per interval. When the reader of the stream goes away (``attach ... | head``)
    it stops writing, points the stream's descriptor at /dev/null (so nothing at exit
    complains of the closed pipe) and calls ``on_gone`` (the command then detaches)."""

    def __init__(self, stream=None, every_s: float | None = None, on_gone=None):
        super().__init__(every_s)
        self.stream = stream or sys.stdout
        self.on_gone = on_gone
        self.gone = False

    def emit(self, sample: dict, final: str = "") -> None:
        if self.gone:
            return
        line = format_line(sample) + (f" | detached: {final}" if final else "")
        try:
            self.stream.write(line + "\n")
            self.stream.flush()
        except BrokenPipeError:
            self.gone = True
            try:
                os.dup2(os.open(os.devnull, os.O_WRONLY), self.stream.fileno())
            except (OSError, ValueError, AttributeError):
                pass
            if self.on_gone is not None:
                self.on_gone()


class JsonlSink(Paced):
    def __init__(self, path: str, every_s: float | None = None):
        super().__init__(every_s)
        self.fh = open(path, "a", encoding="utf-8")

    def emit(self, sample: dict, final: str = "") -> None:
        self.fh.write(json.dumps({**sample, **({"final": final} if final else {})}, sort_keys=True) + "\n")
        self.fh.flush()

    def close(self, metrics: Metrics, reason: str) -> None:
        super().close(metrics, reason)
        self.fh.close()


class Dashboard(Paced):
    every_s = 0.5

    def __init__(self, console=None, every_s: float | None = None):
        super().__init__(every_s)
        from rich.console import Console
        from rich.live import Live

        self.console = console or Console()
        self.live = Live(console=self.console, auto_refresh=False, transient=False)
        self.started = False

    def emit(self, sample: dict, final: str = "") -> None:
        if not self.started:  # started on the first draw, i.e. once attached
            self.live.start()
            self.started = True
        self.live.update(render(sample, final), refresh=True)

    def close(self, metrics: Metrics, reason: str) -> None:
        super().close(metrics, reason)
        self.live.stop()


def render(s: dict, final: str = ""):
    from rich.console import Group
    from rich.table import Table

    a, m = s["actions"], s["model"]
    head = (
        f"[bold]session[/] {s['session_id']}  [bold]tap[/] {s['tap_id']}  seq {s['sequence']}\n"
        f"steps {s['steps']}  [bold]{s['steps_per_s']:.1f}/s[/]   accepted [green]{a['accepted']}[/]"
        f"  rejected [yellow]{a['rejected']}[/]  unknown [red]{a['unknown']}[/]   tokens "
        f"{m['total_tokens']} (prompt {m['prompt_tokens']}, completion {m['completion_tokens']})"
        f"  model errors {m['errors']}   dropped {s['dropped']}"
        + (f"\n[bold red]detached: {final}[/]" if final else "")
    )
    lat = Table(title="latency (ms)", expand=False)
    for col in ("stage", "n", *QUANTILES):
        lat.add_column(col, justify="right" if col != "stage" else "left")
    for st in STAGES:
        p = s["latency_ms"][st]
        lat.add_row(st, str(p["n"]), *(_ms(p[q]) for q in QUANTILES))
    act = Table(title="actors", expand=False)
    for col in ("actor", "pid", "up", "RSS MiB", "CPU %", "restarts"):
        act.add_column(col, justify="right" if col != "actor" else "left")
    for n, x in s["actors"].items():
        act.add_row(
            n,
            str(x["pid"] or "-"),
            "yes" if x["alive"] else "no",
            str(x["rss_bytes"] // 1048576),
            f"{x['cpu_percent']:.0f}",
            str(x["restarts"]),
        )
    return Group(head, lat, act)


class Prometheus:
    """Serves ``/metrics`` on ``host:port`` (port 0: any free port; see ``.port``)."""

    def __init__(self, metrics: Metrics, host: str, port: int):
        from prometheus_client import CollectorRegistry, start_http_server

        self.metrics = metrics
        registry = CollectorRegistry(auto_describe=False)
        registry.register(self)
        self.server, self.thread = start_http_server(port, addr=host, registry=registry)
        self.host, self.port = host, self.server.server_port

    def collect(self):
        from prometheus_client.core import CounterMetricFamily, GaugeMetricFamily

        s = self.metrics.sample()
        yield GaugeMetricFamily("gamerig_journal_sequence", "last journal sequence seen", value=s["sequence"])
        yield CounterMetricFamily("gamerig_steps", "observations recorded", value=s["steps"])
        yield GaugeMetricFamily("gamerig_steps_per_second", "steps per second (recent window)", value=s["steps_per_s"])
        fam = CounterMetricFamily("gamerig_action_results", "action results", labels=["outcome"])
        for k, v in s["actions"].items():
            fam.add_metric([k], v)
        yield fam
        fam = GaugeMetricFamily("gamerig_stage_latency_ms", "stage latency percentiles", labels=["stage", "quantile"])
        for st in STAGES:
            for q, qv in QUANTILES.items():
                value = s["latency_ms"][st][q]
                if value is not None:
                    fam.add_metric([st, str(qv)], value)
        yield fam
        fam = CounterMetricFamily("gamerig_model_tokens", "model tokens", labels=["kind"])
        for k in ("prompt_tokens", "completion_tokens", "total_tokens"):
            fam.add_metric([k.removesuffix("_tokens")], s["model"][k])
        yield fam
        yield CounterMetricFamily("gamerig_model_errors", "model errors", value=s["model"]["errors"])
        yield from self._actors(s["actors"], GaugeMetricFamily, CounterMetricFamily)
        yield CounterMetricFamily("gamerig_tap_dropped_rows", "rows this tap skipped", value=s["dropped"])

    @staticmethod
    def _actors(actors: dict, gauge, counter):
        rss = gauge("gamerig_actor_rss_bytes", "actor resident memory", labels=["actor"])
        cpu = gauge("gamerig_actor_cpu_percent", "actor CPU", labels=["actor"])
        rst = counter("gamerig_actor_restarts", "actor restarts", labels=["actor"])
        for n, x in actors.items():
            rss.add_metric([n], x["rss_bytes"])
            cpu.add_metric([n], x["cpu_percent"])
            rst.add_metric([n], x["restarts"])
        return rss, cpu, rst

    def tick(self, metrics: Metrics) -> None:
        pass

    def close(self, metrics: Metrics, reason: str) -> None:
        self.server.shutdown()
        self.server.server_close()
