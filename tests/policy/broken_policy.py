"""A policy that raises on map screens: the audit and the policy actor must report it."""

from actors.policy.sts2 import Sts2Heuristic


class BrokenOnMaps(Sts2Heuristic):
    def decide(self, obs):
        if obs.state_type == "map":
            raise RuntimeError("this policy cannot read maps")
        return super().decide(obs)
