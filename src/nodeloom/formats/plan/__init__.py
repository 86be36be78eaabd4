"""plan.json (seed 000): linear plans of llm-first / tool-first nodes bound to named message
threads, converted to a chain of plan-* nodes on the native engine.

See docs/formats/plan.md. The loader lives in `loader`; the plan-* node folders in `nodes/`;
what they do at run time lives in `threads` (the threads in the run's state), `toolbox`
(tools and quotas) and `steps` (one plan node's work).
"""

from nodeloom.formats.plan.loader import loader

__all__ = ["loader"]
