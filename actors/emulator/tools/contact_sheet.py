"""A contact sheet: verified retained PNGs composed into one labelled PNG, with its mapping.

:func:`compose` takes frames that :func:`.retained.verify_sample` verified (their bytes are
the very bytes whose SHA-256 was checked; nothing is re-read from disk), decodes each once
and pastes it unscaled into a grid of at most four columns. Under every tile a label names
the tile number, the native frame, the action index and the first 8 hex digits of the
frame's ``rgbaSha256``; a title line names the session, branch and interval. The returned
metadata maps every tile (x, y, width, height) to its source (frame, action, branch, png
path, full ``rgbaSha256`` and ``pngSha256``) and gives the sheet's own SHA-256. The sheet is
a view of the evidence, never new evidence: it is returned, not stored.
"""

from __future__ import annotations

import hashlib
import io

from PIL import Image, ImageDraw, ImageFont

from ..recording.frames import HEIGHT, WIDTH
from ..recording.retained import CheckedFrame

COLUMNS = 4
PAD = 4
LABEL_H = 14
TITLE_H = 16
BACKGROUND = (24, 24, 24)
INK = (235, 235, 235)


def tile_label(index: int, frame: CheckedFrame) -> str:
    s = frame.sample
    return f"#{index + 1} f{s['frame']} a{s['actionIndex']} {s['rgbaSha256'][:8]}"


def layout(count: int, title_lines: int = 1) -> tuple[int, int, int, int]:
    """(columns, rows, width, height) of a sheet holding ``count`` tiles under a title of
    ``title_lines`` lines."""
    columns = min(COLUMNS, count)
    rows = -(-count // columns)
    width = PAD + columns * (WIDTH + PAD)
    height = TITLE_H * title_lines + PAD + rows * (HEIGHT + LABEL_H + PAD)
    return columns, rows, width, height


def wrap(title: str, width: int, measure) -> list[str]:
    """``title`` in lines no wider than ``width`` pixels (``measure(text)`` gives a width),
    broken between words; a word longer than a line is broken where it must be."""
    lines: list[str] = []
    line = ""
    for word in title.split():
        candidate = f"{line} {word}" if line else word
        if measure(candidate) <= width:
            line = candidate
            continue
        if line:
            lines.append(line)
        while measure(word) > width:
            cut = 1
            while cut < len(word) and measure(word[: cut + 1]) <= width:
                cut += 1
            lines.append(word[:cut])
            word = word[cut:]
        line = word
    if line:
        lines.append(line)
    return lines or [""]


def compose(frames: list[CheckedFrame], title: str) -> tuple[bytes, dict]:
    """(PNG bytes, metadata) of a sheet of the verified ``frames`` in the given order."""
    if not frames or not all(f.verified and f.data for f in frames):
        raise ValueError("a contact sheet is composed only from verified frames")
    font = ImageFont.load_default(size=10)
    columns = min(COLUMNS, len(frames))
    lines = wrap(title, PAD + columns * (WIDTH + PAD) - 2 * PAD, font.getlength)
    columns, rows, width, height = layout(len(frames), len(lines))
    sheet = Image.new("RGB", (width, height), BACKGROUND)
    draw = ImageDraw.Draw(sheet)
    for n, line in enumerate(lines):  # the whole title, however narrow the sheet
        draw.text((PAD, 2 + n * TITLE_H), line, fill=INK, font=font)
    top = TITLE_H * len(lines)
    tiles = []
    for index, frame in enumerate(frames):
        x = PAD + (index % columns) * (WIDTH + PAD)
        y = top + PAD + (index // columns) * (HEIGHT + LABEL_H + PAD)
        with Image.open(io.BytesIO(frame.data)) as image:
            sheet.paste(image.convert("RGB"), (x, y))
        label = tile_label(index, frame)
        draw.text((x, y + HEIGHT + 1), label, fill=INK, font=font)
        s = frame.sample
        tiles.append(
            {
                "tile": index + 1,
                "x": x,
                "y": y,
                "width": WIDTH,
                "height": HEIGHT,
                "label": label,
                "frame": s["frame"],
                "actionIndex": s["actionIndex"],
                "branchId": s["branchId"],
                "png": s["png"],
                "rgbaSha256": s["rgbaSha256"],
                "pngSha256": s["pngSha256"],
            }
        )
    buf = io.BytesIO()
    sheet.save(buf, "PNG", optimize=False)
    data = buf.getvalue()
    return data, {
        "composed": True,
        "format": "png",
        "width": width,
        "height": height,
        "columns": columns,
        "rows": rows,
        "title": title,
        "titleLines": lines,
        "sha256": hashlib.sha256(data).hexdigest(),
        "bytes": len(data),
        "tiles": tiles,
        "sources": "verified retained PNGs only (SHA-256, 160x144, pixels checked)",
    }
