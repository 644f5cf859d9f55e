"""ArcFace, the recognizer of insightface's `buffalo_l` model pack (`w600k_r50.onnx`: ResNet-50 trained on
WebFace600K), run with onnxruntime. The recipe of insightface's `ArcFaceONNX` (insightface 2.1), which OpenS2V's
`facesim_arc` reads through `FaceAnalysis.get`, written here (the `insightface` package is not used: see `scrfd`):

- crop: `norm_crop(image, landmarks, 112)` (`alignment.norm_crop`: the ArcFace template, 5 points, least-squares
  similarity, bilinear, black outside the image) of the image the face was found in: when SCRFD found it only on the
  image padded by 25% with grey 128 (`FaceDetections.padded_retry`), that padded image, as `FaceAnalysis.get` embeds
  the faces of the image it detected them in;
- input: RGB (insightface swaps its BGR crop to RGB), (x - mean) / std with insightface's rule for the graph (mean 0,
  std 1 when its first 8 nodes hold a `Sub`/`_minus` and a `Mul`/`_mul` node, the mark of an mxnet conversion; else
  127.5 and 127.5, the case of `w600k_r50.onnx`), NCHW float32 at the graph's input size (112);
- output: the raw embedding (512-d for w600k_r50); FaceSim-Arc L2-normalises it in float32 (the cosine of
  insightface's `compute_sim` and of OpenS2V).
The graph always runs in float32 (onnxruntime; the precision policy's dtype does not apply).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import cv2
import numpy as np

from ...errors import ModelUnavailableError
from .alignment import norm_crop
from .scrfd import PAD_FRACTION, PAD_GREY
from .types import Face

PACK_RECOGNIZER = "w600k_r50.onnx"
"""The recognition model of the `buffalo_l` pack."""
MXNET_MEAN_STD = (0.0, 1.0)
TORCH_MEAN_STD = (127.5, 127.5)
NODES_LOOKED_AT = 8
"""insightface looks at the first 8 nodes of the graph to tell an mxnet conversion (it normalises inside)."""
ALIGNMENT = (
    "largest face; least-squares similarity of its 5 landmarks to the ArcFace template, warped to 112 "
    "(cv2.warpAffine bilinear, black border) in the image the face was detected in (SCRFD's padded retry: the image "
    "padded 25% grey 128); RGB (x - mean) / std, insightface's rule for the graph"
)


def input_normalisation(node_names: list[str]) -> tuple[float, float]:
    """(mean, std) insightface's `ArcFaceONNX` picks from the names of the graph's first nodes."""
    first = node_names[:NODES_LOOKED_AT]
    has_sub = any(n.startswith(("Sub", "_minus")) for n in first)
    has_mul = any(n.startswith(("Mul", "_mul")) for n in first)
    return MXNET_MEAN_STD if has_sub and has_mul else TORCH_MEAN_STD


def graph_node_names(model_file: Path) -> list[str]:
    """The names of the nodes of ONNX graph `model_file`, in graph order."""
    import onnx

    try:
        model = onnx.load(str(model_file), load_external_data=False)
    except Exception as exc:  # onnx raises protobuf's DecodeError and its own types for unreadable files
        raise ModelUnavailableError(f"ArcFace recognizer: {model_file} is not a readable ONNX model ({exc})") from exc
    return [node.name for node in model.graph.node]


def find_pack_recognizer(ref: Path) -> Path:
    """`w600k_r50.onnx` of a `buffalo_l` folder, or `ref` itself when it is the file."""
    if ref.is_file():
        return ref
    if (ref / PACK_RECOGNIZER).is_file():
        return ref / PACK_RECOGNIZER
    if ref.is_dir():
        raise ModelUnavailableError(
            f"FaceSim-Arc's ArcFace recognizer: {ref} holds no {PACK_RECOGNIZER}; point MASC_FACE_DETECTOR_DIR at the "
            "unzipped insightface buffalo_l folder"
        )
    raise ModelUnavailableError(
        f"FaceSim-Arc's ArcFace recognizer: the model-pack folder {ref} does not exist. Unzip insightface's buffalo_l "
        "pack there (MASC_FACE_DETECTOR_DIR), or use the demo profile (tiny random weights)."
    )


def arcface_crop(rgb: np.ndarray, face: Face, *, padded_retry: bool, size: int) -> np.ndarray:
    """(size, size, 3) uint8 RGB: `face` of `rgb` (H, W, 3) uint8 aligned as insightface's `ArcFaceONNX.get` does (in
    the grey-padded image when the face was found only there; see the module docstring)."""
    if face.landmarks is None:
        raise ModelUnavailableError(
            f"ArcFace needs 5 face landmarks; the detector gave none for the face at {face.box}"
        )
    landmarks = np.asarray(face.landmarks, np.float32)
    if padded_retry:
        h, w = rgb.shape[:2]
        top, left = int(h * PAD_FRACTION), int(w * PAD_FRACTION)
        rgb = cv2.copyMakeBorder(rgb, top, top, left, left, cv2.BORDER_CONSTANT, value=(PAD_GREY,) * 3)
        landmarks = landmarks + np.array([left, top], np.float32)
    return norm_crop(rgb, landmarks, size)


class ArcFaceOnnx:
    """The ArcFace ONNX graph: aligned crops (its `crop`) -> raw embeddings (its `embed`)."""

    label = "ArcFace ResNet-50 (insightface buffalo_l w600k_r50, ONNX)"
    alignment = ALIGNMENT

    def __init__(self, model_file: Path, *, device: str = "cpu") -> None:
        import onnxruntime

        self.model_file = Path(model_file)
        providers = ["CPUExecutionProvider"]
        if device.startswith("cuda") and "CUDAExecutionProvider" in onnxruntime.get_available_providers():
            providers.insert(0, "CUDAExecutionProvider")
        mean_std = input_normalisation(graph_node_names(self.model_file))
        try:
            self.session = onnxruntime.InferenceSession(str(self.model_file), providers=providers)
        except Exception as exc:  # onnxruntime raises its own exception types for unloadable graphs
            raise ModelUnavailableError(
                f"ArcFace recognizer: {self.model_file} is not a loadable ONNX model ({exc})"
            ) from exc
        inputs, outputs = self.session.get_inputs(), self.session.get_outputs()
        shape = list(inputs[0].shape)
        if len(inputs) != 1 or len(outputs) != 1 or len(shape) != 4 or shape[1] != 3:
            raise ModelUnavailableError(
                f"ArcFace recognizer: {self.model_file} takes {[i.shape for i in inputs]} and gives "
                f"{[o.shape for o in outputs]}; an ArcFace graph takes one (N, 3, 112, 112) image batch and gives one "
                "embedding per image"
            )
        height, width = shape[2], shape[3]
        if not (isinstance(height, int) and height == width and height % 112 == 0):
            raise ModelUnavailableError(
                f"ArcFace recognizer: {self.model_file} takes {height}x{width} images; ArcFace alignment needs a "
                "square input whose side is a multiple of 112"
            )
        self.size = int(height)
        self.input_mean, self.input_std = mean_std
        self.fixed_batch = shape[0] if isinstance(shape[0], int) else None
        """The graph's batch size when it is fixed (crops then go through it that many at a time); None = any."""
        self.input_name = inputs[0].name
        self.output_name = outputs[0].name

    def describe(self) -> dict[str, Any]:
        return {
            "weights": str(self.model_file),
            "input_size": self.size,
            "input_mean": self.input_mean,
            "input_std": self.input_std,
        }

    def crop(self, rgb: np.ndarray, face: Face, *, padded_retry: bool) -> np.ndarray:
        return arcface_crop(rgb, face, padded_retry=padded_retry, size=self.size)

    def embed(self, crops: np.ndarray) -> np.ndarray:
        """(N, E) float32 raw embeddings of (N, size, size, 3) uint8 RGB crops."""
        blob = ((crops.astype(np.float32) - self.input_mean) / self.input_std).transpose(0, 3, 1, 2)
        step = self.fixed_batch or len(blob)
        chunks = [
            self.session.run([self.output_name], {self.input_name: np.ascontiguousarray(blob[i : i + step])})[0]
            for i in range(0, len(blob), step)
        ]
        return np.concatenate(chunks).reshape(len(blob), -1).astype(np.float32)
