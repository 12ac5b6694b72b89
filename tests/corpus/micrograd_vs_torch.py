# Follows the shape of: Andrej Karpathy's micrograd — https://github.com/karpathy/micrograd (micrograd/engine.py, micrograd/nn.py, test/test_engine.py, demo.ipynb)
# What it exercises: a scalar autograd engine written in plain Python (a Value class with operator overloads, closures stored in _backward, a topological sort in backward()), a Neuron/Layer/MLP built on it with zero_grad() and parameters(), a sanity check that runs the same expression through torch (double tensors, requires_grad = True, y.backward(), x.grad.item()) and compares values and gradients, then a few steps of an SVM max-margin training loop with manual `p.data -= learning_rate * p.grad`.
# Adapted to run offline in a few seconds: a different test expression than test_engine.py; 12 hand-placed 2-D points with +/-1 labels instead of sklearn's make_moons(100); MLP(2, [8, 8, 1]) instead of [16, 16, 1]; 8 optimisation steps instead of 100; no plots; random seed fixed; printed losses rounded (the engine, like the original, keeps children in a set, so the order in which gradients add up can change the last bits).
import random

import torch


class Value:
    """A scalar that remembers how it was computed, so it can be differentiated."""

    def __init__(self, data, _children=(), _op=''):
        self.data = data
        self.grad = 0
        # what backward() needs to know about the graph
        self._backward = lambda: None
        self._prev = set(_children)
        self._op = _op  # for printing and debugging

    def __add__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data + other.data, (self, other), '+')

        def _backward():
            self.grad += out.grad
            other.grad += out.grad
        out._backward = _backward

        return out

    def __mul__(self, other):
        other = other if isinstance(other, Value) else Value(other)
        out = Value(self.data * other.data, (self, other), '*')

        def _backward():
            self.grad += other.data * out.grad
            other.grad += self.data * out.grad
        out._backward = _backward

        return out

    def __pow__(self, other):
        assert isinstance(other, (int, float)), "only constant exponents"
        out = Value(self.data ** other, (self,), f'**{other}')

        def _backward():
            self.grad += (other * self.data ** (other - 1)) * out.grad
        out._backward = _backward

        return out

    def relu(self):
        out = Value(0 if self.data < 0 else self.data, (self,), 'ReLU')

        def _backward():
            self.grad += (out.data > 0) * out.grad
        out._backward = _backward

        return out

    def backward(self):
        # order every node after all of its inputs
        topo = []
        visited = set()

        def build_topo(v):
            if v not in visited:
                visited.add(v)
                for child in v._prev:
                    build_topo(child)
                topo.append(v)
        build_topo(self)

        # chain rule, from the output back to the leaves
        self.grad = 1
        for v in reversed(topo):
            v._backward()

    def __neg__(self):  # -self
        return self * -1

    def __radd__(self, other):  # other + self
        return self + other

    def __sub__(self, other):  # self - other
        return self + (-other)

    def __rsub__(self, other):  # other - self
        return other + (-self)

    def __rmul__(self, other):  # other * self
        return self * other

    def __truediv__(self, other):  # self / other
        return self * other**-1

    def __rtruediv__(self, other):  # other / self
        return other * self**-1

    def __repr__(self):
        return f"Value(data={self.data}, grad={self.grad})"


class Module:

    def zero_grad(self):
        for p in self.parameters():
            p.grad = 0

    def parameters(self):
        return []


class Neuron(Module):

    def __init__(self, nin, nonlin=True):
        self.w = [Value(random.uniform(-1, 1)) for _ in range(nin)]
        self.b = Value(0)
        self.nonlin = nonlin

    def __call__(self, x):
        act = sum((wi * xi for wi, xi in zip(self.w, x)), self.b)
        return act.relu() if self.nonlin else act

    def parameters(self):
        return self.w + [self.b]

    def __repr__(self):
        return f"{'ReLU' if self.nonlin else 'Linear'}Neuron({len(self.w)})"


class Layer(Module):

    def __init__(self, nin, nout, **kwargs):
        self.neurons = [Neuron(nin, **kwargs) for _ in range(nout)]

    def __call__(self, x):
        out = [n(x) for n in self.neurons]
        return out[0] if len(out) == 1 else out

    def parameters(self):
        return [p for n in self.neurons for p in n.parameters()]

    def __repr__(self):
        return f"Layer of [{', '.join(str(n) for n in self.neurons)}]"


class MLP(Module):

    def __init__(self, nin, nouts):
        sz = [nin] + nouts
        self.layers = [Layer(sz[i], sz[i + 1], nonlin=i != len(nouts) - 1) for i in range(len(nouts))]

    def __call__(self, x):
        for layer in self.layers:
            x = layer(x)
        return x

    def parameters(self):
        return [p for layer in self.layers for p in layer.parameters()]

    def __repr__(self):
        return f"MLP of [{', '.join(str(layer) for layer in self.layers)}]"


def test_sanity_check():

    x = Value(-3.0)
    z = 3 * x + 1 - x
    q = z.relu() + x * z
    h = (z * x).relu()
    y = h + q * q + x / 2
    y.backward()
    xmg, ymg = x, y

    x = torch.Tensor([-3.0]).double()
    x.requires_grad = True
    z = 3 * x + 1 - x
    q = z.relu() + x * z
    h = (z * x).relu()
    y = h + q * q + x / 2
    y.backward()
    xpt, ypt = x, y

    # same forward value
    assert abs(ymg.data - ypt.data.item()) < 1e-9
    # same gradient
    assert abs(xmg.grad - xpt.grad.item()) < 1e-9
    print('sanity check: y =', ymg.data, 'dy/dx =', xmg.grad, '(torch:', xpt.grad.item(), ')')


def test_more_ops():

    a = Value(-2.0)
    b = Value(5.0)
    c = a * b + b**2
    c = c + c + 1
    d = (a + b).relu() * 2 - a / b
    e = c / d + d**3
    e.backward()
    amg, bmg, emg = a, b, e

    a = torch.Tensor([-2.0]).double()
    b = torch.Tensor([5.0]).double()
    a.requires_grad = True
    b.requires_grad = True
    c = a * b + b**2
    c = c + c + 1
    d = (a + b).relu() * 2 - a / b
    e = c / d + d**3
    e.backward()
    apt, bpt, ept = a, b, e

    tol = 1e-6
    assert abs(emg.data - ept.data.item()) < tol
    assert abs(amg.grad - apt.grad.item()) < tol
    assert abs(bmg.grad - bpt.grad.item()) < tol
    print('more ops: e =', round(emg.data, 6), 'de/da =', round(amg.grad, 6), 'de/db =', round(bmg.grad, 6))


test_sanity_check()
test_more_ops()

# --- the demo: a tiny binary classifier ----------------------------------------
random.seed(1337)

X = [[-1.0, 0.5], [-0.8, 0.9], [-0.5, 1.0], [0.0, 1.1], [0.5, 0.9], [0.9, 0.4],
     [0.1, -0.2], [0.5, -0.5], [1.0, -0.6], [1.5, -0.4], [1.9, 0.0], [2.0, 0.4]]
y = [1, 1, 1, 1, 1, 1, -1, -1, -1, -1, -1, -1]

model = MLP(2, [8, 8, 1])
print(model)
print("number of parameters", len(model.parameters()))


def loss():
    inputs = [list(map(Value, xrow)) for xrow in X]

    # forward the model to get scores
    scores = list(map(model, inputs))

    # svm "max-margin" loss
    losses = [(1 + -yi * scorei).relu() for yi, scorei in zip(y, scores)]
    data_loss = sum(losses) * (1.0 / len(losses))
    # L2 regularization
    alpha = 1e-4
    reg_loss = alpha * sum((p * p for p in model.parameters()))
    total_loss = data_loss + reg_loss

    # also get accuracy
    accuracy = [(yi > 0) == (scorei.data > 0) for yi, scorei in zip(y, scores)]
    return total_loss, sum(accuracy) / len(accuracy)


for k in range(8):

    # forward
    total_loss, acc = loss()

    # backward
    model.zero_grad()
    total_loss.backward()

    # update (sgd)
    learning_rate = 1.0 - 0.9 * k / 100
    for p in model.parameters():
        p.data -= learning_rate * p.grad

    print(f"step {k} loss {total_loss.data:.6f}, accuracy {acc*100:.1f}%")
