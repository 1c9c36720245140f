"""One module per checkpoint format; each turns files into tensors and a vocabulary."""
