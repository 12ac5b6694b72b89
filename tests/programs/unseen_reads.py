"""What the program can see of the tutor: nothing. Its nodes' metadata, its
objects' reprs and attributes and its saved-tensor hooks are as under python
(its __main__ is checked against a real python in test_python_versions)."""
import torch

unpacked = {"pack": 0, "unpack": 0}


class Counted:
    reprs = 0
    lookups = 0

    def __repr__(self):
        Counted.reprs += 1
        return "Counted()"

    def __getattr__(self, name):
        Counted.lookups += 1
        raise AttributeError(name)


def pack(t):
    unpacked["pack"] += 1
    return t


def unpack(t):
    unpacked["unpack"] += 1
    return t


thing = Counted()
x = torch.ones(3, requires_grad=True)
things = [thing, x]
table = {"thing": thing}
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    y = (x * x).sum()
print(y.grad_fn.metadata, y.grad_fn.next_functions[0][0].metadata)
y.grad_fn.metadata["mine"] = 1
z = y * 2
z.backward()
print(y.grad_fn.metadata, z.grad_fn.metadata)
print("reprs", Counted.reprs, "lookups", Counted.lookups, unpacked)
