"""Fakes of outside systems for tests: real servers on loopback, scriptable per test.

openai_server.py   FakeOpenAIServer — an OpenAI-compatible chat-completions server
"""
