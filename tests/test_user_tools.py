"""The user tools file: names an operator maps to Toolset / MCP Server definitions. A
malformed file names the file and the entry; only tool source types are accepted."""

import json

import pytest

from nodeloom.user_tools import UserToolsError, load_user_tools, unknown_user_tools


def write(tmp_path, content):
    path = tmp_path / "user-tools.json"
    path.write_text(content if isinstance(content, str) else json.dumps(content))
    return path


def test_a_missing_file_offers_no_tool(tmp_path):
    assert load_user_tools(tmp_path / "none.json") == {}


def test_entries_become_named_tool_sources(tmp_path):
    path = write(
        tmp_path,
        {
            "tools": {
                "math": {
                    "type": "toolset",
                    "description": "Sums",
                    "parameters": {"toolsets": ["calculator"]},
                }
            }
        },
    )
    (tool,) = load_user_tools(path).values()
    assert (tool.name, tool.type, tool.description) == ("math", "toolset", "Sums")
    assert tool.parameters == {"toolsets": ["calculator"]}


@pytest.mark.parametrize(
    ("content", "says"),
    [
        ("{not json", "cannot be read"),
        ({"math": {}}, 'expected {"tools"'),
        ({"tools": {"sh": {"type": "code", "parameters": {}}}}, "tool 'sh': `type` is 'code'"),
        ({"tools": {"m": {"type": "toolset", "parameters": []}}}, "`parameters` must be an object"),
        ({"tools": {"m": {"type": "toolset", "command": "rm -rf /"}}}, "unknown field(s) command"),
        ({"tools": {"a b": {"type": "toolset"}}}, "tool 'a b': a name is"),
    ],
)
def test_a_malformed_file_is_refused_naming_the_file_and_the_entry(tmp_path, content, says):
    path = write(tmp_path, content)
    with pytest.raises(UserToolsError) as caught:
        load_user_tools(path)
    assert str(path) in str(caught.value) and says in str(caught.value)
    assert caught.value.code == "invalid_user_tools"


def test_an_unknown_name_lists_the_offered_ones(tmp_path):
    path = write(tmp_path, {"tools": {"b": {"type": "toolset"}, "a": {"type": "mcp-server"}}})
    offered = load_user_tools(path)
    assert unknown_user_tools(["a"], offered) is None
    assert unknown_user_tools(["a", "zz"], offered) == (
        "no user tool named 'zz'; the user tools file offers: a, b"
    )
