"""embviz: look inside a language model's vocabulary."""

__version__ = "0.1.0"
