"""Video outputs (subject-to-video): the image metrics frame by frame, the subject's mask per frame, and OpenS2V's
video scores (GmeScore, NexusScore, NaturalScore, FaceSim of a video).
"""
