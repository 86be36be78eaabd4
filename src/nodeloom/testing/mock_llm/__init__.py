"""A scripted, OpenAI-compatible LLM server: test flows without spending tokens.

    MockLLM       the server (in the event loop, or in a thread); `.requests` records
    Script, Rule  the script model: ordered rules, the first that fits answers
    load_script   a Script from YAML/JSON, a mapping or a list of rules
    ScriptError   what is wrong with a script, every issue located

See docs/testing.md. The pytest fixtures live in `nodeloom.testing.mock_llm.pytest_plugin`.
"""

from nodeloom.testing.mock_llm.script import Rule, Script, ScriptError, load_script
from nodeloom.testing.mock_llm.server import MockLLM, RecordedRequest

__all__ = ["MockLLM", "RecordedRequest", "Rule", "Script", "ScriptError", "load_script"]
