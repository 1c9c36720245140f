"""Files that ship with embviz (lesson models, word sets, the analogy questions),
packaged as `embviz.assets`."""
