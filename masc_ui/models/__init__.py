"""Loading backbones by HF id or local path, device/dtype choice, model profiles, tiny demo checkpoints."""
