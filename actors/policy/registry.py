"""Finding the policy a profile names (``policy.module``).

Built-in names map to modules in this package; anything else is ``package.module`` (the
module's ``POLICY`` attribute, or its single ``Policy`` subclass) or ``package.module:Class``.
"""

from __future__ import annotations

import importlib
import inspect

from .base import Policy

BUILTIN = {
    "sts2": "actors.policy.sts2:Sts2Heuristic",
    "llm": "actors.policy.llm:Sts2Agent",
    "pyboy_llm": "actors.policy.pyboy_llm:PyboyAgent",
    "pyboy_demo": "actors.policy.pyboy:PyboyDemo",
    "pyboy_explore": "actors.policy.pyboy:PyboyExplore",
    "mcp_pyboy": "actors.policy.mcp_pyboy:AgentPolicy",
    "mcp_sts2": "actors.policy.mcp_sts2:Sts2AgentPolicy",
}

#: module paths by which a recorded MCP session's profile may name its agent policy: each loads
#: the registered policy of this package
RECORDED_AS = {
    "supervisor.mcp.bridge:AgentPolicy": "mcp_pyboy",
    "supervisor.mcp.sts2_policy:Sts2AgentPolicy": "mcp_sts2",
}


class PolicyNotFound(Exception):
    pass


def load_policy_class(name: str) -> type[Policy]:
    target = BUILTIN.get(RECORDED_AS.get(name, name), name)
    module_name, _, attr = target.partition(":")
    try:
        module = importlib.import_module(module_name)
    except ImportError as exc:
        raise PolicyNotFound(f"policy.module {name!r}: cannot import {module_name!r}: {exc}") from exc
    if attr:
        cls = getattr(module, attr, None)
    else:
        cls = getattr(module, "POLICY", None)
        if cls is None:
            found = [
                c
                for _, c in inspect.getmembers(module, inspect.isclass)
                if issubclass(c, Policy) and c is not Policy and c.__module__ == module.__name__
            ]
            cls = found[0] if len(found) == 1 else None
    if not (inspect.isclass(cls) and issubclass(cls, Policy)):
        raise PolicyNotFound(
            f"policy.module {name!r}: no Policy subclass found (name one as 'module:Class' or set POLICY in the module)"
        )
    return cls
