"""Files under the operator's files root (NODELOOM_FILES_ROOT), for Read File and Write File.

    paths   relative paths checked and opened without following links (`split`,
            `parent_dir`, `open_file`), and the root itself (`root`)
    refs    file references: the BinaryRef JSON shape with a `file:` path, media types
    keep    content that arrives in pieces, kept as `<folder>/<sha256>/<name>` (Keeper)
    content the bytes behind a reference of either kind, `file:` or `blob:` (open_content)
    parameters  the checked `path` and choice (`as`, `mode`) of Read File and Write File

See docs/files.md.
"""

from nodeloom.files.content import open_content
from nodeloom.files.keep import Keeper, safe_name
from nodeloom.files.parameters import FileTarget, file_target
from nodeloom.files.paths import (
    ENV_ROOT,
    open_file,
    open_read,
    parent_dir,
    path_problem,
    root,
    split,
)
from nodeloom.files.refs import detect_mime, file_ref, is_ref, kind_of_mime, ref_path

__all__ = [
    "ENV_ROOT",
    "FileTarget",
    "Keeper",
    "detect_mime",
    "file_ref",
    "file_target",
    "is_ref",
    "kind_of_mime",
    "open_content",
    "open_file",
    "open_read",
    "parent_dir",
    "path_problem",
    "ref_path",
    "root",
    "safe_name",
    "split",
]
