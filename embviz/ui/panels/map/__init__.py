"""The Map tab: its panel (panel.py), and the parts that panel is made of, each in a module of its own."""

from embviz.ui.panels.map.panel import MapPanel

__all__ = ["MapPanel"]
