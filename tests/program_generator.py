"""Random autograd programs for the differential tests, one per seed.

Each program is a few dozen statements a learner could write: tensors with
and without requires_grad, arithmetic, views, in-place changes of leaves and
non-leaves (some allowed, some errors), detach and no_grad, retain_grad,
backward with and without retain_graph, torch.autograd.grad, names rebound,
a function, loops (some growing a graph), a small module and an optimizer,
caught errors (in loops and functions too), gradient and saved-tensor hooks,
objects that count how often they are looked at, a thread, warnings in a
loop, an atexit handler (such a program is run by a python of its own, whose
end is part of what it does), and now and then an uncaught error or a
SystemExit at the end. It prints numbers (gradients, values) as it goes, so
the differential test can compare what the program does with and without
the tutor.

``python program_generator.py SEED`` prints one.
"""

from __future__ import annotations

import random
import sys

HEADER = """\
import torch
torch.manual_seed({seed})


def twice_plus_one(t):
    u = t * 2
    return u + 1


@torch.no_grad()
def frozen(t):
    return t * 3


def show(label, t):
    print(label, None if t is None else round(float(t.double().sum()), 4))


class Counted:
    # An object the program can tell was looked at: the tutor must not.
    reprs = 0
    lookups = 0

    def __repr__(self):
        Counted.reprs += 1
        return "Counted()"

    def __getattr__(self, name):
        Counted.lookups += 1
        raise AttributeError(name)


hook_calls = {{"pack": 0, "unpack": 0, "grad": 0}}


def pack(t):
    hook_calls["pack"] += 1
    return t


def unpack(t):
    hook_calls["unpack"] += 1
    return t


def doubled(g):
    hook_calls["grad"] += 1
    return g * 2


def in_a_thread(t):
    import threading
    box = []
    worker = threading.Thread(target=lambda: box.append((t.detach() * 2).sum().item()))
    worker.start()
    worker.join()
    return box[0]


def rounds(t, n):
    for k in range(n):
        loss = (t * k).sum()
        try:
            loss.backward()
            loss.backward()
        except RuntimeError as error:
            print("round", k, type(error).__name__)

"""


class _Program:
    def __init__(self, seed: int) -> None:
        self.rng = random.Random(seed)
        self.seed = seed
        self.lines: list[str] = []
        self.leaves: list[str] = []  # (2, 3) tensors that require grad
        self.tensors: list[str] = []  # (2, 3) tensors of any kind
        self.counter = 0
        self.has_model = False
        self.has_atexit = False

    def fresh(self) -> str:
        if self.tensors and self.rng.random() < 0.3:
            return self.rng.choice(self.tensors)  # rebind a name
        self.counter += 1
        return f"t{self.counter}"

    def pick(self) -> str:
        return self.rng.choice(self.tensors)

    def bind(self, name: str, line: str, *, leaf: bool = False) -> None:
        self.lines.append(line)
        if name not in self.tensors:
            self.tensors.append(name)
        if leaf and name not in self.leaves:
            self.leaves.append(name)
        elif not leaf and name in self.leaves:
            self.leaves.remove(name)

    def guarded(self, *body: str) -> None:
        """Statements that may raise: the error is caught and named, as a learner's notebook would."""
        self.lines.append("try:")
        self.lines.extend("    " + b for b in body)
        self.lines.append("except (RuntimeError, TypeError) as error:")
        self.lines.append("    print('error', type(error).__name__)")

    # ---- statement kinds ----------------------------------------------------
    def leaf(self) -> None:
        name = self.fresh()
        if self.rng.random() < 0.7:
            self.bind(name, f"{name} = torch.randn(2, 3, requires_grad=True)", leaf=True)
        else:
            self.bind(name, f"{name} = torch.randn(2, 3)")

    def arithmetic(self) -> None:
        a, b = self.pick(), self.pick()
        op = self.rng.choice(["+", "-", "*"])
        name = self.fresh()
        self.bind(name, f"{name} = {a} {op} {b}")

    def unary(self) -> None:
        a = self.pick()
        fn = self.rng.choice(["exp()", "sin()", "tanh()", "relu()", "sigmoid()", "pow(2)", "abs()", "clamp(-1, 1)"])
        name = self.fresh()
        self.bind(name, f"{name} = {a}.{fn}")

    def view(self) -> None:
        a = self.pick()
        how = self.rng.choice(["view(2, 3)", "reshape(2, 3)", "transpose(0, 1).transpose(0, 1)", "clone()",
                               "expand(2, 3)", "contiguous()"])
        name = self.fresh()
        self.bind(name, f"{name} = {a}.{how}")

    def call(self) -> None:
        a = self.pick()
        name = self.fresh()
        self.bind(name, f"{name} = {self.rng.choice(['twice_plus_one', 'frozen'])}({a})")

    def inplace(self) -> None:
        a = self.pick()
        op = self.rng.choice([f"{a}.add_(1)", f"{a}.mul_(0.5)", f"{a}[0] = 0", f"{a} += 1", f"{a}.relu_()"])
        if self.rng.random() < 0.4:
            self.lines.append("with torch.no_grad():")
            self.lines.append(f"    {op}")
        else:
            self.guarded(op)

    def data_update(self) -> None:
        if self.leaves:
            a = self.rng.choice(self.leaves)
            self.lines.append(f"if {a}.grad is not None:")
            self.lines.append(f"    {a}.data.add_(-0.1 * {a}.grad)")

    def detach(self) -> None:
        a = self.pick()
        name = self.fresh()
        if self.rng.random() < 0.5:
            self.bind(name, f"{name} = {a}.detach()")
        else:
            self.lines.append("with torch.no_grad():")
            self.bind(name, f"    {name} = {a} * 2")

    def retain_grad(self) -> None:
        a = self.pick()
        self.guarded(f"{a}.retain_grad()")

    def backward(self) -> None:
        a = self.pick()
        retain = self.rng.choice(["", "retain_graph=True"])
        self.guarded(f"{a}.sum().backward({retain})")
        for leaf in self.leaves[:2]:
            self.lines.append(f"show('{leaf}.grad', {leaf}.grad)")

    def autograd_grad(self) -> None:
        if not self.leaves:
            return
        a, leaf = self.pick(), self.rng.choice(self.leaves)
        create = self.rng.choice(["", ", create_graph=True"])
        self.guarded(
            f"(g,) = torch.autograd.grad({a}.sum(), [{leaf}], allow_unused=True, retain_graph=True{create})",
            "show('g', g)",
        )

    def zero(self) -> None:
        if self.leaves:
            a = self.rng.choice(self.leaves)
            self.lines.append(f"if {a}.grad is not None:")
            self.lines.append(f"    {a}.grad.{self.rng.choice(['zero_()', 'mul_(0)'])}")
            if self.rng.random() < 0.5:
                self.lines.append(f"{a}.grad = None")

    def loop(self) -> None:
        a = self.pick()
        name = self.fresh()
        if self.rng.random() < 0.5:
            self.bind(name, f"{name} = {a} * 1")
            self.lines.append("for step in range(4):")
            self.lines.append(f"    {name} = {name} * 1.5")  # a graph that grows
        else:
            self.lines.append("for step in range(4):")
            self.lines.append(f"    loss = ({a} * step).sum()")
            self.lines.append("    try:")
            self.lines.append("        loss.backward()")
            self.lines.append("    except RuntimeError as error:")
            self.lines.append("        print('error', type(error).__name__)")

    def model(self) -> None:
        a = self.pick()
        if not self.has_model:
            self.lines.append("model = torch.nn.Sequential(torch.nn.Linear(3, 4), torch.nn.Tanh(), torch.nn.Linear(4, 1))")
            self.lines.append(f"opt = torch.optim.{self.rng.choice(['SGD', 'Adam'])}(model.parameters(), lr=0.1)")
            self.has_model = True
        self.lines.append(f"out = model({a}).sum()")
        self.guarded("out.backward()")
        self.lines.append("opt.step()")
        self.lines.append(f"opt.zero_grad({self.rng.choice(['', 'set_to_none=False'])})")
        self.lines.append("show('weight', model[0].weight)")

    def hooks(self) -> None:
        """A gradient hook on a leaf, or saved-tensor hooks around an op."""
        if self.leaves and self.rng.random() < 0.5:
            self.guarded(f"{self.rng.choice(self.leaves)}.register_hook(doubled)")
        else:
            a = self.pick()
            name = self.fresh()
            self.lines.append("with torch.autograd.graph.saved_tensors_hooks(pack, unpack):")
            self.bind(name, f"    {name} = {a} * {a}")

    def counted(self) -> None:
        """Objects with a counting repr beside tensors, in a list and a dict."""
        a = self.pick()
        self.lines.append(f"things = [Counted(), {a}, {{'c': Counted()}}]")

    def thread(self) -> None:
        self.lines.append(f"print('thread', round(in_a_thread({self.pick()}), 4))")

    def caught_rounds(self) -> None:
        """Errors caught in a loop inside a function."""
        if self.leaves:
            self.lines.append(f"rounds({self.rng.choice(self.leaves)}, 3)")

    def at_exit(self) -> None:
        """A handler that prints when the program ends (once per program)."""
        if not self.has_atexit:
            self.has_atexit = True
            self.lines.append("import atexit")
            self.lines.append(f"atexit.register(print, 'at exit', round(float({self.pick()}.detach().sum()), 4))")

    def warn(self) -> None:
        self.lines.append("for k in range(3):")
        self.lines.append(f"    __import__('warnings').warn('step ' + str(k % 2))")

    def show_value(self) -> None:
        a = self.pick()
        self.lines.append(f"show('{a}', {a})")
        self.lines.append(f"print({a}.requires_grad, {a}.is_leaf, {a}.grad_fn is None)")

    def ending(self) -> None:
        roll = self.rng.random()
        if roll < 0.08:
            self.lines.append(f"{self.pick()}.backward()")  # non-scalar: an uncaught error
        elif roll < 0.12:
            self.lines.append("raise ValueError('the program gives up')")
        elif roll < 0.16:
            self.lines.append(f"raise SystemExit({self.rng.choice([0, 2, 'stopped'])!r})")

    def build(self, length: int) -> str:
        kinds = [
            (self.arithmetic, 5), (self.unary, 4), (self.leaf, 2), (self.view, 2), (self.call, 2), (self.inplace, 2),
            (self.detach, 2), (self.retain_grad, 1), (self.backward, 4), (self.autograd_grad, 1), (self.zero, 1),
            (self.loop, 1), (self.model, 1), (self.data_update, 1), (self.show_value, 3),
            (self.hooks, 1), (self.counted, 1), (self.thread, 1), (self.caught_rounds, 1), (self.warn, 1),
            (self.at_exit, 0.1),
        ]
        actions = [k for k, _ in kinds]
        weights = [w for _, w in kinds]
        self.leaf()
        self.leaf()
        for _ in range(length):
            self.rng.choices(actions, weights)[0]()
        self.lines.append("print('looked at', Counted.reprs, Counted.lookups, hook_calls)")
        self.ending()
        return HEADER.format(seed=self.seed) + "\n".join(self.lines) + "\n"


def generate(seed: int, length: int = 25) -> str:
    """The program for ``seed``: the same text every time."""
    return _Program(seed).build(length)


if __name__ == "__main__":
    print(generate(int(sys.argv[1])))
