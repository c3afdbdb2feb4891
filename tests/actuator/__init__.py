"""Unit tests of the actuator actor (actors/actuator/): its queue, one attempt and one result per
executed proposal, orphan recovery, refusals."""
