"""A real notebook, executed by nbclient on an ipykernel kernel, with the extension loaded."""

from __future__ import annotations

import re

import pytest

nbformat = pytest.importorskip("nbformat", reason="the notebook tests need the test extra (nbformat)")
nbclient = pytest.importorskip("nbclient", reason="the notebook tests need the test extra (nbclient)")
pytest.importorskip("ipykernel", reason="the notebook tests need the test extra (ipykernel)")

from test_notebook_extension import SO_CELLS  # noqa: E402


def execute(cells: list[str], tmp_path) -> list[dict]:
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(source) for source in cells]
    nb.metadata["kernelspec"] = {"name": "python3", "display_name": "Python 3", "language": "python"}
    client = nbclient.NotebookClient(
        nb, timeout=300, kernel_name="python3", allow_errors=True, resources={"metadata": {"path": str(tmp_path)}},
    )
    client.execute()
    return [cell for cell in nb.cells]


def test_stack_overflow_notebook(tmp_path):
    cells = execute(["%load_ext gradtutor", *SO_CELLS, "%gradtutor export so.html"], tmp_path)
    numbers = [cell.execution_count for cell in cells]
    assert numbers == list(range(1, len(cells) + 1))
    z_cell, first_backward, second_backward = 7, 9, 11  # In [N] of the cells, %load_ext being In [1]
    last = cells[second_backward - 1]
    error = [o for o in last.outputs if o.output_type == "error"]
    assert error and error[0].ename == "RuntimeError"
    # The traceback is the kernel's own, without gradtutor's frames.
    assert not any("gradtutor" in line for line in error[0].traceback)
    assert f"Cell In[{second_backward}], line 1" in re.sub(r"\x1b\[[0-9;]*m", "", "".join(error[0].traceback))
    narrated = [o for o in last.outputs if o.output_type == "display_data"]
    assert len(narrated) == 1 and set(narrated[0].data) >= {"text/html", "text/plain"}
    expected = (
        f"In [{second_backward}] ran backward into the node created at In [{z_cell}] (`z = torch.matmul(x, w)+b`), "
        f"whose saved tensors were already freed by the backward at In [{first_backward}] (`loss.backward()`)"
    )
    assert expected in " ".join(narrated[0].data["text/plain"].split())
    html = narrated[0].data["text/html"]
    assert "<pre class=\"gt-picture\"" in html and "✗ freed" in html
    # The error comes first, as IPython shows it; the narration after it.
    assert last.outputs.index(error[0]) < last.outputs.index(narrated[0])
    assert (tmp_path / "so.html").read_text(encoding="utf-8").startswith("<!DOCTYPE html>")


def test_results_prints_and_display_are_untouched(tmp_path):
    cells = execute([
        "%load_ext gradtutor",
        "import torch\nx = torch.tensor(3.0, requires_grad=True)\nprint('hello')\nx * 2",
        "from IPython.display import display, HTML\ndisplay(HTML('<b>mine</b>'))",
        "!echo shell-line",
    ], tmp_path)
    first = cells[1].outputs
    assert [o.output_type for o in first] == ["stream", "execute_result", "display_data"]
    assert first[0].text == "hello\n"
    assert first[1].data["text/plain"] == "tensor(6., grad_fn=<MulBackward0>)"
    assert [o.data.get("text/html") for o in cells[2].outputs] == ["<b>mine</b>"]
    assert cells[3].outputs[0].text.strip() == "shell-line"
