"""How many neighbours of each token a comparison of two tables reads: torch-free, so the
Compare tab's state and the comparison itself check one range."""

K_RANGE = (5, 250)
DEFAULT_K = 50
