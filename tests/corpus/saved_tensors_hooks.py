# Follows the shape of: PyTorch tutorial "Hooks for autograd saved tensors" — https://pytorch.org/tutorials/intermediate/autograd_saved_tensors_hooks_tutorial.html (pytorch/tutorials: intermediate_source/autograd_saved_tensors_hooks_tutorial.py)
# What it exercises: reading grad_fn._saved_self / _saved_other / _saved_result (identity vs. equality of the unpacked tensor), a chain f(f(f(x))) that keeps intermediates alive, torch.autograd.graph.saved_tensors_hooks with printing pack/unpack hooks (the prints must appear exactly as often under the tutor), hooks that scale on pack and unscale on unpack, hooks that return a list index or a (tensor, closure) tuple, grad_fn._raw_saved_self.register_hooks on one saved tensor, torch.autograd.graph.save_on_cpu inside a module's forward and a SaveToCpu wrapper module, and saving to disk with self-deleting temporary files (plus the "double access" failure of the wrong version, caught).
# Adapted to run offline in a few seconds: pin_memory=False (no GPU); the disk examples write into a tempfile.TemporaryDirectory that is removed at the end; the DataParallel line and the repr/eval example are left out; the pack/unpack hooks print shapes instead of whole tensors; other sizes than the tutorial; fixed seed.
import os
import tempfile
import uuid

import torch
import torch.nn as nn

torch.manual_seed(0)

a = torch.randn(4, requires_grad=True)
b = torch.ones(4, requires_grad=True)
y = a * b
print(y.grad_fn._saved_self)
print(y.grad_fn._saved_other)


def f(x):
    return x * x


# each call saves its input for backward, so the graph keeps all three alive
x = torch.randn(4, requires_grad=True)
y = f(f(f(x)))
print(y.grad_fn._saved_self.shape)

# the saved tensor is sometimes the very same object ...
a = torch.randn(4, requires_grad=True)
b = torch.ones(4, requires_grad=True)
y = a * b
print(y.grad_fn._saved_self is a)   # True
print(y.grad_fn._saved_other is b)  # True

# ... and sometimes only an equal tensor sharing storage
a = torch.randn(4, requires_grad=True)
y = torch.exp(a)
print(y.grad_fn._saved_result.equal(y))  # True
print(y.grad_fn._saved_result is y)      # False


# --- hooks on saved tensors -------------------------------------------------------------
def pack_hook(x):
    print("Packing", tuple(x.shape))
    return x


def unpack_hook(x):
    print("Unpacking", tuple(x.shape))
    return x


a = torch.ones(4, requires_grad=True)
b = torch.ones(4, requires_grad=True) * 3

with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    y = a * b

y.sum().backward()

# pack can transform, as long as unpack undoes it
x = torch.randn(4, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(lambda x: x * 3, lambda x: x / 3):
    y = torch.pow(x, 2)
y.sum().backward()
print("pow grad ok:", torch.allclose(x.grad, 2 * x))

# pack may return any object: here an index into a list
storage = []


def pack(x):
    storage.append(x)
    return len(storage) - 1


def unpack(x):
    return storage[x]


x = torch.randn(4, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    y = x * x
y.sum().backward()
print("list-index hooks ok:", x.grad.equal(2 * x), "| stored:", len(storage))


# or a tensor and a function that restores it
def pack(x):
    delta = torch.randn(*x.size())
    return x - delta, lambda x: x + delta


def unpack(packed):
    x, f = packed
    return f(x)


x = torch.randn(4, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack, unpack):
    y = x * x
y.sum().backward()
print("tuple hooks ok:", torch.allclose(x.grad, 2 * x))

# hooks on one particular saved tensor
x = torch.randn(4, requires_grad=True)
y = x.pow(2)
y.grad_fn._raw_saved_self.register_hooks(lambda t: t * 10, lambda t: t / 10)
y.sum().backward()
print("raw saved hooks ok:", torch.allclose(x.grad, 2 * x))


# --- saving to CPU ---------------------------------------------------------------------
class Model(nn.Module):
    def __init__(self):
        super().__init__()
        self.w = nn.Parameter(torch.randn(4))

    def forward(self, x):
        with torch.autograd.graph.save_on_cpu(pin_memory=False):
            return self.w * x


x = torch.randn(4)
model = Model()
loss = model(x).sum()
loss.backward()
print("save_on_cpu grad == x:", torch.allclose(model.w.grad, x))


class SaveToCpu(nn.Module):
    def __init__(self, module):
        super().__init__()
        self.module = module

    def forward(self, *args, **kwargs):
        with torch.autograd.graph.save_on_cpu(pin_memory=False):
            return self.module(*args, **kwargs)


model = nn.Sequential(
    nn.Linear(6, 12),
    SaveToCpu(nn.Linear(12, 12)),
    nn.Linear(12, 3),
)

x = torch.randn(6)
loss = model(x).sum()
loss.backward()
print("wrapped layer grad shape:", tuple(model[1].module.weight.grad.shape))

# --- saving to disk -----------------------------------------------------------------------
tmp_dir_obj = tempfile.TemporaryDirectory()
tmp_dir = tmp_dir_obj.name


# wrong: the file is gone after the first unpack
def pack_hook(tensor):
    name = os.path.join(tmp_dir, str(uuid.uuid4()))
    torch.save(tensor, name)
    return name


def unpack_hook(name):
    tensor = torch.load(name)
    os.remove(name)
    return tensor


x = torch.ones(4, requires_grad=True)
with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
    y = x.pow(2)
print(y.grad_fn._saved_self)
try:
    print(y.grad_fn._saved_self)
    print("Double access succeeded!")
except Exception:
    print("Double access failed!")


# right: the file lives as long as the packed object
class SelfDeletingTempFile():
    def __init__(self):
        self.name = os.path.join(tmp_dir, str(uuid.uuid4()))

    def __del__(self):
        os.remove(self.name)


SAVE_ON_DISK_THRESHOLD = 100  # only tensors at least this big go to disk


def pack_hook(x):
    if x.numel() < SAVE_ON_DISK_THRESHOLD:
        return x
    temp_file = SelfDeletingTempFile()
    torch.save(x, temp_file.name)
    return temp_file


def unpack_hook(tensor_or_sctf):
    if isinstance(tensor_or_sctf, torch.Tensor):
        return tensor_or_sctf
    return torch.load(tensor_or_sctf.name)


class SaveToDisk(nn.Module):
    def __init__(self, module):
        super().__init__()
        self.module = module

    def forward(self, *args, **kwargs):
        with torch.autograd.graph.saved_tensors_hooks(pack_hook, unpack_hook):
            return self.module(*args, **kwargs)


net = nn.Sequential(SaveToDisk(nn.Linear(20, 20)), nn.Tanh(), SaveToDisk(nn.Linear(20, 2)))
inp = torch.randn(8, 20)
out = net(inp)
print("files while the graph is alive:", len(os.listdir(tmp_dir)))
out.sum().backward()
print("files after backward:", len(os.listdir(tmp_dir)))
print("first layer grad shape:", tuple(net[0].module.weight.grad.shape))
del out
tmp_dir_obj.cleanup()
