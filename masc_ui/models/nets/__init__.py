"""Network architectures rebuilt in torch and loaded from their released weights: CLIP-FlanT5, the Segment Anything
variants, CurricularFace's IR backbone, RetinaFace-MobileNet, MTCNN, the BLIP reward model of FaceScore, ArtScore's
ResNet-50. The metrics score with them; nothing here scores.
"""
