# Follows the shape of: the PyTorch forum thread "RuntimeError: Trying to backward through the graph a second time, but the buffers have already been freed. Specify retain_graph=True when calling backward the first time" — https://discuss.pytorch.org/t/runtimeerror-trying-to-backward-through-the-graph-a-second-time-but-the-buffers-have-already-been-freed-specify-retain-graph-true-when-calling-backward-the-first-time/6795 — and the situations learners post there: the same loss backpropagated twice, two losses sharing one forward pass, and a recurrent hidden state carried across iterations without detach().
# What it exercises: a second backward() on a freed graph (caught RuntimeError) then the retain_graph=True fix and the doubled .grad it gives; a graph of ops that saved nothing ((x + 3).sum()) backpropagated twice without error; two heads on a shared trunk with loss1.backward() then loss2.backward() (caught) fixed by retain_graph=True on the first call and by (loss1 + loss2).backward(); reading grad_fn._saved_self before and after the graph is freed; an RNN-like loop h = tanh(W_xh x + W_hh h) with optimizer steps where the hidden state keeps the previous iteration's graph (caught at iteration 1), fixed with h = h.detach().
# Adapted to run offline in a few seconds: tiny tensors and a 3-unit recurrent cell on random data; every failing backward is wrapped in try/except so the script runs to the end; fixed seed.
import torch
import torch.nn as nn

torch.manual_seed(0)

# --- the same loss twice ---------------------------------------------------------------
x = torch.tensor([1.0, 2.0, 3.0], requires_grad=True)
y = torch.sum(x ** 2)
y.backward()
print("x.grad:", x.grad)
try:
    y.backward()
except RuntimeError as err:
    print("RuntimeError:", str(err).split(".")[0])

x.grad = None
y = torch.sum(x ** 2)
y.backward(retain_graph=True)
y.backward()              # allowed now; the gradients add up
print("x.grad after two backward calls:", x.grad)

# a graph whose nodes saved no tensors can be walked again
x.grad = None
z = (x + 3).sum()
z.backward()
z.backward()
print("x.grad after (x + 3).sum() twice:", x.grad)

# saved tensors are readable until the backward frees them
w = torch.randn(3, requires_grad=True)
p = w.pow(2)
print("saved self equals w:", torch.equal(p.grad_fn._saved_self, w))
p.sum().backward()
try:
    p.grad_fn._saved_self
except RuntimeError as err:
    print("RuntimeError:", str(err).split(".")[0])

# --- two losses on one forward pass -----------------------------------------------------
trunk = nn.Linear(4, 8)
head1 = nn.Linear(8, 1)
head2 = nn.Linear(8, 1)
inp = torch.randn(5, 4)

features = torch.tanh(trunk(inp))
loss1 = head1(features).pow(2).mean()
loss2 = head2(features).abs().mean()
loss1.backward()
try:
    loss2.backward()
except RuntimeError as err:
    print("RuntimeError:", str(err).split(".")[0])

trunk.zero_grad()
features = torch.tanh(trunk(inp))
loss1 = head1(features).pow(2).mean()
loss2 = head2(features).abs().mean()
loss1.backward(retain_graph=True)  # keep the trunk's saved tensors for loss2
loss2.backward()
g_separate = trunk.weight.grad.clone()

trunk.zero_grad()
features = torch.tanh(trunk(inp))
loss = head1(features).pow(2).mean() + head2(features).abs().mean()
loss.backward()                    # or add the losses and go back once
print("same trunk gradient both ways:", torch.allclose(g_separate, trunk.weight.grad))

# --- a hidden state carried across iterations ---------------------------------------------
W_xh = torch.randn(3, 2, requires_grad=True)
W_hh = torch.randn(3, 3, requires_grad=True)
optimizer = torch.optim.SGD([W_xh, W_hh], lr=0.1)
xs = torch.randn(4, 2)
targets = torch.randn(4, 3)

h = torch.zeros(3)
for i in range(4):
    h = torch.tanh(W_xh @ xs[i] + W_hh @ h)
    loss = ((h - targets[i]) ** 2).sum()
    optimizer.zero_grad()
    try:
        loss.backward()
    except RuntimeError as err:
        print(f"iteration {i}: RuntimeError:", str(err).split(".")[0])
        break
    optimizer.step()
    print(f"iteration {i}: loss {loss.item():.4f}")

h = torch.zeros(3)
for i in range(4):
    h = h.detach()                 # cut the history before building on it
    h = torch.tanh(W_xh @ xs[i] + W_hh @ h)
    loss = ((h - targets[i]) ** 2).sum()
    optimizer.zero_grad()
    loss.backward()
    optimizer.step()
    print(f"detached, iteration {i}: loss {loss.item():.4f}")
