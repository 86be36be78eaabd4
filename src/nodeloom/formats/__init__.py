"""Foreign graph formats, each loaded into the native graph format and run on the one engine.

A format is one folder here: its loader, its runtime helpers, and in `<name>/nodes/` the
node folders its graphs are made of (discovery finds them as built-in nodes). Its package
exports `loader`, an object with:

    name: str                                   "workflow", "ethan", "plan", ...
    def detect(document, path) -> bool          is this document in my format?
    def to_graph(document, options) -> dict     the native graph document (see
                                                docs/formats/native.md); raise GraphError
                                                with located issues for a bad file

`read_graph()` reads a file (JSON or YAML), finds its format and returns the native
document; `nodeloom.load()` and `nodeloom convert` use it.
"""

from nodeloom.formats.options import FormatOptions
from nodeloom.formats.registry import FORMATS, detect_format, read_graph

__all__ = ["FORMATS", "FormatOptions", "detect_format", "read_graph"]
