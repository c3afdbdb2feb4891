"""Unit tests of the observer actor (actors/observer/): when it reads, what it stores, failed reads."""
