"""The tools an agent calls, shared by the Toolset and MCP Server nodes and the formats'
tool nodes.

references   parse a function reference (`module:function`, `file.py#function`), no import
loader       import what a reference names and make it an Agno tool (the server's
             allow-list hooks in here: `loader.restriction`, see nodeloom.tools.allow_list)
toolsets     the built-in toolsets' names and tools (pure data)
builtins     the built-in tools themselves (Agno toolkits; http_fetch over nodeloom.net)
mcp          reaching an MCP server's tools (the MCP Server node, Ethan's `mcp` tools)
"""
