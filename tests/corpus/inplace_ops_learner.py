# Follows the shape of: the PyTorch forum threads where learners probe in-place operations — "When inplace operation are allowed and when not" https://discuss.pytorch.org/t/when-inplace-operation-are-allowed-and-when-not/169583 and "Inplace operation changes is_leaf attribute" https://discuss.pytorch.org/t/inplace-operation-changes-is-leaf-attribute/120297 — with the rules from the Autograd mechanics note, "In-place operations with autograd" https://pytorch.org/docs/stable/notes/autograd.html (docs/source/notes/autograd.rst)
# What it exercises: in-place ops that autograd accepts on non-leaf tensors (h += 1, h[0] = 0 through CopySlices, relu_(), out.add_(...), mul_ after an op that saved nothing), a modified input of x**2 and a modified output of exp() that make backward raise "one of the variables needed for gradient computation has been modified by an inplace operation" (caught, with the tensor's _version shown), the fix with clone(), in-place on a leaf that requires grad (`c += 1`, `c.add_`, out= variants: caught RuntimeErrors), the same on c.detach() and under torch.no_grad() (allowed), a view of a leaf modified in place, and nn.ReLU(inplace=True) after a Sigmoid (the classic error inside a model).
# Adapted to run offline in a few seconds: small tensors with our own values; each failing statement is wrapped in try/except so the script runs to the end; fixed seed.
import torch
import torch.nn as nn

torch.manual_seed(0)

# --- in-place ops that are fine ------------------------------------------------------
x = torch.randn(5, requires_grad=True)
h = x * 2          # MulBackward0 saved only the scalar, not h
h += 1             # add does not need h later
h[0] = 0           # writing into a slice: the graph records CopySlices
h.relu_()          # relu's backward needs its result: the result is h itself, so it is fine
out = h * 3
out.add_(torch.ones(5))
out.sum().backward()
print("x.grad after the in-place chain:", x.grad)

# --- the "modified by an inplace operation" error -------------------------------------
t = torch.arange(3.0, requires_grad=True)
u = 2 * t                 # a non-leaf
uexp = u.exp()            # exp saves its result
loss = uexp.sum()
u[0] = 10                 # u is not needed by exp's backward: fine
loss.backward(retain_graph=True)
print("t.grad:", t.grad)
uexp[0] = 10              # but uexp is
print("uexp version:", uexp._version)
try:
    loss.backward()
except RuntimeError as err:
    print("RuntimeError:", str(err).split(";")[0])

w = torch.randn(3, requires_grad=True)
a = w * 1.5
sq = a ** 2               # pow saves its input a
a.mul_(2)                 # ... which is now changed
try:
    sq.sum().backward()
except RuntimeError as err:
    print("RuntimeError:", str(err).split(";")[0])

# the fix: work on a copy
a = w * 1.5
sq = a ** 2
a2 = a.clone()
a2.mul_(2)
(sq.sum() + a2.sum()).backward()
print("w.grad with clone():", w.grad)

# --- in-place on leaves --------------------------------------------------------------
c = torch.randn(2, 3, requires_grad=True)
print("c is leaf:", c.is_leaf)
try:
    c += 1
except RuntimeError as err:
    print("RuntimeError:", err)
try:
    c.add_(1)
except RuntimeError as err:
    print("RuntimeError:", err)
try:
    torch.add(c, 1, out=c)
except RuntimeError as err:
    print("RuntimeError:", str(err).split(".")[0])

d = c.detach()
d += 1                    # allowed: d shares c's memory, so c changes too
print("c is still a leaf:", c.is_leaf, "| c._version:", c._version)

with torch.no_grad():
    c.mul_(0.5)           # the usual manual update, allowed under no_grad
print("after no_grad mul_: leaf", c.is_leaf, "requires_grad", c.requires_grad)

try:
    c[:, 0] += 1          # a view of the leaf
except RuntimeError as err:
    print("RuntimeError:", err)
print("c is leaf:", c.is_leaf)

# --- the same error inside a model ---------------------------------------------------
model = nn.Sequential(nn.Linear(4, 4), nn.Sigmoid(), nn.ReLU(inplace=True), nn.Linear(4, 1))
inp = torch.randn(2, 4)
try:
    model(inp).sum().backward()
except RuntimeError as err:
    print("RuntimeError:", str(err).split(";")[0])

model[2] = nn.ReLU()      # out-of-place ReLU fixes it
model(inp).sum().backward()
print("grad of first layer:", tuple(model[0].weight.grad.shape))
