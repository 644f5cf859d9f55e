"""Image-text questions: VQAScore (CLIP-FlanT5 or a chat VLM) and ITMScore (BLIP-2), the scorers of (output image,
prompt) pairs on a batched, cached pair engine.
"""
