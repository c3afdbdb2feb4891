"""Tests of ``actors.model_client``, one module per library module, over real loopback HTTP."""
