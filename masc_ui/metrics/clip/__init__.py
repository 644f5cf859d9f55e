"""The CLIP family: CLIP-I, CLIP-T, CLIPScore, CLIP-I-Seg and PickScore on shared CLIP-architecture backbones."""
