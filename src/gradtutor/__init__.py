"""gradtutor: a terminal tutor that makes PyTorch autograd visible."""

__version__ = "0.1.0"
