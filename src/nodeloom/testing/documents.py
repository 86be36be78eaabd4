"""Real documents of every type the knowledge loaders read, made on the spot for tests.

    paths = write_documents(tmp_path, FACTS)   # {"txt": Path, "md": ..., "pdf": ...}

Each file states its own fact (one sentence per type, from `FACTS`), so a test can ask
about that fact and expect that file's chunk first. The PDF is written by hand (one page
of Helvetica text per paragraph; pypdf reads it back); the DOCX with python-docx.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

FACTS: dict[str, str] = {
    "txt": "The lighthouse keeper on Gull Island feeds his three goats every morning at six.",
    "md": "The Zephyr espresso machine must be descaled with citric acid every forty days.",
    "html": "The museum's dinosaur hall reopens in April after the roof over it was replaced.",
    "pdf": "Volcanic soil on the northern slope makes the vineyard's riesling taste of flint.",
    "docx": "The chess club meets on Thursdays in the library basement to study endgames.",
    "csv": "Invoice 4471 for eighty solar panels was paid by the Norwegian ferry company.",
    "json": "The satellite Kestrel-2 photographs glaciers in Patagonia twice every week.",
}


def _escape_pdf(text: str) -> str:
    return text.replace("\\", "\\\\").replace("(", "\\(").replace(")", "\\)")


def pdf_bytes(pages: list[str], title: str = "") -> bytes:
    """A valid PDF with one page of text per item (Helvetica, wrapped at ~80 chars)."""
    objects: list[bytes] = []
    page_ids = [4 + 2 * i for i in range(len(pages))]
    objects.append(b"<< /Type /Catalog /Pages 2 0 R >>")
    kids = " ".join(f"{i} 0 R" for i in page_ids)
    objects.append(f"<< /Type /Pages /Kids [{kids}] /Count {len(pages)} >>".encode())
    objects.append(b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
    for page_id, text in zip(page_ids, pages, strict=True):
        lines, line = [], ""
        for word in text.split():
            if len(line) + len(word) > 80:
                lines.append(line)
                line = ""
            line = f"{line} {word}".strip()
        lines.append(line)
        ops = ["BT", "/F1 11 Tf", "14 TL", "50 780 Td"]
        ops += [f"({_escape_pdf(item)}) '" for item in lines]
        ops.append("ET")
        stream = "\n".join(ops).encode("latin-1")
        objects.append(
            f"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 842] "
            f"/Resources << /Font << /F1 3 0 R >> >> /Contents {page_id + 1} 0 R >>".encode()
        )
        objects.append(b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream")
    info_id = len(objects) + 1
    objects.append(f"<< /Title ({_escape_pdf(title)}) >>".encode())
    out = bytearray(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, start=1):
        offsets.append(len(out))
        out += b"%d 0 obj\n" % number + body + b"\nendobj\n"
    xref = len(out)
    out += b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1)
    for offset in offsets:
        out += b"%010d 00000 n \n" % offset
    out += b"trailer\n<< /Size %d /Root 1 0 R /Info %d 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (
        len(objects) + 1,
        info_id,
        xref,
    )
    return bytes(out)


def write_documents(folder: Path, facts: dict[str, str] | None = None) -> dict[str, Path]:
    """One file per type in `folder`, each holding its fact among filler text."""
    import docx

    facts = facts or FACTS
    folder.mkdir(parents=True, exist_ok=True)
    filler = "This paragraph is general filler about office routines and weather."
    paths = {kind: folder / f"sample.{kind}" for kind in facts}
    paths["txt"].write_text(f"Notes from the coast.\n\n{facts['txt']}\n\n{filler}\n")
    paths["md"].write_text(
        f"# Kitchen manual\n\n## Coffee\n\n### Cleaning\n\n{facts['md']}\n\n## Other\n\n{filler}\n"
    )
    paths["html"].write_text(
        "<html><head><title>Museum news</title><style>p{color:red}</style>"
        "<script>var hidden = 'never indexed';</script></head><body>"
        f"<h1>Museum news</h1><p>{facts['html']}</p><p>{filler}</p></body></html>"
    )
    paths["pdf"].write_bytes(pdf_bytes([f"Wine notes. {facts['pdf']}", filler], "Vineyard"))
    document = docx.Document()
    document.core_properties.title = "Club calendar"
    document.add_heading("Club calendar", level=1)
    document.add_paragraph(facts["docx"])
    document.add_paragraph(filler)
    document.save(str(paths["docx"]))
    with paths["csv"].open("w", newline="") as handle:
        writer = csv.writer(handle)
        writer.writerow(["id", "note"])
        writer.writerow(["1", facts["csv"]])
        writer.writerow(["2", filler])
    paths["json"].write_text(
        json.dumps({"title": "Satellites", "items": [{"note": facts["json"]}, {"note": filler}]})
    )
    return paths
