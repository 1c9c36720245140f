"""The untied output head's rows as a table of their own, so the table rooms can read it."""

from __future__ import annotations

from embviz.core.errors import EmbvizError
from embviz.core.model import EmbeddingModel
from embviz.core.table.results import ONE_TABLE, TABLES

INPUT, OUTPUT = TABLES
TIED = ONE_TABLE


def output_table(model: EmbeddingModel) -> EmbeddingModel:
    """An EmbeddingModel over the head's rows: same vocabulary, its own `cache` so norms, unit
    rows, graphs and maps of the head never mix with the input table's; made once per model."""
    if model.head is None:
        raise EmbvizError(TIED)
    head = model.head

    def build() -> EmbeddingModel:
        # A source that names no file: the map kept on disk for the checkpoint is the input
        # table's, and must not be served for the head.
        return EmbeddingModel(name=f"{model.name} (output table)", source=f"{model.source}#output-table",
                              table=head.float().to(model.device), vocab=model.vocab, device=model.device,
                              storage_dtype=str(head.dtype).removeprefix("torch."), kind="table",
                              total_params=model.total_params, notes=list(model.notes),
                              lm_unavailable_reason="The output table is a table only: run the model on its input table.")

    return model.derived("output-table", build)


def table_of(model: EmbeddingModel, table: str) -> EmbeddingModel:
    """The model itself for "input", its output head's table for "output"."""
    if table == INPUT:
        return model
    if table == OUTPUT:
        return output_table(model)
    raise EmbvizError(f"The table is input or output, not {table!r}.")
