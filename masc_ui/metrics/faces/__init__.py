"""Faces for the face metrics: pluggable detection (SCRFD, RetinaFace, the packaged MTCNN fallback) detected
once per image and detector, ArcFace-template alignment, and the IR face recognizer of FaceSim."""

from .alignment import ARCFACE_TEMPLATE, aligned_face, norm_crop, similarity_transform
from .detection import (
    DETECTORS,
    DetectorChoice,
    FaceDetectionService,
    choose_detector,
    list_detectors,
    shared_face_detection,
)
from .drawing import draw_faces
from .types import Face, FaceDetections

__all__ = [
    "ARCFACE_TEMPLATE",
    "aligned_face",
    "norm_crop",
    "similarity_transform",
    "DETECTORS",
    "DetectorChoice",
    "FaceDetectionService",
    "choose_detector",
    "list_detectors",
    "shared_face_detection",
    "draw_faces",
    "Face",
    "FaceDetections",
]
