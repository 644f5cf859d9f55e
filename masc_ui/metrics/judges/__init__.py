"""Chat models as judges behind an OpenAI-compatible API, with the guards a paid judge needs."""
