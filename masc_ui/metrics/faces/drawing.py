"""Detected faces drawn on their image, for the Score tab's explanations (boxes, landmarks, labels)."""

from __future__ import annotations

from collections.abc import Sequence

from PIL import Image, ImageDraw, ImageFont

from .types import Face

BOX_COLOUR = (0, 220, 90)
LANDMARK_COLOUR = (255, 60, 60)


def draw_faces(image: Image.Image, faces: Sequence[Face], labels: Sequence[str] | None = None) -> Image.Image:
    """A copy of `image` (RGB) with each face's box, its landmarks as dots and an optional label per face."""
    out = image.convert("RGB").copy()
    draw = ImageDraw.Draw(out)
    width = max(1, round(max(out.size) / 300))
    for i, face in enumerate(faces):
        draw.rectangle(face.box, outline=BOX_COLOUR, width=width)
        if face.landmarks is not None:
            r = 1.5 * width
            for x, y in face.landmarks:
                draw.ellipse((x - r, y - r, x + r, y + r), fill=LANDMARK_COLOUR)
        if labels is not None and i < len(labels):
            # Above the box (inside it when the box touches the top), dark on the box colour: readable on any photo.
            font = ImageFont.load_default(size=max(12, round(max(out.size) / 40)))
            x0, y0, x1, y1 = draw.textbbox((0, 0), labels[i], font=font)
            top = face.box[1] - (y1 - y0) - 2 * width if face.box[1] > (y1 - y0) + 2 * width else face.box[1]
            draw.rectangle(
                (face.box[0], top, face.box[0] + (x1 - x0) + 2 * width, top + (y1 - y0) + 2 * width), fill=BOX_COLOUR
            )
            draw.text((face.box[0] + width - x0, top + width - y0), labels[i], fill=(0, 0, 0), font=font)
    return out
