# Follows the shape of: PyTorch "Introduction to PyTorch on YouTube" series — "The Fundamentals of Autograd" — https://pytorch.org/tutorials/beginner/introyt/autogradyt_tutorial.html (pytorch/tutorials: beginner_source/introyt/autogradyt_tutorial.py)
# What it exercises: a = torch.linspace(..., requires_grad=True) through sin, *2, +1, sum; walking grad_fn.next_functions by hand; out.backward() and a.grad; a TinyModel (Linear-ReLU-Linear) with model.layer2.weight.grad before/after backward and optimizer.step(); gradients accumulating over 5 backward calls without zero_grad, then optimizer.zero_grad(); a.requires_grad = False; torch.no_grad() as a context and as a @torch.no_grad() decorator; detach(); an in-place torch.sin_ on a leaf that requires grad (the RuntimeError, caught here); the autograd profiler around a loop; y.backward(v) on a vector grown in a while loop; torch.autograd.functional.jacobian, hessian and vjp.
# Adapted to run offline in a few seconds: DIM_IN 200 and HIDDEN_SIZE 50 instead of 1000 and 100; 100 profiled iterations instead of 1000 and only the names of the profiled ops printed (not the timing table); matplotlib plots left out; the tutorial shows the in-place error as a non-executed snippet, here it runs inside try/except; other constants than the tutorial; fixed seed.
import math

import torch

torch.manual_seed(0)

a = torch.linspace(0., 2. * math.pi, steps=13, requires_grad=True)
print(a)

b = torch.sin(a)
print(b)

c = 2 * b
print(c)

d = c + 1
print(d)

out = d.sum()
print(out)

# Walk the recorded history from d back to the leaf.
print('d:')
print(d.grad_fn)
print(d.grad_fn.next_functions)
print(d.grad_fn.next_functions[0][0].next_functions)
print(d.grad_fn.next_functions[0][0].next_functions[0][0].next_functions)
print(d.grad_fn.next_functions[0][0].next_functions[0][0].next_functions[0][0].next_functions)
print('\nc:')
print(c.grad_fn)
print('\nb:')
print(b.grad_fn)
print('\na:')
print(a.grad_fn)

out.backward()
print(a.grad)  # 2 * cos(a)

# --- Autograd in training ------------------------------------------------------
BATCH_SIZE = 16
DIM_IN = 200
HIDDEN_SIZE = 50
DIM_OUT = 10


class TinyModel(torch.nn.Module):

    def __init__(self):
        super(TinyModel, self).__init__()

        self.layer1 = torch.nn.Linear(DIM_IN, HIDDEN_SIZE)
        self.relu = torch.nn.ReLU()
        self.layer2 = torch.nn.Linear(HIDDEN_SIZE, DIM_OUT)

    def forward(self, x):
        x = self.layer1(x)
        x = self.relu(x)
        x = self.layer2(x)
        return x


some_input = torch.randn(BATCH_SIZE, DIM_IN, requires_grad=False)
ideal_output = torch.randn(BATCH_SIZE, DIM_OUT, requires_grad=False)

model = TinyModel()

print(model.layer2.weight[0][0:10])  # a slice is enough
print(model.layer2.weight.grad)

optimizer = torch.optim.SGD(model.parameters(), lr=0.001)

prediction = model(some_input)

loss = (ideal_output - prediction).pow(2).sum()
print(loss)

loss.backward()
print(model.layer2.weight[0][0:10])
print(model.layer2.weight.grad[0][0:10])

optimizer.step()
print(model.layer2.weight[0][0:10])
print(model.layer2.weight.grad[0][0:10])

# Without zero_grad the gradients keep adding up.
print(model.layer2.weight.grad[0][0:10])

for i in range(0, 5):
    prediction = model(some_input)
    loss = (ideal_output - prediction).pow(2).sum()
    loss.backward()

print(model.layer2.weight.grad[0][0:10])

optimizer.zero_grad()

print(model.layer2.weight.grad)

# --- Turning autograd off and on ---------------------------------------------------
a = torch.ones(2, 3, requires_grad=True)
print(a)

b1 = 3 * a
print(b1)

a.requires_grad = False
b2 = 3 * a
print(b2)

a = torch.ones(2, 3, requires_grad=True) * 4
b = torch.ones(2, 3, requires_grad=True) * 5

c1 = a + b
print(c1)

with torch.no_grad():
    c2 = a + b

print(c2)

c3 = a * b
print(c3)


def add_tensors1(x, y):
    return x + y


@torch.no_grad()
def add_tensors2(x, y):
    return x + y


a = torch.ones(2, 3, requires_grad=True) * 4
b = torch.ones(2, 3, requires_grad=True) * 5

c1 = add_tensors1(a, b)
print(c1)

c2 = add_tensors2(a, b)
print(c2)

x = torch.rand(5, requires_grad=True)
y = x.detach()

print(x)
print(y)

# In-place on a leaf that requires grad is refused.
a = torch.linspace(0., 2. * math.pi, steps=13, requires_grad=True)
try:
    torch.sin_(a)
except RuntimeError as err:
    print('RuntimeError:', err)

# --- Autograd profiler ------------------------------------------------------------
x = torch.randn(2, 3, requires_grad=True)
y = torch.rand(2, 3, requires_grad=True)
z = torch.ones(2, 3, requires_grad=True)

with torch.autograd.profiler.profile() as prf:
    for _ in range(100):
        z = (z / x) * y

print(sorted({evt.key for evt in prf.key_averages()}))

# --- More autograd detail and the high-level API --------------------------------------
x = torch.randn(3, requires_grad=True)

y = x * 2
while y.data.norm() < 1000:
    y = y * 2

print(y)

v = torch.tensor([0.5, 0.01, 1.0], dtype=torch.float)  # stands in for dl/dy
y.backward(v)

print(x.grad)


def exp_adder(x, y):
    return 3 * x.exp() + 2 * y


inputs = (torch.rand(1), torch.rand(1))  # one value per argument
print(inputs)
print(torch.autograd.functional.jacobian(exp_adder, inputs))

inputs = (torch.rand(3), torch.rand(3))  # now three values per argument
print(inputs)
print(torch.autograd.functional.jacobian(exp_adder, inputs))


def do_some_doubling(x):
    y = x * 2
    while y.data.norm() < 1000:
        y = y * 2
    return y


inputs = torch.randn(3)
my_gradients = torch.tensor([0.5, 0.01, 1.0])
print(torch.autograd.functional.vjp(do_some_doubling, inputs, v=my_gradients))


def cube_sum(x):
    return (x ** 3).sum()


print(torch.autograd.functional.hessian(cube_sum, torch.tensor([1.0, -2.0])))
