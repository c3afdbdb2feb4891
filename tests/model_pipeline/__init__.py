"""Whole-process tests of the model pipeline: a fake OpenAI-compatible server on 127.0.0.1
answering the model_client actor of real sessions (model-assisted play, failures, replay)."""
